package mcpproxy

import (
	"context"
	"fmt"
	"github.com/toolselect/toolselect/rank"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolselect/toolselect/internal/testing/telemetrytest"
	"github.com/toolselect/toolselect/registry"
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

	value := scrapeMetrics(t, base)
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

// scrapeMetrics GETs base/metrics, parses it with the Prometheus text
// parser, and returns a lookup of one sample: the value of a counter or
// gauge, the sample count of a histogram, for the first series carrying
// labels.
func scrapeMetrics(t *testing.T, base string) func(name string, labels map[string]string) (float64, bool) {
	t.Helper()
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
	return func(name string, labels map[string]string) (float64, bool) {
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
}

// /metrics counts the held and flagged tools as gauges of the current
// state: a poisoned upstream's tool held and flagged, then approved (still
// flagged, no longer held); 0 and 0 without a pin file.
func TestMetricsHeldAndFlaggedTools(t *testing.T) {
	pins := filepath.Join(t.TempDir(), "pins.json")
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}, Pins: pins})
	p.Close()
	poisoned := testUpstream(t, "t")
	poisoned.Env["TOOLSELECT_TEST_VARIANT"] = "poisoned"
	p2 := startProxy(t, &Config{Upstreams: []Upstream{poisoned}, Pins: pins})
	base := serveHTTP(t, p2, nil)
	gauges := func(want float64, wantFlagged float64) {
		t.Helper()
		value := scrapeMetrics(t, base)
		if v, ok := value("toolselect_mcp_held_tools", nil); !ok || v != want {
			t.Errorf("toolselect_mcp_held_tools = %v (present %v), want %v", v, ok, want)
		}
		if v, ok := value("toolselect_mcp_flagged_tools", nil); !ok || v != wantFlagged {
			t.Errorf("toolselect_mcp_flagged_tools = %v (present %v), want %v", v, ok, wantFlagged)
		}
	}
	gauges(1, 1)
	ps, err := registry.LoadPins(pins)
	if err != nil {
		t.Fatal(err)
	}
	ps.Approve("t__count")
	if err := ps.Save(); err != nil {
		t.Fatal(err)
	}
	gauges(0, 1)

	plain := serveHTTP(t, startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "u")}}), nil)
	value := scrapeMetrics(t, plain)
	for _, name := range []string{"toolselect_mcp_held_tools", "toolselect_mcp_flagged_tools"} {
		if v, ok := value(name, nil); !ok || v != 0 {
			t.Errorf("without a pin file %s = %v (present %v), want 0", name, v, ok)
		}
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

// spanIndex finds ended spans by name and kind.
type spanIndex []sdktrace.ReadOnlySpan

func (ix spanIndex) get(t *testing.T, name string, kind trace.SpanKind) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range ix {
		if s.Name() == name && s.SpanKind() == kind {
			return s
		}
	}
	var names []string
	for _, s := range ix {
		names = append(names, fmt.Sprintf("%s(%s)", s.Name(), s.SpanKind()))
	}
	t.Fatalf("no %s span %q among %v", kind, name, names)
	return nil
}

func spanAttrs(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// Relayed requests other than tools/call get a client span too, named and
// attributed after the MCP conventions, and the upstream receives the
// proxy span's trace context in _meta, with the caller's other keys.
func TestRelayedRequestSpans(t *testing.T) {
	rec, _ := telemetrytest.Install(t)
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	cs := connectMemory(t, p, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	callerTrace, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	callerMeta := func() map[string]any {
		return map[string]any{"traceparent": "00-" + callerTrace.String() + "-00f067aa0ba902b7-01", "com.example/keep": "yes"}
	}
	received := func(m mcp.Meta) map[string]any {
		r, _ := m["received"].(map[string]any)
		return r
	}

	pp := &mcp.GetPromptParams{Name: "t__hello_prompt"}
	pp.SetMeta(callerMeta())
	prompt, err := cs.GetPrompt(ctx, pp)
	if err != nil {
		t.Fatal(err)
	}
	rp := &mcp.ReadResourceParams{URI: "zoo://t__animals/lion"}
	rp.SetMeta(callerMeta())
	read, err := cs.ReadResource(ctx, rp)
	if err != nil {
		t.Fatal(err)
	}

	ix := spanIndex(rec.Ended())
	for _, c := range []struct {
		server, client string
		meta           map[string]any
		want           map[string]string // client span attributes
		serverWant     map[string]string
	}{
		{"prompts/get t__hello_prompt", "prompts/get hello_prompt", received(prompt.Meta),
			map[string]string{"mcp.method.name": "prompts/get", "gen_ai.prompt.name": "hello_prompt", "toolselect.upstream": "t"},
			map[string]string{"mcp.method.name": "prompts/get", "gen_ai.prompt.name": "t__hello_prompt"}},
		{"resources/read", "resources/read", received(read.Meta),
			map[string]string{"mcp.method.name": "resources/read", "mcp.resource.uri": "zoo://animals/lion", "toolselect.upstream": "t"},
			map[string]string{"mcp.method.name": "resources/read", "mcp.resource.uri": "zoo://t__animals/lion"}},
	} {
		server := ix.get(t, c.server, trace.SpanKindServer)
		client := ix.get(t, c.client, trace.SpanKindClient)
		if server.SpanContext().TraceID() != callerTrace {
			t.Errorf("%s: the caller's trace is not continued", c.server)
		}
		if client.Parent().SpanID() != server.SpanContext().SpanID() {
			t.Errorf("%s: the client span is not the server span's child", c.client)
		}
		ca, sa := spanAttrs(client), spanAttrs(server)
		for k, v := range c.want {
			if ca[k] != v {
				t.Errorf("%s: %s = %q, want %q", c.client, k, ca[k], v)
			}
		}
		for k, v := range c.serverWant {
			if sa[k] != v {
				t.Errorf("%s: %s = %q, want %q", c.server, k, sa[k], v)
			}
		}
		if ca["jsonrpc.request.id"] == "" {
			t.Errorf("%s: no jsonrpc.request.id (a stdio upstream)", c.client)
		}
		if _, has := ca["gen_ai.operation.name"]; has {
			t.Errorf("%s: gen_ai.operation.name is for tool calls only", c.client)
		}
		wantParent := fmt.Sprintf("00-%s-%s-01", client.SpanContext().TraceID(), client.SpanContext().SpanID())
		if c.meta["traceparent"] != wantParent {
			t.Errorf("%s: the upstream got traceparent %v, want the proxy's client span %s", c.client, c.meta["traceparent"], wantParent)
		}
		if c.meta["com.example/keep"] != "yes" {
			t.Errorf("%s: the caller's other _meta keys are dropped: %v", c.client, c.meta)
		}
	}
	// tools/call: execute_tool and jsonrpc.request.id on the client span.
	call(t, cs, rank.CallToolName, map[string]any{"name": "t__sleep", "arguments": map[string]any{"ms": 1}})
	client := spanIndex(rec.Ended()).get(t, "tools/call sleep", trace.SpanKindClient)
	a := spanAttrs(client)
	if a["gen_ai.operation.name"] != "execute_tool" || a["gen_ai.tool.name"] != "sleep" || a["jsonrpc.request.id"] == "" {
		t.Errorf("tools/call client span attributes %v", a)
	}
}

// error.type after the MCP conventions: the JSON-RPC error code as a
// string on the server span, tool_error for an isError result, the
// transport failure on the client span; status descriptions carry no
// argument text without content capture.
func TestMCPErrorSpans(t *testing.T) {
	rec, _ := telemetrytest.Install(t)
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}, Timeout: 300 * time.Millisecond})
	cs := connectMemory(t, p, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "t__no_such_prompt", Arguments: map[string]string{"x": "ARGSECRET"}})
	if err == nil {
		t.Fatal("want an error for an unknown prompt")
	}
	res := call(t, cs, rank.CallToolName, map[string]any{"name": "t__sleep", "arguments": map[string]any{"ms": "ARGSECRET"}})
	if !res.IsError {
		t.Fatal("invalid arguments should be a tool error")
	}
	res = call(t, cs, rank.CallToolName, map[string]any{"name": "t__sleep", "arguments": map[string]any{"ms": 5000}})
	if !res.IsError {
		t.Fatal("a call past the timeout should be a tool error")
	}

	// The executor's timeout answers the client at once; the relayed call's
	// span ends when the upstream request is cancelled, just after.
	ended := func() bool {
		for _, s := range rec.Ended() {
			if s.Name() == "tools/call sleep" && s.SpanKind() == trace.SpanKindClient {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(10 * time.Second); !ended() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	ix := spanIndex(rec.Ended())
	prompt := ix.get(t, "prompts/get t__no_such_prompt", trace.SpanKindServer)
	if a := spanAttrs(prompt); a["error.type"] != "-32602" && a["error.type"] != "-32601" || a["rpc.response.status_code"] != a["error.type"] {
		t.Errorf("unknown prompt: error.type %q, rpc.response.status_code %q", a["error.type"], a["rpc.response.status_code"])
	}
	if prompt.Status().Code != codes.Error {
		t.Errorf("unknown prompt: status %v", prompt.Status())
	}
	timeout := ix.get(t, "tools/call sleep", trace.SpanKindClient)
	if a := spanAttrs(timeout); a["error.type"] != "timeout" || timeout.Status().Code != codes.Error {
		t.Errorf("upstream timeout: error.type %q, status %v", a["error.type"], timeout.Status())
	}
	for _, s := range ix {
		if s.Name() == "tools/call "+rank.CallToolName && s.SpanKind() == trace.SpanKindServer {
			if a := spanAttrs(s); a["error.type"] != "tool_error" {
				t.Errorf("call_tool with isError: error.type %q", a["error.type"])
			}
		}
	}
	assertNoSecret(t, ix, "ARGSECRET")
}

// A crashed upstream: the client span's error.type names the transport
// failure, not a message.
func TestUpstreamCrashSpan(t *testing.T) {
	rec, _ := telemetrytest.Install(t)
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	cs := connectMemory(t, p, "")
	res := call(t, cs, rank.CallToolName, map[string]any{"name": "t__crash", "arguments": map[string]any{}})
	if !res.IsError {
		t.Fatal("a crash should be a tool error")
	}
	s := spanIndex(rec.Ended()).get(t, "tools/call crash", trace.SpanKindClient)
	if a := spanAttrs(s); a["error.type"] != "connection_closed" || s.Status().Description != "connection_closed" {
		t.Errorf("crash: error.type %q, status %q", a["error.type"], s.Status().Description)
	}
}

func assertNoSecret(t *testing.T, spans []sdktrace.ReadOnlySpan, secret string) {
	t.Helper()
	for _, s := range spans {
		if strings.Contains(s.Name(), secret) || strings.Contains(s.Status().Description, secret) {
			t.Errorf("span %q (status %q) holds %s", s.Name(), s.Status().Description, secret)
		}
		for k, v := range spanAttrs(s) {
			if strings.Contains(v, secret) {
				t.Errorf("span %q: %s = %q holds %s", s.Name(), k, v, secret)
			}
		}
		for _, e := range s.Events() {
			for _, kv := range e.Attributes {
				if strings.Contains(kv.Value.Emit(), secret) {
					t.Errorf("span %q event %s holds %s", s.Name(), e.Name, secret)
				}
			}
		}
	}
}

// A /metrics scrape makes no span: Stats counts the proxy's tools/list
// through a session of its own, which is not traced.
func TestScrapeCreatesNoSpans(t *testing.T) {
	rec, _ := telemetrytest.Install(t)
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan net.Addr, 1)
	go func() { _ = p.ListenAndServe(ctx, "127.0.0.1:0", nil, func(a net.Addr) { addr <- a }) }()
	base := "http://" + (<-addr).String()
	rec.Reset()
	for range 2 {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET /metrics: %s", resp.Status)
		}
	}
	if n := len(rec.Started()); n != 0 {
		var names []string
		for _, s := range rec.Started() {
			names = append(names, s.Name())
		}
		t.Fatalf("a scrape started %d spans: %v", n, names)
	}
	// A client's own requests are still traced.
	cs := connectMemory(t, p, "")
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	spanIndex(rec.Ended()).get(t, "tools/list", trace.SpanKindServer)
}

// /metrics is behind the same Host/Origin check as /mcp (DNS rebinding).
func TestMetricsHostCheck(t *testing.T) {
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan net.Addr, 1)
	go func() {
		_ = p.ListenAndServe(ctx, "127.0.0.1:0", &HTTPOptions{AllowedHosts: []string{"proxy.example"}}, func(a net.Addr) { addr <- a })
	}()
	base := "http://" + (<-addr).String()
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"", "", 200},
		{"proxy.example", "", 200},
		{"proxy.example:8080", "http://proxy.example:8080", 200},
		{"evil.example", "", 403},
		{"", "http://evil.example", 403},
	} {
		req, _ := http.NewRequest("GET", base+"/metrics", nil)
		if c.host != "" {
			req.Host = c.host
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Host %q Origin %q: %s, want %d", c.host, c.origin, resp.Status, c.want)
		}
	}
}
