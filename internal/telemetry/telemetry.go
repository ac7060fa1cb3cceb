// Package telemetry is toolselect's OpenTelemetry ground floor: the tracer
// and meter every package records through (always the global providers, so a
// Go program's own provider gets the spans and no second one is made), the
// attribute names of the GenAI and MCP semantic conventions it uses, and
// Setup, which the command line, the C library and the MCP proxy call to
// export over OTLP when the standard OTEL_* environment asks for it.
//
// With no OTEL_* variable set nothing is installed: the global providers stay
// OpenTelemetry's no-op ones, and a span costs what a no-op span costs
// (docs/observability.md has the measurement).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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
	ErrorType              = attribute.Key("error.type")
	ServerAddress          = attribute.Key("server.address")
	MCPMethodName          = attribute.Key("mcp.method.name")
	MCPSessionID           = attribute.Key("mcp.session.id")

	Dialect        = attribute.Key("toolselect.dialect")
	Adapted        = attribute.Key("toolselect.adapted")
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
	ResultTools    = attribute.Key("toolselect.find.tools")
	RegisteredSize = attribute.Key("toolselect.registered")
)

// EnvCaptureContent is the OpenTelemetry GenAI instrumentations' opt-in for
// message content: prompts, replies, tool arguments and results are recorded
// on spans only when it is "true".
const EnvCaptureContent = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

var captureContent = sync.OnceValue(func() bool {
	return strings.EqualFold(strings.TrimSpace(os.Getenv(EnvCaptureContent)), "true")
})

// CaptureContent reports whether content may be recorded (read once).
func CaptureContent() bool { return captureContent() }

// Enabled reports whether the environment asks for export: an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or the per-signal one) or an exporter other
// than "none" named in OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER.
func Enabled(getenv func(string) string) bool {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		if strings.TrimSpace(getenv(k)) != "" {
			return !strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true")
		}
	}
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"} {
		if v := strings.TrimSpace(getenv(k)); v != "" && v != "none" {
			return !strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true")
		}
	}
	return false
}

var (
	setupMu  sync.Mutex
	shutdown func(context.Context) error
	flushers []func(context.Context) error
)

// Flush exports what the providers Setup installed still hold (nothing to do
// when it installed none). The C library exposes it for hosts that exit
// without unloading the library (Python calls it at exit).
func Flush(ctx context.Context) error {
	setupMu.Lock()
	fs := flushers
	setupMu.Unlock()
	var errs []error
	for _, f := range fs {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// Setup installs OpenTelemetry SDK providers as the global ones when the
// environment asks for export (Enabled), with OTLP exporters over
// OTEL_EXPORTER_OTLP_PROTOCOL ("http/protobuf", the default, or "grpc"),
// the service name from OTEL_SERVICE_NAME (default "toolselect") and the W3C
// trace-context propagator. OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER
// take "otlp" (default), "console" (traces to console, a writer given here)
// or "none". It returns the function that flushes and stops them; with
// nothing asked for, or when called a second time, it installs nothing and
// returns a no-op. The exporters read the rest of OTEL_EXPORTER_OTLP_* (headers,
// timeouts, per-signal endpoints) themselves.
func Setup(ctx context.Context, getenv func(string) string, console io.Writer) (func(context.Context) error, error) {
	setupMu.Lock()
	defer setupMu.Unlock()
	noop := func(context.Context) error { return nil }
	if shutdown != nil || !Enabled(getenv) {
		return noop, nil
	}
	service := strings.TrimSpace(getenv("OTEL_SERVICE_NAME"))
	if service == "" {
		service = "toolselect"
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", service)))
	if err != nil {
		return noop, fmt.Errorf("telemetry: resource: %w", err)
	}
	protocol := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if protocol == "" {
		protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	if protocol == "" {
		protocol = "http/protobuf"
	}
	var stops []func(context.Context) error
	switch exp := exporterName(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
	case "otlp", "console":
		var se sdktrace.SpanExporter
		switch {
		case exp == "console":
			if console == nil {
				console = os.Stderr
			}
			se, err = stdouttrace.New(stdouttrace.WithWriter(console))
		case protocol == "grpc":
			se, err = otlptracegrpc.New(ctx)
		case protocol == "http/protobuf" || protocol == "http/json":
			se, err = otlptracehttp.New(ctx)
		default:
			err = fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: want http/protobuf or grpc", protocol)
		}
		if err != nil {
			return noop, fmt.Errorf("telemetry: trace exporter: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(se), sdktrace.WithResource(res))
		otel.SetTracerProvider(tp)
		stops = append(stops, tp.Shutdown)
		flushers = append(flushers, tp.ForceFlush)
	default:
		return noop, fmt.Errorf("telemetry: OTEL_TRACES_EXPORTER=%q: want otlp, console or none", exp)
	}
	switch exp := exporterName(getenv("OTEL_METRICS_EXPORTER")); exp {
	case "none", "console":
	case "otlp":
		var me sdkmetric.Exporter
		if protocol == "grpc" {
			me, err = otlpmetricgrpc.New(ctx)
		} else {
			me, err = otlpmetrichttp.New(ctx)
		}
		if err != nil {
			return noop, fmt.Errorf("telemetry: metric exporter: %w", err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me)), sdkmetric.WithResource(res))
		otel.SetMeterProvider(mp)
		stops = append(stops, mp.Shutdown)
		flushers = append(flushers, mp.ForceFlush)
	default:
		return noop, fmt.Errorf("telemetry: OTEL_METRICS_EXPORTER=%q: want otlp or none", exp)
	}
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	shutdown = func(ctx context.Context) error {
		var errs []error
		for _, stop := range stops {
			errs = append(errs, stop(ctx))
		}
		return errors.Join(errs...)
	}
	return shutdown, nil
}

func exporterName(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return "otlp"
	}
	return v
}
