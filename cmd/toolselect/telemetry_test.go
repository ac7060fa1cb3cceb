package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// The whole process: `toolselect select` against a loopback model server,
// with the standard OTEL_* environment pointing at a loopback OTLP/HTTP
// receiver this test starts, exports the selection's spans.
func TestSelectExportsSpansOverOTLP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "toolselect")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	var mu sync.Mutex
	var names []string
	var attrs []string
	otlp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" {
			w.WriteHeader(http.StatusOK) // metrics and the rest are accepted and ignored
			return
		}
		b, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		require.NoError(t, proto.Unmarshal(b, &req))
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
					for _, kv := range s.Attributes {
						attrs = append(attrs, kv.Key+"="+kv.Value.String())
					}
				}
			}
			for _, kv := range rs.Resource.Attributes {
				attrs = append(attrs, "resource."+kv.Key+"="+kv.Value.String())
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer otlp.Close()
	model := newChatServer(t, func(string) chatReply {
		return chatReply{content: `{"calls":[{"tool":"get_metrics","args":{"service":"checkout-api","metric":"error_rate"}}]}`}
	})
	cmd := exec.Command(bin, "select", "--catalog", exampleCatalog(t), "--task", "Investigate the checkout error alert", "--json")
	cmd.Env = append(os.Environ(),
		"LLM_COMMON_TOOL_SELECTION_BASE_URL="+model.URL+"/v1", "LLM_COMMON_TOOL_SELECTION_API_KEY="+testKey,
		"OTEL_EXPORTER_OTLP_ENDPOINT="+otlp.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_SERVICE_NAME=selector-under-test", "OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=none")
	res, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", res)
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, names, "toolselect.select")
	assert.Contains(t, names, "chat glm-4.5-air")
	joined := strings.Join(attrs, "\n")
	assert.Contains(t, joined, "resource.service.name=string_value:\"selector-under-test\"")
	assert.Contains(t, joined, "gen_ai.request.model")
	assert.NotContains(t, joined, testKey, "never an API key")
	assert.NotContains(t, joined, "Investigate the checkout", "no prompt content unless asked for")

	// An OTEL_* setting toolselect cannot use is a warning that turns its
	// signal off, never the failure of a command that does not trace.
	for _, bad := range [][]string{
		{"OTEL_TRACES_EXPORTER=otlp,zipkin", `OTEL_TRACES_EXPORTER="otlp,zipkin": zipkin not supported`},
		{"OTEL_TRACES_EXPORTER=bogus", `OTEL_TRACES_EXPORTER="bogus": bogus not supported`},
		{"OTEL_EXPORTER_OTLP_PROTOCOL=http/json", "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"},
	} {
		cmd := exec.Command(bin, "version")
		cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+otlp.URL, bad[0])
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "%s: %s", bad[0], stderr.String())
		assert.NotEmpty(t, stdout.String(), bad[0])
		assert.Contains(t, stderr.String(), "toolselect: warning: telemetry: "+bad[1])
	}
}
