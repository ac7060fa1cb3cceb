package otelsetup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolselect/toolselect/internal/telemetry"
	"github.com/toolselect/toolselect/otelsetup/internal/otlphttp"
)

// A signal's settings in the OpenTelemetry environment.
type signal struct {
	name        string // "traces" or "metrics"
	exporterVar string // OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER
	protocolVar string // the per-signal OTEL_EXPORTER_OTLP_*_PROTOCOL
	endpointVar string // the per-signal OTEL_EXPORTER_OTLP_*_ENDPOINT
}

var (
	traces  = signal{"traces", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"}
	metrics = signal{"metrics", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"}
)

// grpcRefused is the warning for OTEL_EXPORTER_OTLP_PROTOCOL=grpc (or a
// per-signal grpc): toolselect links only the OTLP exporters over HTTP. The
// gRPC ones pulled google.golang.org/grpc and its generated API packages
// into every binary (about 5 MB of the command, docs/packaging.md), and an
// OpenTelemetry collector takes the same data over HTTP on its port 4318.
const grpcRefused = "%s=grpc: toolselect sends OTLP over http/protobuf only (the gRPC exporter is not built in, to keep the binary small); %s are off (set http/protobuf and point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's HTTP port, 4318 by default)"

// exportPlan is what the environment asks of one signal: its exporters
// ("otlp", "console"; none means the signal is off) and, for otlp, the
// protocol (always "http/protobuf": see [grpcRefused]).
type exportPlan struct {
	exporters []string
	protocol  string
}

// plan reads a signal's exporters and protocol. The exporter variable is a
// comma-separated list (the specification allows one) of otlp, console and
// none; unset, it is otlp when an OTLP endpoint is set for the signal
// (OTEL_EXPORTER_OTLP_ENDPOINT or its own) and none otherwise, so that a
// process with no OTEL_* variable exports nothing. A value toolselect
// cannot honour (an unknown exporter, the http/json protocol, which the
// Go OTLP exporters do not speak, or grpc, which this build does not link:
// [grpcRefused]) turns the signal off with a warning that
// names the variable: the specification asks for a warning and for the
// setting to be ignored, and off is the reading that never sends data
// somewhere the user did not ask for (the default otlp would go to
// localhost).
func (s signal) plan(getenv func(string) string) (p exportPlan, warnings []string) {
	v := strings.TrimSpace(getenv(s.exporterVar))
	if v == "" {
		if strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) == "" && strings.TrimSpace(getenv(s.endpointVar)) == "" {
			return exportPlan{}, nil
		}
		v = "otlp"
	}
	var names, unknown []string
	none := false
	for _, n := range strings.Split(v, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		switch {
		case n == "":
		case n == "none":
			none = true
		case n != "otlp" && n != "console":
			unknown = append(unknown, n)
		case !slices.Contains(names, n):
			names = append(names, n)
		}
	}
	switch {
	case len(unknown) > 0:
		return exportPlan{}, []string{fmt.Sprintf("%s=%q: %s not supported (toolselect exports %s with otlp or console, or none); %s are off",
			s.exporterVar, v, strings.Join(unknown, ", "), s.name, s.name)}
	case none:
		if len(names) > 0 {
			warnings = append(warnings, fmt.Sprintf("%s=%q: none turns %s off; %s ignored", s.exporterVar, v, s.name, strings.Join(names, ", ")))
		}
		return exportPlan{}, warnings
	}
	p.exporters = names
	if slices.Contains(names, "otlp") {
		protoVar := s.protocolVar
		proto := strings.ToLower(strings.TrimSpace(getenv(protoVar)))
		if proto == "" {
			protoVar = "OTEL_EXPORTER_OTLP_PROTOCOL"
			proto = strings.ToLower(strings.TrimSpace(getenv(protoVar)))
		}
		switch proto {
		case "", "http/protobuf":
			p.protocol = "http/protobuf"
		case "grpc":
			return exportPlan{}, []string{fmt.Sprintf(grpcRefused, protoVar, s.name)}
		case "http/json":
			return exportPlan{}, []string{fmt.Sprintf("%s=http/json: the Go OTLP exporters send http/protobuf, not JSON; %s are off (set http/protobuf: collectors take both on the same port)",
				protoVar, s.name)}
		default:
			return exportPlan{}, []string{fmt.Sprintf("%s=%q: want http/protobuf (the only OTLP protocol toolselect sends); %s are off", protoVar, proto, s.name)}
		}
	}
	return p, nil
}

// enabled reports whether the environment asks for export at all: an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or a per-signal one) or an exporter
// other than "none" named in OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER,
// and OTEL_SDK_DISABLED not "true".
func enabled(getenv func(string) string) bool {
	if telemetry.ParseBool(getenv("OTEL_SDK_DISABLED")) {
		return false
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", traces.endpointVar, metrics.endpointVar} {
		if strings.TrimSpace(getenv(k)) != "" {
			return true
		}
	}
	for _, k := range []string{traces.exporterVar, metrics.exporterVar} {
		if v := strings.ToLower(strings.TrimSpace(getenv(k))); v != "" && v != "none" {
			return true
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

// Setup installs OpenTelemetry SDK providers as the global ones for the
// signals the environment asks to export (enabled, and each signal's plan):
// OTLP exporters over http/protobuf (the only protocol: grpc and http/json,
// in OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / _METRICS_PROTOCOL or else
// OTEL_EXPORTER_OTLP_PROTOCOL, turn their signal off with a warning); console exporters writing JSON to stderr;
// the service name from OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES'
// service.name, else "toolselect"; the W3C trace-context and baggage
// propagator. The OTLP exporters (package otlphttp) read the rest of
// OTEL_EXPORTER_OTLP_* (endpoints, headers, timeouts, compression, TLS, and
// for metrics the temporality and histogram preferences).
//
// It returns the function that flushes and stops what it installed, and the
// settings it could not use, one per line: each turned its signal off (the
// other signal is still installed). They are warnings for the caller to
// show, never a reason to stop: a command that has nothing to do with
// telemetry must run whatever OTEL_* says. With nothing asked for, with
// OTEL_SDK_DISABLED=true, or when called a second time, it installs nothing
// and returns a no-op.
func Setup(ctx context.Context, getenv func(string) string, stderr io.Writer) (func(context.Context) error, error) {
	setupMu.Lock()
	defer setupMu.Unlock()
	noop := func(context.Context) error { return nil }
	var warnings []string
	if v := strings.TrimSpace(getenv("OTEL_SDK_DISABLED")); v != "" && !telemetry.ParseBool(v) && !strings.EqualFold(v, "false") {
		warnings = append(warnings, fmt.Sprintf("OTEL_SDK_DISABLED=%q is not a boolean (true or false); taken as false", v))
	}
	if shutdown != nil || !enabled(getenv) {
		return noop, warningsErr(warnings)
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	tp, tw := traces.plan(getenv)
	mp, mw := metrics.plan(getenv)
	warnings = append(append(warnings, tw...), mw...)
	if len(tp.exporters) == 0 && len(mp.exporters) == 0 {
		return noop, warningsErr(warnings)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", serviceName(getenv))))
	if err != nil {
		res = resource.NewSchemaless(attribute.String("service.name", serviceName(getenv)))
	}
	var stops []func(context.Context) error
	if len(tp.exporters) > 0 {
		opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
		for _, name := range tp.exporters {
			se, w, err := spanExporter(name, getenv, stderr)
			for _, x := range w {
				warnings = append(warnings, "traces: "+x)
			}
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("traces: the %s exporter: %v; traces are off", name, err))
				opts = nil
				break
			}
			opts = append(opts, sdktrace.WithBatcher(se))
		}
		if opts != nil {
			p := sdktrace.NewTracerProvider(opts...)
			otel.SetTracerProvider(p)
			stops = append(stops, p.Shutdown)
			flushers = append(flushers, p.ForceFlush)
		}
	}
	if len(mp.exporters) > 0 {
		opts := []sdkmetric.Option{sdkmetric.WithResource(res)}
		for _, name := range mp.exporters {
			me, w, err := metricExporter(name, getenv, stderr)
			for _, x := range w {
				warnings = append(warnings, "metrics: "+x)
			}
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("metrics: the %s exporter: %v; metrics are off", name, err))
				opts = nil
				break
			}
			opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me)))
		}
		if opts != nil {
			p := sdkmetric.NewMeterProvider(opts...)
			otel.SetMeterProvider(p)
			stops = append(stops, p.Shutdown)
			flushers = append(flushers, p.ForceFlush)
		}
	}
	if len(stops) == 0 {
		return noop, warningsErr(warnings)
	}
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	shutdown = func(ctx context.Context) error {
		var errs []error
		for _, stop := range stops {
			errs = append(errs, stop(ctx))
		}
		return errors.Join(errs...)
	}
	return shutdown, warningsErr(warnings)
}

// warningsErr is Setup's warnings as one error, one per line (nil: none).
func warningsErr(warnings []string) error {
	if len(warnings) == 0 {
		return nil
	}
	return errors.New(strings.Join(warnings, "\n"))
}

// serviceName is OTEL_SERVICE_NAME, else the service.name of
// OTEL_RESOURCE_ATTRIBUTES (which resource.Default reads), else
// "toolselect": the specification gives OTEL_SERVICE_NAME precedence, and
// the default must not hide a name the user gave in the attributes.
func serviceName(getenv func(string) string) string {
	if v := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); v != "" {
		return v
	}
	for _, kv := range strings.Split(getenv("OTEL_RESOURCE_ATTRIBUTES"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.TrimSpace(k) == "service.name" && strings.TrimSpace(v) != "" {
			if u, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
				return u
			}
			return strings.TrimSpace(v)
		}
	}
	return "toolselect"
}

// spanExporter builds the named exporter: console (JSON on stderr) or otlp
// (OTLP/HTTP, configured from the environment by otlphttp.FromEnv, which
// also returns the settings it could not use).
func spanExporter(name string, getenv func(string) string, stderr io.Writer) (sdktrace.SpanExporter, []string, error) {
	if name == "console" {
		se, err := stdouttrace.New(stdouttrace.WithWriter(stderr))
		return se, nil, err
	}
	cfg, warnings, err := otlphttp.FromEnv(otlphttp.Traces, getenv)
	if err != nil {
		return nil, warnings, err
	}
	return otlphttp.NewSpanExporter(cfg), warnings, nil
}

// metricExporter is spanExporter for metrics.
func metricExporter(name string, getenv func(string) string, stderr io.Writer) (sdkmetric.Exporter, []string, error) {
	if name == "console" {
		me, err := stdoutmetric.New(stdoutmetric.WithWriter(stderr))
		return me, nil, err
	}
	cfg, warnings, err := otlphttp.FromEnv(otlphttp.Metrics, getenv)
	if err != nil {
		return nil, warnings, err
	}
	return otlphttp.NewMetricExporter(cfg), warnings, nil
}
