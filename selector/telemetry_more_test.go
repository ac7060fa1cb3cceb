package selector

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolselect/toolselect/internal/testing/telemetrytest"
	"github.com/toolselect/toolselect/registry"
)

// selectionCounts is toolselect.selections by outcome, and the duration
// histogram's count and bounds by outcome.
func selectionCounts(t *testing.T, reader *sdkmetric.ManualReader) (counts, durations map[string]int64, bounds []float64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	counts, durations = map[string]int64{}, map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case "toolselect.selections":
				assert.Equal(t, "{selection}", m.Unit)
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					v, _ := dp.Attributes.Value("toolselect.outcome")
					counts[v.AsString()] += dp.Value
				}
			case "toolselect.selection.duration":
				assert.Equal(t, "s", m.Unit)
				for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					v, _ := dp.Attributes.Value("toolselect.outcome")
					durations[v.AsString()] += int64(dp.Count)
					bounds = dp.Bounds
				}
			}
		}
	}
	return counts, durations, bounds
}

// spansNamed returns the ended spans with that name.
func spansNamed(rec *tracetest.SpanRecorder, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// Every selection is counted with its outcome kind and gets a span: the
// ones refused before a Session exists (no_client, bad_request) and the
// ones whose ranking failed (prefilter) too. The duration histogram has
// boundaries in seconds.
func TestEverySelectionIsCounted(t *testing.T) {
	rec, reader := telemetrytest.Install(t)
	ctx := context.Background()

	noClient := newSel(t, nil, cfgWith(nil))
	_, err := noClient.Select(ctx, testRequest(t))
	require.ErrorIs(t, err, ErrNoClient)

	sel := newSel(t, &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(validReply)}}, cfgWith(nil))
	_, err = sel.Select(ctx, Request{Task: Task{Description: "x"}})
	require.ErrorIs(t, err, ErrBadRequest)
	_, err = sel.Begin(ctx, Request{Registry: newTestRegistry(t)})
	require.ErrorIs(t, err, ErrBadRequest)

	failingRank := newSel(t, &fakeClient{}, cfgWith(nil), withPrefilter(func(context.Context, string, []*registry.Entry) ([]*registry.Entry, error) {
		return nil, errors.New("index down: PREFILTERSECRET")
	}))
	_, err = failingRank.Select(ctx, testRequest(t))
	require.Error(t, err)
	assert.Equal(t, "prefilter", ErrorKind(err))

	_, err = sel.Select(ctx, testRequest(t))
	require.NoError(t, err)

	counts, durations, bounds := selectionCounts(t, reader)
	want := map[string]int64{"no_client": 1, "bad_request": 2, "prefilter": 1, "ok": 1}
	assert.Equal(t, want, counts)
	assert.Equal(t, want, durations, "every counted selection is timed")
	assert.Equal(t, durationBuckets, bounds, "explicit boundaries in seconds, not the SDK's 0, 5, 10, ... 10000")
	assert.Equal(t, 0.01, bounds[0])

	byOutcome := map[string]int{}
	for _, s := range spansNamed(rec, "toolselect.select") {
		a := attrs(s)
		outcome := a["toolselect.outcome"].AsString()
		byOutcome[outcome]++
		if outcome == "ok" {
			assert.Equal(t, codes.Unset, s.Status().Code)
			continue
		}
		assert.Equal(t, outcome, a["error.type"].AsString())
		assert.Equal(t, codes.Error, s.Status().Code)
		assert.Equal(t, outcome, s.Status().Description, "the kind, no message, with content capture off")
	}
	assert.Equal(t, map[string]int{"no_client": 1, "bad_request": 2, "prefilter": 1, "ok": 1}, byOutcome)
}

// A model request whose reply failed its attempt (parse, validation,
// truncated) is a failed span with that kind as error.type, like a
// transport failure.
func TestFailedAttemptChatSpans(t *testing.T) {
	rec, _ := telemetrytest.Install(t)
	for _, c := range []struct {
		kind  string
		reply ChatResponse
	}{
		{"parse", ChatResponse{Content: `I think not json REPLYSECRET`, PromptTokens: 10, CompletionTokens: 5, FinishReason: "stop"}},
		{"validation", ChatResponse{Content: `{"calls":[{"tool":"lookup","args":{"city":"ARGSECRET-Paris"}}]}`, PromptTokens: 10, CompletionTokens: 5}},
		{"truncated", ChatResponse{Content: `{"calls":[{"tool":"look`, CompletionTokens: 64, FinishReason: "length"}},
	} {
		t.Run(c.kind, func(t *testing.T) {
			rec.Reset()
			reply := func(ChatRequest) (ChatResponse, error) { return c.reply, nil }
			sel := newSel(t, &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": reply}}, cfgWith(func(c *Config) { c.FallbackModel = "" }))
			res, err := sel.Select(context.Background(), patternRequest(t))
			require.Error(t, err)
			require.Len(t, res.Attempts, 1)
			require.Equal(t, FailureKind(c.kind), res.Attempts[0].Kind)
			chats := spansNamed(rec, "chat primary")
			require.Len(t, chats, 1)
			s := chats[0]
			assert.Equal(t, c.kind, attrs(s)["error.type"].AsString())
			assert.Equal(t, codes.Error, s.Status().Code)
			assert.Equal(t, c.kind, s.Status().Description)
		})
	}
}

// patternRequest asks for a task whose one tool takes a city matching a pattern.
func patternRequest(t *testing.T) Request {
	tools, _, err := registry.ParseCatalog([]byte(`[{"name":"lookup","description":"Look a city up.","parameters":{"type":"object",
		"properties":{"city":{"type":"string","pattern":"^[A-Z][a-z]+$"}},"required":["city"]}}]`))
	require.NoError(t, err)
	reg := registry.New(nil)
	require.NoError(t, reg.RegisterAll(tools))
	return Request{Task: Task{Description: "Look up TASKSECRET for me"}, Registry: reg}
}

// With content capture off (the default) no task, reply, argument or error
// message text reaches any span: attributes, events or status.
func TestNoContentInSpans(t *testing.T) {
	rec, _ := telemetrytest.Install(t)
	ctx := context.Background()
	replies := []ChatResponse{
		{Content: `I think not json REPLYSECRET`},
		{Content: `{"calls":[{"tool":"lookup","args":{"city":"ARGSECRET-Paris"}}]}`},
		{Content: `<think>THINKSECRET</think>`, Reasoning: "THINKSECRET"},
		{Content: `{"calls":[{"tool":"lookup","args":{"city":"Par`, FinishReason: "length"},
	}
	for _, r := range replies {
		sel := newSel(t, &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){
			"primary":  func(ChatRequest) (ChatResponse, error) { return r, nil },
			"fallback": failing(&ChatError{Kind: KindHTTPStatus, StatusCode: 400, Message: "HTTP 400: bad city ARGSECRET-Paris"}),
		}}, cfgWith(nil))
		_, err := sel.Select(ctx, patternRequest(t))
		require.Error(t, err)
	}
	pre := newSel(t, &fakeClient{}, cfgWith(nil), withPrefilter(func(context.Context, string, []*registry.Entry) ([]*registry.Entry, error) {
		return nil, errors.New("PREFILTERSECRET")
	}))
	_, err := pre.Select(ctx, patternRequest(t))
	require.Error(t, err)

	require.NotEmpty(t, rec.Ended())
	assertNoSecrets(t, rec.Ended(), "TASKSECRET", "REPLYSECRET", "ARGSECRET", "THINKSECRET", "PREFILTERSECRET", "Look up")
}

// assertNoSecrets fails when a span's name, attributes, events or status
// hold one of the secrets.
func assertNoSecrets(t *testing.T, spans []sdktrace.ReadOnlySpan, secrets ...string) {
	t.Helper()
	for _, s := range spans {
		texts := []string{"name: " + s.Name(), "status: " + s.Status().Description}
		for _, kv := range s.Attributes() {
			texts = append(texts, string(kv.Key)+"="+kv.Value.Emit())
		}
		for _, e := range s.Events() {
			texts = append(texts, "event "+e.Name)
			for _, kv := range e.Attributes {
				texts = append(texts, "event "+string(kv.Key)+"="+kv.Value.Emit())
			}
		}
		for _, text := range texts {
			for _, secret := range secrets {
				assert.NotContains(t, text, secret, "span %s", s.Name())
			}
		}
	}
}
