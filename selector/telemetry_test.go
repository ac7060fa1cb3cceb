package selector

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolselect/toolselect/internal/testing/telemetrytest"
)

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestSelectionSpans(t *testing.T) {
	rec, reader := telemetrytest.Install(t)
	learned.Clear()
	ws := newWire(t, func(w http.ResponseWriter, _ *http.Request, body []byte) {
		if modelOf(body) == "primary" {
			writeJSON(w, 503, map[string]any{"error": map[string]any{"message": "overloaded"}})
			return
		}
		completion(w, validReply)
	})
	sel := wireSelector(t, ws, nil)
	parentCtx, parent := otel.Tracer("test").Start(context.Background(), "caller")
	res, err := sel.Select(parentCtx, testRequest(t))
	parent.End()
	require.NoError(t, err)
	require.Len(t, res.Calls, 2)

	spans := rec.Ended()
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[s.Name()] = s
	}
	sel1, ok := byName["toolselect.select"]
	require.True(t, ok, "a selection span")
	assert.Equal(t, parent.SpanContext().SpanID(), sel1.Parent().SpanID(), "the caller's context is continued")
	a := attrs(sel1)
	assert.Equal(t, "ok", a["toolselect.outcome"].AsString())
	assert.Equal(t, int64(2), a["toolselect.calls.kept"].AsInt64())
	assert.Equal(t, int64(2), a["toolselect.attempts"].AsInt64())
	assert.Equal(t, int64(len(res.Offered)), a["toolselect.offer.size"].AsInt64())

	primary, fallback := byName["chat primary"], byName["chat fallback"]
	require.NotNil(t, primary)
	require.NotNil(t, fallback)
	for _, c := range []sdktrace.ReadOnlySpan{primary, fallback} {
		assert.Equal(t, sel1.SpanContext().SpanID(), c.Parent().SpanID(), "model requests are children of the selection")
		ca := attrs(c)
		assert.Equal(t, "chat", ca["gen_ai.operation.name"].AsString())
		assert.Equal(t, "127.0.0.1", ca["server.address"].AsString())
	}
	assert.Equal(t, "primary", attrs(primary)["gen_ai.request.model"].AsString())
	assert.Equal(t, "http_status", attrs(primary)["error.type"].AsString())
	assert.Equal(t, int64(120), attrs(fallback)["gen_ai.usage.input_tokens"].AsInt64())
	assert.Equal(t, []string{"stop"}, attrs(fallback)["gen_ai.response.finish_reasons"].AsStringSlice())

	// No prompt, reply or key unless content capture is asked for.
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			v := kv.Value.Emit()
			assert.NotContains(t, v, "sk-test-SECRET", "%s %s", s.Name(), kv.Key)
			assert.NotContains(t, v, "Find the weather in Paris", "%s %s", s.Name(), kv.Key)
			assert.NotContains(t, v, "need the weather", "%s %s", s.Name(), kv.Key)
		}
		assert.False(t, strings.Contains(s.Status().Description, "SECRET"))
	}

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "toolselect.selections" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if v, _ := dp.Attributes.Value("toolselect.outcome"); v.AsString() == "ok" && dp.Value >= 1 {
					found = true
				}
			}
		}
	}
	assert.True(t, found, "selections are counted by outcome")
}

func TestSelectionSpanOnFailClosed(t *testing.T) {
	rec, _ := telemetrytest.Install(t)
	learned.Clear()
	ws := newWire(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { completion(w, "not json") })
	sel := wireSelector(t, ws, nil)
	_, err := sel.Select(context.Background(), testRequest(t))
	require.Error(t, err)
	for _, s := range rec.Ended() {
		if s.Name() == "toolselect.select" {
			assert.Equal(t, "fail_closed", attrs(s)["toolselect.outcome"].AsString())
			assert.Equal(t, "fail_closed", attrs(s)["error.type"].AsString())
			return
		}
	}
	require.FailNow(t, "no selection span")
}
