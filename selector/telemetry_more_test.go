package selector

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolselect/toolselect/internal/telemetry"
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
// transport failure; usage is recorded only when the server reported it.
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
			if c.reply.PromptTokens == 0 {
				_, has := attrs(s)["gen_ai.usage.input_tokens"]
				assert.False(t, has && c.reply.CompletionTokens == 0, "no usage written as 0")
			}
		})
	}
}

// A request that failed before any reply (HTTP 503) writes no usage: 0 would
// claim the server reported none used.
func TestNoUsageOnFailedRequest(t *testing.T) {
	rec, _ := telemetrytest.Install(t)
	sel := newSel(t, &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){
		"primary":  failing(&ChatError{Kind: KindHTTPStatus, StatusCode: 503, Message: "HTTP 503: overloaded"}),
		"fallback": content(validReply),
	}}, cfgWith(nil))
	_, err := sel.Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	p := spansNamed(rec, "chat primary")
	require.Len(t, p, 1)
	a := attrs(p[0])
	assert.Equal(t, "http_status", a["error.type"].AsString())
	for _, k := range []attribute.Key{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
		_, has := a[k]
		assert.False(t, has, "%s on a failed request", k)
	}
	f := spansNamed(rec, "chat fallback")
	require.Len(t, f, 1)
	assert.Equal(t, int64(10), attrs(f[0])["gen_ai.usage.input_tokens"].AsInt64())
	assert.Equal(t, codes.Unset, f[0].Status().Code)
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

// With content capture on, the request and the reply are recorded in the
// GenAI conventions' message structure, and failures say why in full (the
// API key still removed).
func TestContentCaptureFollowsTheConventions(t *testing.T) {
	defer telemetry.SetCaptureContent(true)()
	rec, _ := telemetrytest.Install(t)
	sel := newSel(t, &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){
		"primary": func(ChatRequest) (ChatResponse, error) {
			return ChatResponse{Content: `not json sk-KEY-123`, FinishReason: "stop", PromptTokens: 3, CompletionTokens: 2}, nil
		},
		"fallback": func(ChatRequest) (ChatResponse, error) {
			return ChatResponse{Content: validReply, Reasoning: "weather first", FinishReason: "stop", PromptTokens: 3, CompletionTokens: 2}, nil
		},
	}}, cfgWith(func(c *Config) { c.APIKey = "sk-KEY-123" }))
	_, err := sel.Select(context.Background(), testRequest(t))
	require.NoError(t, err)

	primary := spansNamed(rec, "chat primary")
	require.Len(t, primary, 1)
	assert.Contains(t, primary[0].Status().Description, "not json", "the parse failure in full")
	assert.NotContains(t, primary[0].Status().Description, "sk-KEY-123")

	f := spansNamed(rec, "chat fallback")
	require.Len(t, f, 1)
	a := attrs(f[0])
	var in []struct {
		Role  string           `json:"role"`
		Parts []map[string]any `json:"parts"`
	}
	require.NoError(t, json.Unmarshal([]byte(a["gen_ai.input.messages"].AsString()), &in))
	require.Len(t, in, 2)
	assert.Equal(t, "system", in[0].Role)
	assert.Equal(t, "user", in[1].Role)
	assert.Equal(t, "text", in[1].Parts[0]["type"])
	assert.Contains(t, in[1].Parts[0]["content"], "Find the weather in Paris")

	var out []struct {
		Role         string           `json:"role"`
		Parts        []map[string]any `json:"parts"`
		FinishReason string           `json:"finish_reason"`
	}
	require.NoError(t, json.Unmarshal([]byte(a["gen_ai.output.messages"].AsString()), &out))
	require.Len(t, out, 1)
	assert.Equal(t, "assistant", out[0].Role)
	assert.Equal(t, "stop", out[0].FinishReason)
	require.Len(t, out[0].Parts, 2)
	assert.Equal(t, map[string]any{"type": "reasoning", "content": "weather first"}, out[0].Parts[0])
	assert.Equal(t, "text", out[0].Parts[1]["type"])
	assert.Equal(t, validReply, out[0].Parts[1]["content"])
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			assert.NotContains(t, kv.Value.Emit(), "sk-KEY-123")
		}
	}
}

// Native tool calls and a tool turn in the conventions' parts.
func TestMessagePartsOfNativeCalls(t *testing.T) {
	in := inputMessages([]Message{
		{Role: "assistant", ReasoningContent: "r", ToolCalls: []NativeCall{{ID: "c1", Name: "search_tools", Arguments: `{"query":"x"}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "found"},
	}, "")
	assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"reasoning","content":"r"},{"type":"tool_call","id":"c1","name":"search_tools","arguments":{"query":"x"}}]},
		{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"found"}]}]`, in)
	out := outputMessages(ChatResponse{ToolCalls: []NativeCall{{Name: "f", Arguments: "not json"}}, FinishReason: "tool_calls"}, "")
	assert.JSONEq(t, `[{"role":"assistant","finish_reason":"tool_call","parts":[{"type":"tool_call","name":"f","arguments":"not json"}]}]`, out)
}

// gen_ai.provider.name takes the conventions' well-known value where one
// applies; toolselect.dialect keeps the dialect's own name.
func TestGenAIProviderName(t *testing.T) {
	for _, c := range []struct {
		provider Provider
		host     string
		want     string
	}{
		{ProviderOpenAI, "api.openai.com", "openai"},
		{ProviderOpenAI, "myres.openai.azure.com", "azure.ai.openai"},
		{ProviderMistral, "api.mistral.ai", "mistral_ai"},
		{ProviderDeepSeek, "api.deepseek.com", "deepseek"},
		{ProviderGeneric, "127.0.0.1", "openai"},
		{ProviderZAI, "api.z.ai", "zai"},
		{ProviderOllama, "localhost", "ollama"},
		{ProviderAnthropic, "api.anthropic.com", "anthropic"},
	} {
		assert.Equal(t, c.want, genAIProvider(c.provider, c.host), "%s at %s", c.provider, c.host)
	}

	rec, _ := telemetrytest.Install(t)
	sel := newSel(t, &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"mistral-small-latest": content(validReply)}},
		cfgWith(func(c *Config) {
			c.Model, c.FallbackModel, c.BaseURL = "mistral-small-latest", "", "https://api.mistral.ai/v1"
		}))
	_, err := sel.Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	s := spansNamed(rec, "chat mistral-small-latest")
	require.Len(t, s, 1)
	a := attrs(s[0])
	assert.Equal(t, "mistral_ai", a["gen_ai.provider.name"].AsString())
	assert.Equal(t, "mistral", a["toolselect.dialect"].AsString())
	assert.Equal(t, "api.mistral.ai", a["server.address"].AsString())
	assert.Equal(t, int64(443), a["server.port"].AsInt64())
}

// toolselect.offer.tokens is recorded exactly when Config.Ranker counts
// tokens (rank.Offering does): the selector has no tokenizer of its own.
func TestOfferTokensOnlyFromTheRanker(t *testing.T) {
	rec, _ := telemetrytest.Install(t)
	client := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(validReply)}}

	_, err := newSel(t, client, cfgWith(nil)).Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	s := spansNamed(rec, "toolselect.select")
	require.Len(t, s, 1)
	_, has := attrs(s[0])["toolselect.offer.tokens"]
	assert.False(t, has, "no Ranker, no token count")
	assert.Equal(t, int64(4), attrs(s[0])["toolselect.offer.size"].AsInt64())

	rec.Reset()
	_, err = newSel(t, client, cfgWith(nil), withRanker(countingRanker{})).Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	s = spansNamed(rec, "toolselect.select")
	require.Len(t, s, 1)
	assert.Equal(t, int64(4*7), attrs(s[0])["toolselect.offer.tokens"].AsInt64())
}

// countingRanker fits everything and counts 7 tokens a tool.
type countingRanker struct{}

func (countingRanker) Rank(_ context.Context, _ *registry.Registry, _ string, eligible []*registry.Entry, _ int) ([]*registry.Entry, error) {
	return eligible, nil
}
func (countingRanker) Fits([]*registry.Entry, registry.Format, int) (bool, error) { return true, nil }
func (countingRanker) Tokens(entries []*registry.Entry, _ registry.Format) (int, error) {
	return 7 * len(entries), nil
}
