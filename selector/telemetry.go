package selector

import (
	"context"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolselect/toolselect/internal/telemetry"
	"github.com/toolselect/toolselect/registry"
)

// A selection is traced through the global OpenTelemetry providers
// (docs/observability.md): one "toolselect.select" span from Begin to the
// outcome, with a GenAI client span "chat MODEL" per model request under it.
// Both drivers get them, since the Session makes them. Every selection is
// counted and timed by outcome kind, the ones refused before a Session
// exists (no_client, bad_request) and the ones whose ranking failed
// (prefilter) included. No prompt, reply, argument or error message that
// quotes them is recorded (attributes or status descriptions) unless
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, and the API key
// never is.

// tokenCounter is what a Ranker may offer to count the offer's tokens for a
// trace (rank.Offering does). The selector has no tokenizer of its own: it
// must not import rank (tests/layers), and linking a vocabulary would add
// megabytes to every program that selects; so toolselect.offer.tokens is
// recorded exactly when [Config.Ranker] has this method.
type tokenCounter interface {
	Tokens(entries []*registry.Entry, f registry.Format) (int, error)
}

// selectionInstruments are the selection metrics.
type selectionInstruments struct {
	count    metric.Int64Counter
	duration metric.Float64Histogram
}

// durationBuckets are the histogram boundaries (seconds) the GenAI
// conventions advise for gen_ai.client.operation.duration: a selection is
// one or more such operations. The SDK's default boundaries (0, 5, 10, ...,
// 10000) would put every selection under 5 s in one bucket.
var durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

var selectionCache telemetry.InstrumentCache[selectionInstruments]

func selectionMetrics() selectionInstruments {
	return telemetry.Instruments(&selectionCache, func(meter metric.Meter) (m selectionInstruments) {
		m.count, _ = meter.Int64Counter("toolselect.selections", metric.WithUnit("{selection}"),
			metric.WithDescription("Tool selections by outcome kind"))
		m.duration, _ = meter.Float64Histogram("toolselect.selection.duration", metric.WithUnit("s"),
			metric.WithDescription("Tool selection latency by outcome kind, from Begin to the outcome"),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		return m
	})
}

// clientKind is the model request span's kind, made once.
var clientKind = trace.WithSpanKind(trace.SpanKindClient)

// outcomeSets caches the metric attribute option of each outcome, so a
// selection records its metrics without allocating.
var outcomeSets sync.Map // string -> metric.MeasurementOption

func outcomeSet(outcome string) metric.MeasurementOption {
	if v, ok := outcomeSets.Load(outcome); ok {
		return v.(metric.MeasurementOption)
	}
	v, _ := outcomeSets.LoadOrStore(outcome, metric.WithAttributeSet(attribute.NewSet(telemetry.Outcome.String(outcome))))
	return v.(metric.MeasurementOption)
}

// countSelection counts one selection and records its latency.
func countSelection(ctx context.Context, outcome string, d time.Duration) {
	m := selectionMetrics()
	set := outcomeSet(outcome)
	m.count.Add(ctx, 1, set)
	m.duration.Record(ctx, d.Seconds(), set)
}

// statusDescription is a failed span's status description: the kind, or
// with content capture on the error's own message (which may quote
// arguments or the reply), the API key removed.
func statusDescription(kind string, err error, apiKey string) string {
	if err != nil && telemetry.CaptureContent() {
		return truncate(redact(err.Error(), apiKey), 256)
	}
	return kind
}

// rejected records a selection refused before a Session exists
// (ErrNoClient, ErrBadRequest): a selection span with its outcome kind, and
// the metrics, like every other selection. It returns err.
func (s *ToolSelector) rejected(ctx context.Context, began time.Time, err error) error {
	s.traceRejected(ctx, began, err)
	return err
}

func (s *ToolSelector) traceRejected(ctx context.Context, began time.Time, err error) {
	outcome := ErrorKind(err)
	countSelection(ctx, outcome, s.now().Sub(began))
	_, span := telemetry.Tracer().Start(ctx, "toolselect.select")
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(attribute.String("toolselect.mode", string(s.cfg.Mode)), telemetry.Outcome.String(outcome),
			telemetry.ErrorType.String(outcome))
		span.SetStatus(codes.Error, statusDescription(outcome, err, s.cfg.APIKey))
	}
}

// traceBegin starts the selection span; it returns the context under it.
func (ss *Session) traceBegin(ctx context.Context, registered int) context.Context {
	ss.began = ss.now()
	ctx, ss.span = telemetry.Tracer().Start(ctx, "toolselect.select")
	if ss.span.IsRecording() { // attributes cost allocations: only for a span that keeps them
		ss.span.SetAttributes(telemetry.RegisteredSize.Int(registered), attribute.String("toolselect.mode", string(ss.cfg.Mode)))
	}
	return ctx
}

// traceOffer records the first offer on the selection span.
func (ss *Session) traceOffer(ranker Ranker, entries []*registry.Entry) {
	if !ss.span.IsRecording() {
		return
	}
	ss.span.SetAttributes(telemetry.OfferSize.Int(len(entries)), telemetry.OfferRanked.Bool(ss.subset))
	if tc, ok := ranker.(tokenCounter); ok {
		if n, err := tc.Tokens(entries, viewFormat(ss.cfg.Mode)); err == nil {
			ss.span.SetAttributes(telemetry.OfferTokens.Int(n))
		}
	}
}

// traceChat starts the client span of the pending request (ending one left
// open by the previous request, whose outcome was not a failure). The GenAI
// attributes a sampler may use are given when the span is created, as the
// conventions ask; they are built only when the selection span records.
func (ss *Session) traceChat(req *ChatRequest) {
	if ss.chatSpan != nil {
		ss.chatSpan.End()
		ss.chatSpan = nil
	}
	if !ss.span.IsRecording() {
		_, ss.chatSpan = telemetry.Tracer().Start(ss.ctx, "chat", clientKind)
		if ss.chatSpan.IsRecording() { // sampled although its parent was not
			ss.chatSpan.SetName("chat " + req.Model)
			ss.chatSpan.SetAttributes(ss.chatAttributes(req)...)
		}
		return
	}
	_, ss.chatSpan = telemetry.Tracer().Start(ss.ctx, "chat "+req.Model, clientKind, trace.WithAttributes(ss.chatAttributes(req)...))
}

// chatAttributes are a request span's attributes.
func (ss *Session) chatAttributes(req *ChatRequest) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		telemetry.GenAIOperationName.String("chat"),
		telemetry.GenAIRequestModel.String(req.Model),
		telemetry.Dialect.String(ss.att.dialect.name),
	}
	host := ""
	if u, err := url.Parse(ss.cfg.BaseURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
		attrs = append(attrs, telemetry.ServerAddress.String(host))
		if port := serverPort(u); port > 0 {
			attrs = append(attrs, telemetry.ServerPort.Int(port))
		}
	}
	attrs = append(attrs, telemetry.GenAIProviderName.String(genAIProvider(ss.att.dialect.provider(), host)))
	if len(ss.att.adapted) > 0 {
		attrs = append(attrs, telemetry.Adapted.StringSlice(ss.att.adapted))
	}
	if telemetry.CaptureContent() {
		attrs = append(attrs, telemetry.GenAIInputMessages.String(redact(inputMessages(req.Messages, ss.cfg.APIKey), ss.cfg.APIKey)))
	}
	return attrs
}

// serverPort is the URL's port, or its scheme's default.
func serverPort(u *url.URL) int {
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	switch u.Scheme {
	case "https":
		return 443
	case "http":
		return 80
	}
	return 0
}

// genAIProvider is gen_ai.provider.name for a dialect's provider: the GenAI
// conventions' well-known value where one applies (they MUST be used:
// "openai", "deepseek", "mistral_ai", "azure.ai.openai", "gcp.gemini",
// "anthropic"), else the
// provider's own name. A server of unknown provider is spoken to through the
// OpenAI chat API, and the conventions name "openai" the flavour of that
// API, with server.address and the model telling the actual system apart.
func genAIProvider(p Provider, host string) string {
	switch p {
	case ProviderOpenAI:
		if detectProvider("https://"+host, "") == ProviderAzure {
			return "azure.ai.openai"
		}
		return "openai"
	case ProviderGemini:
		return "gcp.gemini"
	case ProviderMistral:
		return "mistral_ai"
	case ProviderGeneric, "":
		return "openai"
	}
	return string(p)
}

// traceFed records the pending request's usage and finish reason. A request
// that failed (transport, status, ...) ends its span here with the failure
// kind; one that was answered stays open until the answer's fate is known
// (traceAttempt: a reply that did not parse or validate fails its attempt),
// or the next request or the outcome ends it.
func (ss *Session) traceFed(resp ChatResponse, err error) {
	s := ss.chatSpan
	if s == nil {
		return
	}
	if !s.IsRecording() {
		if err != nil {
			s.End()
			ss.chatSpan = nil
		}
		return
	}
	if resp.PromptTokens > 0 || resp.CompletionTokens > 0 { // 0 and 0: no usage reported (a failed request)
		s.SetAttributes(telemetry.GenAIUsageInputTokens.Int(resp.PromptTokens), telemetry.GenAIUsageOutputTokens.Int(resp.CompletionTokens))
	}
	if resp.FinishReason != "" {
		s.SetAttributes(telemetry.GenAIResponseFinish.StringSlice([]string{resp.FinishReason}))
	}
	if err != nil {
		kind, _ := classify(err)
		s.SetAttributes(telemetry.ErrorType.String(string(kind)))
		s.SetStatus(codes.Error, statusDescription(string(kind), err, ss.cfg.APIKey))
		s.End()
		ss.chatSpan = nil
		return
	}
	if telemetry.CaptureContent() {
		s.SetAttributes(telemetry.GenAIOutputMessages.String(redact(outputMessages(resp, ss.cfg.APIKey), ss.cfg.APIKey)))
	}
}

// traceAttempt ends the span of the attempt's last request, when it is
// still open, with the attempt's failure kind (parse, validation,
// truncated, search, ...) as error.type.
func (ss *Session) traceAttempt(a Attempt) {
	s := ss.chatSpan
	if s == nil {
		return
	}
	ss.chatSpan = nil
	defer s.End()
	if len(a.Repaired) > 0 && s.IsRecording() {
		s.SetAttributes(telemetry.Repaired.StringSlice(a.Repaired))
	}
	if a.OK || !s.IsRecording() {
		return
	}
	s.SetAttributes(telemetry.ErrorType.String(string(a.Kind)))
	desc := string(a.Kind)
	if telemetry.CaptureContent() && a.Message != "" {
		desc = truncate(a.Message, 256) // already redacted by record
	}
	s.SetStatus(codes.Error, desc)
}

// traceFinish ends the selection span and records the selection's metrics.
func (ss *Session) traceFinish(r *Result, err error) {
	if ss.chatSpan != nil {
		ss.chatSpan.End()
		ss.chatSpan = nil
	}
	outcome := "ok"
	if err != nil {
		outcome = ErrorKind(err)
	} else if len(r.Calls) == 0 {
		outcome = "no_calls"
	}
	countSelection(ss.ctx, outcome, ss.now().Sub(ss.began))
	if ss.span == nil {
		return
	}
	defer ss.span.End()
	if !ss.span.IsRecording() {
		return
	}
	searches := 0
	for _, a := range r.Attempts {
		searches += len(a.Searches)
	}
	reasons := map[string]bool{}
	for _, d := range r.Dropped {
		reasons[string(d.Reason)] = true
	}
	dropped := make([]string, 0, len(reasons))
	for k := range reasons {
		dropped = append(dropped, k)
	}
	sort.Strings(dropped)
	ss.span.SetAttributes(telemetry.Outcome.String(outcome), telemetry.Attempts.Int(len(r.Attempts)),
		telemetry.Searches.Int(searches), telemetry.CallsKept.Int(len(r.Calls)),
		telemetry.CallsDropped.Int(len(r.Dropped)), telemetry.DropReasons.StringSlice(dropped))
	if err != nil {
		ss.span.SetAttributes(telemetry.ErrorType.String(outcome))
		ss.span.SetStatus(codes.Error, statusDescription(outcome, err, ss.cfg.APIKey))
	}
}

// traceAbort ends the selection span of a Begin that returned an error (the
// ranking or the prompts failed) and counts the selection.
func (ss *Session) traceAbort(err error) {
	outcome := ErrorKind(err)
	countSelection(ss.ctx, outcome, ss.now().Sub(ss.began))
	defer ss.span.End()
	if !ss.span.IsRecording() {
		return
	}
	ss.span.SetAttributes(telemetry.Outcome.String(outcome), telemetry.ErrorType.String(outcome))
	ss.span.SetStatus(codes.Error, statusDescription(outcome, err, ss.cfg.APIKey))
}

// chatContext is ctx carrying the pending request's span, for the client.
func (ss *Session) chatContext(ctx context.Context) context.Context {
	if ss.chatSpan == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, ss.chatSpan)
}

// provider is the dialect's provider family, for gen_ai.provider.name.
func (d dialect) provider() Provider {
	if strings.HasPrefix(d.name, "openai") {
		return ProviderOpenAI
	}
	return Provider(d.name)
}

// maxContentBytes bounds each message content recorded with content capture
// on; the messages' JSON structure is kept (the conventions allow
// truncating contents, not the document).
const maxContentBytes = 16 << 10

// inputMessages is gen_ai.input.messages: the request's messages in the
// GenAI conventions' input messages schema ({"role","parts":[...]}, parts
// of type text, reasoning, tool_call and tool_call_response), as JSON.
func inputMessages(msgs []Message, apiKey string) string {
	out := make([]map[string]any, 0, len(msgs))
	for _, m := range msgs {
		var parts []map[string]any
		if m.ReasoningContent != "" {
			parts = append(parts, map[string]any{"type": "reasoning", "content": recorded(m.ReasoningContent, apiKey)})
		}
		switch {
		case m.Role == "tool":
			parts = append(parts, map[string]any{"type": "tool_call_response", "id": m.ToolCallID, "response": recorded(m.Content, apiKey)})
		case m.Content != "" || len(m.ToolCalls) == 0:
			parts = append(parts, map[string]any{"type": "text", "content": recorded(m.Content, apiKey)})
		}
		parts = append(parts, toolCallParts(m.ToolCalls, apiKey)...)
		out = append(out, map[string]any{"role": m.Role, "parts": parts})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// outputMessages is gen_ai.output.messages: the reply as the conventions'
// output messages schema (one assistant message: reasoning, text and
// tool_call parts, and its finish_reason), as JSON.
func outputMessages(resp ChatResponse, apiKey string) string {
	var parts []map[string]any
	if resp.Reasoning != "" {
		parts = append(parts, map[string]any{"type": "reasoning", "content": recorded(resp.Reasoning, apiKey)})
	}
	if resp.Content != "" || len(resp.ToolCalls) == 0 {
		parts = append(parts, map[string]any{"type": "text", "content": recorded(resp.Content, apiKey)})
	}
	parts = append(parts, toolCallParts(resp.ToolCalls, apiKey)...)
	finish := resp.FinishReason
	if finish == "tool_calls" || finish == "function_call" { // OpenAI's names for the schema's tool_call
		finish = "tool_call"
	}
	b, _ := json.Marshal([]map[string]any{{"role": "assistant", "parts": parts, "finish_reason": finish}})
	return string(b)
}

// toolCallParts are native calls as tool_call parts, arguments as the
// object they encode (a string when they do not parse).
func toolCallParts(calls []NativeCall, apiKey string) []map[string]any {
	var parts []map[string]any
	for _, c := range calls {
		p := map[string]any{"type": "tool_call", "name": c.Name}
		if c.ID != "" {
			p["id"] = c.ID
		}
		args := redact(c.Arguments, apiKey)
		if json.Valid([]byte(args)) {
			p["arguments"] = json.RawMessage(args)
		} else {
			p["arguments"] = recorded(args, apiKey)
		}
		parts = append(parts, p)
	}
	return parts
}

// recorded is one recorded content: the API key removed, then bounded.
func recorded(s, apiKey string) string { return truncate(redact(s, apiKey), maxContentBytes) }
