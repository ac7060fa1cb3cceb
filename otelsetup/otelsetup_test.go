package otelsetup

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolselect/toolselect/internal/telemetry"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// Each signal follows its own variables (the OTEL SDK environment
// specification); a value toolselect cannot honour turns that signal off
// with a warning naming the variable, never the whole process.
func TestPlan(t *testing.T) {
	for _, c := range []struct {
		name             string
		env              func(string) string
		traces, metrics  exportPlan
		warning          string // a substring of the warnings, "" for none
		tracesOffWarning bool
	}{
		{name: "nothing set", env: env()},
		{name: "endpoint: both signals over OTLP/HTTP", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
			traces: exportPlan{[]string{"otlp"}, "http/protobuf"}, metrics: exportPlan{[]string{"otlp"}, "http/protobuf"}},
		{name: "a traces endpoint exports traces only", env: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/v1/traces"),
			traces: exportPlan{[]string{"otlp"}, "http/protobuf"}},
		{name: "per-signal grpc turns that signal off, naming the variable and the HTTP port",
			env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf",
				"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc"),
			traces:  exportPlan{[]string{"otlp"}, "http/protobuf"},
			warning: "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=grpc: toolselect sends OTLP over http/protobuf only (the gRPC exporter is not built in, to keep the binary small); metrics are off (set http/protobuf and point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's HTTP port, 4318 by default)"},
		{name: "the general protocol grpc turns both off", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL", "GRPC"),
			warning: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: toolselect sends OTLP over http/protobuf only"},
		{name: "a list", env: env("OTEL_TRACES_EXPORTER", "otlp, console,otlp", "OTEL_METRICS_EXPORTER", "console"),
			traces: exportPlan{[]string{"otlp", "console"}, "http/protobuf"}, metrics: exportPlan{[]string{"console"}, ""}},
		{name: "none", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_TRACES_EXPORTER", "None"),
			metrics: exportPlan{[]string{"otlp"}, "http/protobuf"}},
		{name: "none in a list", env: env("OTEL_TRACES_EXPORTER", "none,console"), warning: `OTEL_TRACES_EXPORTER="none,console": none turns traces off`},
		{name: "unknown exporter", env: env("OTEL_TRACES_EXPORTER", "otlp,zipkin", "OTEL_METRICS_EXPORTER", "otlp"),
			metrics: exportPlan{[]string{"otlp"}, "http/protobuf"}, warning: `OTEL_TRACES_EXPORTER="otlp,zipkin": zipkin not supported`},
		{name: "http/json", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
			warning: "OTEL_EXPORTER_OTLP_PROTOCOL=http/json: the Go OTLP exporters send http/protobuf, not JSON"},
		{name: "http/json for metrics only", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/json"),
			traces: exportPlan{[]string{"otlp"}, "http/protobuf"}, warning: "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http/json"},
		{name: "unknown protocol", env: env("OTEL_TRACES_EXPORTER", "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "thrift"),
			warning: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="thrift": want http/protobuf (the only OTLP protocol toolselect sends); traces are off`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tp, tw := traces.plan(c.env)
			mp, mw := metrics.plan(c.env)
			assert.Equal(t, c.traces, tp, "traces")
			assert.Equal(t, c.metrics, mp, "metrics")
			w := strings.Join(append(tw, mw...), "\n")
			if c.warning == "" {
				assert.Empty(t, w)
			} else {
				assert.Contains(t, w, c.warning)
			}
		})
	}
}

func TestEnabled(t *testing.T) {
	assert.False(t, enabled(env()))
	assert.False(t, enabled(env("OTEL_TRACES_EXPORTER", "none", "OTEL_METRICS_EXPORTER", "NONE")))
	assert.True(t, enabled(env("OTEL_TRACES_EXPORTER", "console")))
	assert.True(t, enabled(env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://c")))
	assert.False(t, enabled(env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c", "OTEL_SDK_DISABLED", "TRUE")))
}

func TestServiceName(t *testing.T) {
	assert.Equal(t, "toolselect", serviceName(env()))
	assert.Equal(t, "from-attrs", serviceName(env("OTEL_RESOURCE_ATTRIBUTES", "team=a, service.name=from-attrs")))
	assert.Equal(t, "from-var", serviceName(env("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs", "OTEL_SERVICE_NAME", "from-var")))
}

// Setup with console traces and an unknown metrics exporter: traces are
// installed and written, metrics are off, and the warning says why.
func TestSetupInstallsWhatItCanAndWarns(t *testing.T) {
	prevT, prevM := otel.GetTracerProvider(), otel.GetMeterProvider()
	t.Cleanup(func() {
		otel.SetTracerProvider(prevT)
		otel.SetMeterProvider(prevM)
		setupMu.Lock()
		shutdown, flushers = nil, nil
		setupMu.Unlock()
	})
	var out bytes.Buffer
	stop, warnings := Setup(context.Background(), env("OTEL_TRACES_EXPORTER", "console", "OTEL_METRICS_EXPORTER", "prometheus",
		"OTEL_SDK_DISABLED", "no"), &out)
	require.Error(t, warnings)
	assert.Contains(t, warnings.Error(), `OTEL_METRICS_EXPORTER="prometheus": prometheus not supported`)
	assert.Contains(t, warnings.Error(), `OTEL_SDK_DISABLED="no" is not a boolean`)
	_, isSDK := otel.GetTracerProvider().(*sdktrace.TracerProvider)
	assert.True(t, isSDK, "traces are installed")
	_, isSDKMeter := otel.GetMeterProvider().(*sdkmetric.MeterProvider)
	assert.False(t, isSDKMeter, "metrics are not")
	_, span := telemetry.Tracer().Start(context.Background(), "console-span")
	span.End()
	require.NoError(t, stop(context.Background()))
	assert.Contains(t, out.String(), "console-span")

	again, w2 := Setup(context.Background(), env("OTEL_TRACES_EXPORTER", "console"), &out)
	assert.NoError(t, w2)
	assert.NoError(t, again(context.Background()), "a second Setup installs nothing")
}
