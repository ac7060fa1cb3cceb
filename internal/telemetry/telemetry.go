// Package telemetry is toolselect's OpenTelemetry ground floor: the tracer
// and meter every package records through (always the global providers, so a
// Go program's own provider gets the spans and no second one is made) and
// the attribute names of the GenAI and MCP semantic conventions it uses.
//
// It imports the OpenTelemetry API only, as OpenTelemetry asks of libraries:
// the SDK and the exporters live in package otelsetup, which the command
// line and the C library call. Until a program installs a provider, the
// global providers are OpenTelemetry's no-op ones, and a span costs what a
// no-op span costs (docs/observability.md has the measurement).
package telemetry

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of every span and instrument.
const Scope = "github.com/toolselect/toolselect"

// Tracer is the global provider's tracer for toolselect.
func Tracer() trace.Tracer { return otel.Tracer(Scope) }

// Meter is the global provider's meter for toolselect.
func Meter() metric.Meter { return otel.Meter(Scope) }

// Attribute names: the GenAI and MCP semantic conventions' where they have
// one, toolselect's own under "toolselect.".
const (
	GenAIOperationName     = attribute.Key("gen_ai.operation.name")
	GenAIProviderName      = attribute.Key("gen_ai.provider.name")
	GenAIRequestModel      = attribute.Key("gen_ai.request.model")
	GenAIResponseFinish    = attribute.Key("gen_ai.response.finish_reasons")
	GenAIUsageInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	GenAIUsageOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	GenAIToolName          = attribute.Key("gen_ai.tool.name")
	GenAIToolCallID        = attribute.Key("gen_ai.tool.call.id")
	GenAIInputMessages     = attribute.Key("gen_ai.input.messages")  // opt-in content
	GenAIOutputMessages    = attribute.Key("gen_ai.output.messages") // opt-in content
	GenAIToolCallArguments = attribute.Key("gen_ai.tool.call.arguments")
	GenAIToolCallResult    = attribute.Key("gen_ai.tool.call.result")
	GenAIPromptName        = attribute.Key("gen_ai.prompt.name")
	ErrorType              = attribute.Key("error.type")
	ServerAddress          = attribute.Key("server.address")
	ServerPort             = attribute.Key("server.port")
	MCPMethodName          = attribute.Key("mcp.method.name")
	MCPSessionID           = attribute.Key("mcp.session.id")
	MCPResourceURI         = attribute.Key("mcp.resource.uri")
	JSONRPCRequestID       = attribute.Key("jsonrpc.request.id")
	RPCResponseStatusCode  = attribute.Key("rpc.response.status_code")

	Dialect        = attribute.Key("toolselect.dialect")
	Adapted        = attribute.Key("toolselect.adapted")
	Repaired       = attribute.Key("toolselect.repaired")
	Outcome        = attribute.Key("toolselect.outcome")
	OfferSize      = attribute.Key("toolselect.offer.size")
	OfferTokens    = attribute.Key("toolselect.offer.tokens")
	OfferRanked    = attribute.Key("toolselect.offer.ranked")
	Searches       = attribute.Key("toolselect.searches")
	Attempts       = attribute.Key("toolselect.attempts")
	CallsKept      = attribute.Key("toolselect.calls.kept")
	CallsDropped   = attribute.Key("toolselect.calls.dropped")
	DropReasons    = attribute.Key("toolselect.calls.dropped.reasons")
	Refusal        = attribute.Key("toolselect.policy.refusal")
	Policy         = attribute.Key("toolselect.policy")
	Upstream       = attribute.Key("toolselect.upstream")
	RegisteredSize = attribute.Key("toolselect.registered")
)

// EnvCaptureContent is the OpenTelemetry GenAI instrumentations' opt-in for
// message content: prompts, replies, tool arguments and results are recorded
// on spans only when it is "true".
const EnvCaptureContent = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

var (
	captureOnce sync.Once
	capture     atomic.Bool
)

// CaptureContent reports whether content may be recorded: prompts, replies,
// tool arguments and results, and the detailed error messages that quote
// them (read once from the environment).
func CaptureContent() bool {
	captureOnce.Do(func() { capture.Store(ParseBool(os.Getenv(EnvCaptureContent))) })
	return capture.Load()
}

// SetCaptureContent overrides CaptureContent until the returned function
// restores it: for tests, which cannot change the environment once read.
func SetCaptureContent(on bool) (restore func()) {
	prev := CaptureContent()
	capture.Store(on)
	return func() { capture.Store(prev) }
}

// ParseBool is the OpenTelemetry environment's boolean: true only for
// "true", in any case.
func ParseBool(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }

// Instruments returns the instruments build makes from the global meter
// provider's meter, made once per provider: instruments made through the
// global provider before a program installs its own are bound to the first
// one it installs, so a cache that ignored the provider would keep
// recording into a provider that has since been replaced (tests install
// one each). The check is an atomic load and a comparison.
func Instruments[T any](cache *InstrumentCache[T], build func(metric.Meter) T) T {
	mp := otel.GetMeterProvider()
	if c := cache.p.Load(); c != nil && sameProvider(c.mp, mp) {
		return c.v
	}
	c := &cached[T]{mp: mp, v: build(mp.Meter(Scope))}
	cache.p.Store(c)
	return c.v
}

// InstrumentCache holds the instruments Instruments made, and the provider
// they belong to.
type InstrumentCache[T any] struct{ p atomic.Pointer[cached[T]] }

type cached[T any] struct {
	mp metric.MeterProvider
	v  T
}

// sameProvider compares two providers without panicking on a provider whose
// dynamic type is not comparable (such a provider gets new instruments each
// time, which is correct, only slower).
func sameProvider(a, b metric.MeterProvider) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
