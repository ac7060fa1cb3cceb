package mcpproxy

import (
	"context"
	"fmt"
	"github.com/toolselect/toolselect/rank"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolselect/toolselect/internal/testing/telemetrytest"
)

// /metrics after a few calls, parsed with the Prometheus text parser.
func TestMetricsEndpoint(t *testing.T) {
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}, Keep: []string{"t__count"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan net.Addr, 1)
	go func() { _ = p.ListenAndServe(ctx, "127.0.0.1:0", nil, func(a net.Addr) { addr <- a }) }()
	base := "http://" + (<-addr).String()
	cs := connectMemory(t, p, "")
	find(t, cs, "sleep milliseconds", 2)
	call(t, cs, rank.CallToolName, map[string]any{"name": "t__sleep", "arguments": map[string]any{"ms": 1}})
	call(t, cs, rank.CallToolName, map[string]any{"name": "t__sleep", "arguments": map[string]any{"ms": -1}})
	call(t, cs, rank.CallToolName, map[string]any{"name": "no such tool", "arguments": map[string]any{}})

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("not the Prometheus text format: %v", err)
	}
	value := func(name string, labels map[string]string) (float64, bool) {
		f := fams[name]
		if f == nil {
			return 0, false
		}
	next:
		for _, m := range f.Metric {
			have := map[string]string{}
			for _, lp := range m.Label {
				have[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), true
			}
		}
		return 0, false
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"toolselect_mcp_tool_calls_total", map[string]string{"tool": "t__sleep", "outcome": "ok"}, 1},
		{"toolselect_mcp_tool_calls_total", map[string]string{"tool": "t__sleep", "outcome": "invalid"}, 1},
		{"toolselect_mcp_tool_calls_total", map[string]string{"tool": "(unknown)"}, 1},
		{"toolselect_mcp_find_tool_duration_seconds", nil, 1},
		{"toolselect_mcp_call_tool_duration_seconds", map[string]string{"outcome": "ok"}, 1},
		{"toolselect_mcp_upstream_up", map[string]string{"upstream": "t", "state": "ready"}, 1},
		{"toolselect_mcp_upstream_connects_total", map[string]string{"upstream": "t"}, 1},
		{"toolselect_mcp_tools", map[string]string{"kind": "catalog"}, float64(p.Stats(context.Background()).Tools.Catalog)},
	} {
		got, ok := value(c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if v, ok := value("toolselect_mcp_tokens_saved_ratio", nil); !ok || v <= 0 || v >= 1 {
		t.Errorf("tokens saved ratio = %v (present %v)", v, ok)
	}
}

// A client's trace context in params._meta is continued by the proxy's
// server span, and the call relayed upstream is a client span under it.
func TestTraceContextFromMeta(t *testing.T) {
	rec, _ := telemetrytest.Install(t)

	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}, Keep: []string{"t__sleep"}})
	cs := connectMemory(t, p, "")
	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	parentID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	params := &mcp.CallToolParams{Name: "t__sleep", Arguments: map[string]any{"ms": 1}}
	params.SetMeta(map[string]any{"traceparent": fmt.Sprintf("00-%s-%s-01", traceID, parentID)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	var server, client sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch {
		case s.Name() == "tools/call t__sleep" && s.SpanKind() == trace.SpanKindServer:
			server = s
		case s.Name() == "tools/call sleep" && s.SpanKind() == trace.SpanKindClient: // the upstream's own name
			client = s
		}
	}
	if server == nil || client == nil {
		var names []string
		for _, s := range rec.Ended() {
			names = append(names, fmt.Sprintf("%s(%s)", s.Name(), s.SpanKind()))
		}
		t.Fatalf("want a server and a client span, got %v", names)
	}
	if server.SpanContext().TraceID() != traceID || server.Parent().SpanID() != parentID {
		t.Errorf("server span %s under %s, want trace %s under %s", server.SpanContext().TraceID(), server.Parent().SpanID(), traceID, parentID)
	}
	if client.SpanContext().TraceID() != traceID {
		t.Errorf("the upstream call left the trace")
	}
	attrs := map[string]string{}
	for _, kv := range server.Attributes() {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if attrs["mcp.method.name"] != "tools/call" || attrs["gen_ai.tool.name"] != "t__sleep" {
		t.Errorf("server span attributes %v", attrs)
	}
}
