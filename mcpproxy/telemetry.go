package mcpproxy

import (
	"context"
	"net/http"
	"reflect"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolselect/toolselect/internal/telemetry"
)

// The proxy's telemetry (docs/observability.md):
//   - an OpenTelemetry server span per MCP request it serves ("METHOD
//     [TARGET]", mcp.method.name, mcp.session.id, gen_ai.tool.name for
//     tools/call), continuing the trace context a client put in params._meta
//     (traceparent, tracestate);
//   - a client span per call it relays upstream, whose context travels in the
//     upstream request's _meta;
//   - Prometheus metrics at /metrics, behind the same authentication as /mcp.

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

// traceMiddleware opens the server span of every request the proxy serves.
func (p *Proxy) traceMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if meta := metaOf(req); len(meta) > 0 {
			ctx = traceContext.Extract(ctx, metaCarrier(meta))
		}
		target := ""
		if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
			target = r.Params.Name
		}
		name := method
		if target != "" {
			name += " " + target
		}
		ctx, span := telemetry.Tracer().Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		if span.IsRecording() {
			span.SetAttributes(telemetry.MCPMethodName.String(method))
			if s := req.GetSession(); s != nil && s.ID() != "" {
				span.SetAttributes(telemetry.MCPSessionID.String(s.ID()))
			}
			if target != "" {
				span.SetAttributes(telemetry.GenAIToolName.String(target), telemetry.GenAIOperationName.String("execute_tool"))
			}
		}
		res, err := next(ctx, method, req)
		switch {
		case err != nil:
			span.SetAttributes(telemetry.ErrorType.String("jsonrpc"))
			span.SetStatus(codes.Error, err.Error())
		case isErrorResult(res):
			span.SetAttributes(telemetry.ErrorType.String("tool_error"))
			span.SetStatus(codes.Error, "tool result with isError")
		}
		return res, err
	}
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

// traceUpstreamCall opens the client span of a call relayed to an upstream
// and puts its context in the request's _meta.
func traceUpstreamCall(ctx context.Context, upstream, tool string, params *mcp.CallToolParams) (context.Context, trace.Span) {
	ctx, span := telemetry.Tracer().Start(ctx, "tools/call "+tool, trace.WithSpanKind(trace.SpanKindClient))
	if !span.IsRecording() {
		return ctx, span
	}
	span.SetAttributes(telemetry.MCPMethodName.String("tools/call"), telemetry.GenAIToolName.String(tool),
		telemetry.Upstream.String(upstream))
	meta := params.GetMeta()
	if meta == nil {
		meta = map[string]any{}
	}
	traceContext.Inject(ctx, metaCarrier(meta))
	params.SetMeta(meta)
	return ctx, span
}

// metrics are the proxy's Prometheus instruments, in a registry of its own.
type metrics struct {
	reg   *prometheus.Registry
	calls *prometheus.CounterVec
	find  prometheus.Histogram
	call  *prometheus.HistogramVec
}

func newMetrics(p *Proxy) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolselect_mcp_tool_calls_total",
		Help: "Tool calls served, by tool and outcome (ok, tool_error, timeout, refused, invalid, canceled)."}, []string{"tool", "outcome"})
	m.find = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "toolselect_mcp_find_tool_duration_seconds",
		Help: "find_tool latency.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)})
	m.call = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "toolselect_mcp_call_tool_duration_seconds",
		Help: "Tool call latency (call_tool and direct calls), by outcome.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"outcome"})
	m.reg.MustRegister(m.calls, m.find, m.call, stateCollector{p})
	return m
}

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
// connects, crashes), tools, held tools and tokens.
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
	for _, d := range []*prometheus.Desc{descUp, descConnects, descCrashes, descTools, descTokens, descSaved} {
		ch <- d
	}
	for _, d := range c.p.extraDescs() {
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
	c.p.collectExtra(ch)
}

// extraDescs and collectExtra are where state added later (held tools)
// reports; none yet.
func (p *Proxy) extraDescs() []*prometheus.Desc           { return nil }
func (p *Proxy) collectExtra(ch chan<- prometheus.Metric) {}

// MetricsHandler serves the proxy's Prometheus metrics (text format).
// ListenAndServe mounts it at /metrics behind the same checks as /mcp.
func (p *Proxy) MetricsHandler() http.Handler { return p.metrics.Handler() }
