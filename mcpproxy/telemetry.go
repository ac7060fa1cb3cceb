package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolselect/toolselect/internal/telemetry"
)

// The proxy's telemetry (docs/observability.md), after the MCP semantic
// conventions (open-telemetry/semantic-conventions-genai, docs/gen-ai/mcp.md):
//   - an OpenTelemetry server span per MCP request it serves ("METHOD
//     [TARGET]", the target being the tool or prompt; mcp.method.name,
//     mcp.session.id, gen_ai.tool.name, gen_ai.prompt.name,
//     mcp.resource.uri), continuing the trace context a client put in
//     params._meta (traceparent, tracestate);
//   - a client span per request it relays upstream (tools/call,
//     resources/read, prompts/get, completion/complete, resources/subscribe
//     and unsubscribe), whose context replaces the caller's in the upstream
//     request's _meta;
//   - error.type: the JSON-RPC error code as a string, tool_error for a
//     tool result with isError, or the transport failure's type; status
//     descriptions without content unless content capture is on;
//   - Prometheus metrics at /metrics, behind the same authentication and
//     Host/Origin checks as /mcp.
// The proxy's own sessions (Stats counting its tools/list) are not traced.

// metaCarrier reads and writes trace context in an MCP _meta map.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	if v, ok := m[key].(string); ok {
		return v
	}
	return ""
}
func (m metaCarrier) Set(key, value string) { m[key] = value }
func (m metaCarrier) Keys() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// traceContext is the W3C trace-context propagator (whatever the global one
// is: _meta carries traceparent/tracestate as the MCP conventions say).
var traceContext = propagation.TraceContext{}

// target is what a request is about: the span name's target (a tool or a
// prompt, low-cardinality) and the resource URI (an attribute only, never
// in the name, as the conventions advise).
type target struct {
	tool, prompt, uri string
}

// targetOf reads the target of a request the proxy serves.
func targetOf(req mcp.Request) target {
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		if r.Params != nil {
			return target{tool: r.Params.Name}
		}
	case *mcp.GetPromptRequest:
		if r.Params != nil {
			return target{prompt: r.Params.Name}
		}
	case *mcp.CompleteRequest:
		if r.Params != nil && r.Params.Ref != nil && r.Params.Ref.Type == "ref/prompt" {
			return target{prompt: r.Params.Ref.Name}
		}
	case *mcp.ReadResourceRequest:
		if r.Params != nil {
			return target{uri: r.Params.URI}
		}
	case *mcp.SubscribeRequest:
		if r.Params != nil {
			return target{uri: r.Params.URI}
		}
	case *mcp.UnsubscribeRequest:
		if r.Params != nil {
			return target{uri: r.Params.URI}
		}
	}
	return target{}
}

// spanName is "{mcp.method.name} {target}", or the method alone.
func (t target) spanName(method string) string {
	switch {
	case t.tool != "":
		return method + " " + t.tool
	case t.prompt != "":
		return method + " " + t.prompt
	}
	return method
}

// attributes are the target's span attributes.
func (t target) attributes() []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if t.tool != "" {
		// "execute_tool" exactly when the span describes a tool call.
		attrs = append(attrs, telemetry.GenAIToolName.String(t.tool), telemetry.GenAIOperationName.String("execute_tool"))
	}
	if t.prompt != "" {
		attrs = append(attrs, telemetry.GenAIPromptName.String(t.prompt))
	}
	if t.uri != "" {
		attrs = append(attrs, telemetry.MCPResourceURI.String(t.uri))
	}
	return attrs
}

// untraced marks a session of the proxy's own (Stats's in-memory client):
// its requests get no server span, so a /metrics scrape creates none.
func (p *Proxy) untraced(s mcp.Session) bool {
	if s == nil {
		return false
	}
	_, ok := p.ownSessions.Load(s)
	return ok
}

// traceMiddleware opens the server span of every request the proxy serves.
func (p *Proxy) traceMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p.untraced(req.GetSession()) {
			return next(ctx, method, req)
		}
		if meta := metaOf(req); len(meta) > 0 {
			ctx = traceContext.Extract(ctx, metaCarrier(meta))
		}
		t := targetOf(req)
		ctx, span := telemetry.Tracer().Start(ctx, t.spanName(method), trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		if span.IsRecording() {
			span.SetAttributes(telemetry.MCPMethodName.String(method))
			span.SetAttributes(t.attributes()...)
			if s := req.GetSession(); s != nil && s.ID() != "" {
				span.SetAttributes(telemetry.MCPSessionID.String(s.ID()))
			}
		}
		res, err := next(ctx, method, req)
		switch {
		case err != nil:
			failJSONRPC(span, err)
		case isErrorResult(res):
			span.SetAttributes(telemetry.ErrorType.String("tool_error"))
			span.SetStatus(codes.Error, "tool result with isError")
		}
		return res, err
	}
}

// failJSONRPC marks a span whose request got a JSON-RPC error: error.type
// and rpc.response.status_code are the error code as a string (the MCP
// conventions' rule; _OTHER when the error carries no code), and the status
// description is the code's name from the JSON-RPC specification, or with
// content capture on the error's message (which may quote arguments).
func failJSONRPC(span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	var je *jsonrpc.Error
	code := int64(0)
	if errors.As(err, &je) {
		code = je.Code
	}
	if code == 0 {
		span.SetAttributes(telemetry.ErrorType.String("_OTHER"))
	} else {
		c := strconv.FormatInt(code, 10)
		span.SetAttributes(telemetry.ErrorType.String(c), telemetry.RPCResponseStatusCode.String(c))
	}
	span.SetStatus(codes.Error, errorDescription(code, err))
}

// errorDescription is a failed span's status description.
func errorDescription(code int64, err error) string {
	if telemetry.CaptureContent() {
		return err.Error()
	}
	switch code {
	case jsonrpc.CodeParseError:
		return "Parse error"
	case jsonrpc.CodeInvalidRequest:
		return "Invalid Request"
	case jsonrpc.CodeMethodNotFound:
		return "Method not found"
	case jsonrpc.CodeInvalidParams:
		return "Invalid params"
	case jsonrpc.CodeInternalError:
		return "Internal error"
	case 0:
		return "error"
	}
	return "JSON-RPC error " + strconv.FormatInt(code, 10)
}

// metaOf returns a request's params._meta (nil when it has no params: the
// SDK hands a nil *Params inside a non-nil interface).
func metaOf(req mcp.Request) map[string]any {
	params := req.GetParams()
	if params == nil {
		return nil
	}
	if v := reflect.ValueOf(params); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return params.GetMeta()
}

func isErrorResult(r mcp.Result) bool {
	c, ok := r.(*mcp.CallToolResult)
	return ok && c != nil && c.IsError
}

// callerMeta are the _meta keys of the caller's request that describe the
// caller's own session (SEP-2575's per-request fields) or its trace
// context: they are not passed upstream, where the proxy's session and span
// are what the upstream sees.
var callerMeta = []string{"traceparent", "tracestate", mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo,
	mcp.MetaKeyClientCapabilities, mcp.MetaKeyLogLevel}

// relayed is a request the proxy sends an upstream, for its client span.
type relayed struct {
	method string
	target
	params mcp.Params // its _meta gets the span's trace context
}

// clientSpanKey marks the context of a relayed request, so that the
// upstream connection can add the JSON-RPC id to its span (idConn).
type clientSpanKey struct{}

type clientSpan struct {
	span   trace.Span
	method string
}

// traceUpstream opens the client span of a request relayed to an upstream,
// named and attributed as the server span is, and sets the request's _meta:
// the caller's keys (a copy; not those of callerMeta) and the span's trace
// context. Without a recording span the caller's context (which the server
// span continued) is what goes upstream.
func traceUpstream(ctx context.Context, upstream string, r relayed) (context.Context, trace.Span) {
	ctx, span := telemetry.Tracer().Start(ctx, r.spanName(r.method), trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(telemetry.MCPMethodName.String(r.method), telemetry.Upstream.String(upstream))
		span.SetAttributes(r.attributes()...)
		ctx = context.WithValue(ctx, clientSpanKey{}, clientSpan{span, r.method})
	}
	if r.params != nil {
		meta := map[string]any{}
		for k, v := range r.params.GetMeta() {
			meta[k] = v
		}
		for _, k := range callerMeta {
			delete(meta, k)
		}
		traceContext.Inject(ctx, metaCarrier(meta))
		if len(meta) > 0 {
			r.params.SetMeta(meta)
		} else {
			r.params.SetMeta(nil)
		}
	}
	return ctx, span
}

// traceSession adds the upstream session's ID (a streamable HTTP session;
// stdio has none) to a client span.
func traceSession(span trace.Span, sess *mcp.ClientSession) {
	if span.IsRecording() && sess != nil && sess.ID() != "" {
		span.SetAttributes(telemetry.MCPSessionID.String(sess.ID()))
	}
}

// failUpstream marks a client span whose request failed: error.type is the
// upstream's JSON-RPC error code, "timeout", "canceled",
// "connection_closed" or the failure's Go type (semconv.ErrorType; _OTHER
// for an error of no named type), and the status description the same
// class, or with content capture on the error's message.
func failUpstream(ctx context.Context, span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) && je.Code != 0 {
		failJSONRPC(span, err)
		return
	}
	kind := ""
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		kind = "timeout"
	case errors.Is(err, context.Canceled):
		kind = "canceled"
	case connectionLost(err):
		kind = "connection_closed" // the upstream went away (a stdio server that exited: EOF)
	default:
		kind = semconv.ErrorType(err).Value.AsString()
		if strings.HasPrefix(kind, "*errors.") { // errors.New: a type that says nothing
			kind = "_OTHER"
		}
	}
	span.SetAttributes(telemetry.ErrorType.String(kind))
	desc := kind
	if telemetry.CaptureContent() {
		desc = err.Error()
	}
	span.SetStatus(codes.Error, desc)
}

// toolErrorUpstream marks a client span whose tools/call result has isError.
func toolErrorUpstream(span trace.Span) {
	span.SetAttributes(telemetry.ErrorType.String("tool_error"))
	span.SetStatus(codes.Error, "tool result with isError")
}

// idTransport adds the JSON-RPC id of each relayed request to its client
// span (jsonrpc.request.id), which the SDK does not expose otherwise. Only
// stdio upstreams are wrapped: the SDK's streamable HTTP connection relies
// on an unexported interface a wrapper cannot forward.
type idTransport struct{ mcp.Transport }

func (t idTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return idConn{c}, nil
}

type idConn struct{ mcp.Connection }

func (c idConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if cs, ok := ctx.Value(clientSpanKey{}).(clientSpan); ok && cs.method == req.Method {
			cs.span.SetAttributes(telemetry.JSONRPCRequestID.String(idString(req.ID)))
		}
	}
	return c.Connection.Write(ctx, msg)
}

// idString is a JSON-RPC id as the attribute's string.
func idString(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	default:
		return fmt.Sprint(v)
	}
}

// metrics are the proxy's Prometheus instruments, in a registry of its own.
type metrics struct {
	reg   *prometheus.Registry
	calls *prometheus.CounterVec
	find  prometheus.Histogram
	call  *prometheus.HistogramVec
	// http counts HTTP requests by route and status code; stateOps and
	// stateErrors the shared store's operations and their failures.
	http                  *prometheus.CounterVec
	stateOps, stateErrors *prometheus.CounterVec
	// feedback counts the selections sessions made, by what became of them.
	feedback *prometheus.CounterVec
}

func newMetrics(p *Proxy) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolselect_mcp_tool_calls_total",
		Help: "Tool calls served, by tool and outcome (ok, tool_error, timeout, refused, invalid, canceled)."}, []string{"tool", "outcome"})
	m.find = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "toolselect_mcp_find_tool_duration_seconds",
		Help: "find_tool latency.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)})
	m.call = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "toolselect_mcp_call_tool_duration_seconds",
		Help: "Tool call latency (call_tool and direct calls), by outcome.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"outcome"})
	m.http = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolselect_mcp_http_requests_total",
		Help: "HTTP requests answered, by route (mcp, metrics, healthz, readyz, oauth, other) and status code (401s and 429s are how an attack shows)."}, []string{"route", "code"})
	m.stateOps = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolselect_mcp_state_operations_total",
		Help: "Operations on the shared state store (read, commit, ping, notify)."}, []string{"op"})
	m.stateErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolselect_mcp_state_errors_total",
		Help: "Failed operations on the shared state store."}, []string{"op"})
	m.feedback = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolselect_mcp_feedback_selections_total",
		Help: "Selections (a successful call of a tool the session's find_tool returned) by what became of them: recorded as ranking feedback, known (already learned), limited (the session recorded its share), failed (the log refused the append)."}, []string{"result"})
	sessions := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "toolselect_mcp_open_sessions",
		Help: "MCP sessions open on this process (stateless requests open none)."}, func() float64 {
		n := 0
		for ss := range p.server.Sessions() {
			if _, own := p.ownSessions.Load(ss); !own {
				n++
			}
		}
		return float64(n)
	})
	m.reg.MustRegister(m.calls, m.find, m.call, m.http, m.stateOps, m.stateErrors, m.feedback, sessions, stateCollector{p},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observeState counts one operation on the shared store (statestore.Redis.Observe).
func (m *metrics) observeState(op string, err error) {
	m.stateOps.WithLabelValues(op).Inc()
	if err != nil {
		m.stateErrors.WithLabelValues(op).Inc()
	}
}

// countHTTP counts every request next answers by route and status code.
func (m *metrics) countHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		m.http.WithLabelValues(httpRoute(r.URL.Path), strconv.Itoa(rec.code)).Inc()
	})
}

// httpRoute is a request's route label: a fixed set, so a client's paths
// never become label values.
func httpRoute(path string) string {
	switch {
	case path == "/mcp", path == "/metrics", path == "/healthz", path == "/readyz":
		return path[1:]
	case strings.HasPrefix(path, "/.well-known/"):
		return "oauth"
	}
	return "other"
}

// statusRecorder remembers the status code written; it passes Flush on
// (streamable HTTP streams events) and Unwrap for http.ResponseController.
type statusRecorder struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.code, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Handler serves the metrics in the Prometheus text format.
func (m *metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

func (m *metrics) observeCall(tool, outcome string, d time.Duration) {
	m.calls.WithLabelValues(tool, outcome).Inc()
	m.call.WithLabelValues(outcome).Observe(d.Seconds())
}

// toolLabel is a tool's metric label: its canonical name when registered,
// "(unknown)" otherwise, so a client's made-up names never become label values.
func (p *Proxy) toolLabel(name string) string {
	if e, ok := p.reg.Lookup(name); ok {
		return e.Name()
	}
	return "(unknown)"
}

// stateCollector reads the proxy's state when scraped: upstreams (up,
// connects, crashes), tools, tokens, and held and flagged tools.
type stateCollector struct{ p *Proxy }

var (
	descUp       = prometheus.NewDesc("toolselect_mcp_upstream_up", "1 when the upstream is ready, else 0.", []string{"upstream", "state"}, nil)
	descConnects = prometheus.NewDesc("toolselect_mcp_upstream_connects_total", "Connections made to the upstream (a restart is a connect after the first).", []string{"upstream"}, nil)
	descCrashes  = prometheus.NewDesc("toolselect_mcp_upstream_crashes_total", "Times the upstream went down.", []string{"upstream"}, nil)
	descTools    = prometheus.NewDesc("toolselect_mcp_tools", "Tools by kind: catalog (imported), findable, exposed (tools/list).", []string{"kind"}, nil)
	descTokens   = prometheus.NewDesc("toolselect_mcp_catalog_tokens", "Tokens of the tool list: full (every imported tool) and exposed (what the agent is shown).", []string{"view"}, nil)
	descSaved    = prometheus.NewDesc("toolselect_mcp_tokens_saved_ratio", "1 - exposed/full tokens of the tool list.", nil, nil)
)

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUp, descConnects, descCrashes, descTools, descTokens, descSaved, descHeld, descFlagged, descStateUp} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.p.Stats(context.Background())
	for _, u := range s.Upstreams {
		up := 0.0
		if u.State == string(StateReady) {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up, u.Name, u.State)
		ch <- prometheus.MustNewConstMetric(descConnects, prometheus.CounterValue, float64(u.Connects), u.Name)
		ch <- prometheus.MustNewConstMetric(descCrashes, prometheus.CounterValue, float64(u.Crashes), u.Name)
	}
	ch <- prometheus.MustNewConstMetric(descTools, prometheus.GaugeValue, float64(s.Tools.Catalog), "catalog")
	ch <- prometheus.MustNewConstMetric(descTools, prometheus.GaugeValue, float64(s.Tools.Findable), "findable")
	ch <- prometheus.MustNewConstMetric(descTools, prometheus.GaugeValue, float64(s.Tools.Exposed), "exposed")
	ch <- prometheus.MustNewConstMetric(descTokens, prometheus.GaugeValue, float64(s.Tokens.FullCatalog), "full")
	ch <- prometheus.MustNewConstMetric(descTokens, prometheus.GaugeValue, float64(s.Tokens.Exposed), "exposed")
	ch <- prometheus.MustNewConstMetric(descSaved, prometheus.GaugeValue, s.Tokens.SavedPercent/100)
	// Held and flagged tools now (0 without a pin file).
	held, flagged := 0, 0
	if s.Pins != nil {
		held, flagged = len(s.Pins.Held), len(s.Pins.Flagged)
	}
	ch <- prometheus.MustNewConstMetric(descHeld, prometheus.GaugeValue, float64(held))
	ch <- prometheus.MustNewConstMetric(descFlagged, prometheus.GaugeValue, float64(flagged))
	if c.p.state != nil {
		up := 1.0
		if c.p.stateDown() {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(descStateUp, prometheus.GaugeValue, up)
	}
}

var descStateUp = prometheus.NewDesc("toolselect_mcp_state_up", "1 when the shared state store (--state) answered the last read, else 0 (tools it cannot confirm are held).", nil, nil)

// MetricsHandler serves the proxy's Prometheus metrics (text format).
// ListenAndServe mounts it at /metrics behind the same checks as /mcp.
func (p *Proxy) MetricsHandler() http.Handler { return p.metrics.Handler() }
