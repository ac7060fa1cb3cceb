package otlphttp

import (
	"compress/gzip"
	"context"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestEndpoints(t *testing.T) {
	for _, c := range []struct {
		env     func(string) string
		sig     Signal
		url     string
		problem string
	}{
		{env(), Traces, "http://localhost:4318/v1/traces", ""},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c.example:4318"), Metrics, "https://c.example:4318/v1/metrics", ""},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/otel/"), Traces, "http://c:4318/otel/v1/traces", ""},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:9/custom"), Traces, "http://t:9/custom", ""},
		{env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:9"), Traces, "http://t:9/", ""},
		{env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:9"), Metrics, "http://localhost:4318/v1/metrics", ""},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "c:4317"), Traces, "", `OTEL_EXPORTER_OTLP_ENDPOINT="c:4317": want an http:// or https:// URL`},
		{env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "grpc://c"), Metrics, "", `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT="grpc://c"`},
	} {
		cfg, _, err := FromEnv(c.sig, c.env)
		if c.problem != "" {
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.problem)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.url, cfg.URL)
	}
}

func TestSettingsAndWarnings(t *testing.T) {
	cfg, warnings, err := FromEnv(Traces, env(
		"OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20general-secret, x-team = a ,broken-secret-value,=x",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-team=b",
		"OTEL_EXPORTER_OTLP_TIMEOUT", "250",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip",
	))
	require.NoError(t, err)
	assert.Equal(t, "Bearer general-secret", cfg.Headers.Get("Authorization"))
	assert.Equal(t, "b", cfg.Headers.Get("X-Team"), "the per-signal header wins")
	assert.Equal(t, 250*time.Millisecond, cfg.Timeout)
	assert.True(t, cfg.Gzip)
	require.Len(t, warnings, 2)
	joined := strings.Join(warnings, "\n")
	assert.Contains(t, joined, `OTEL_EXPORTER_OTLP_HEADERS: "broken-s..." is not key=value`)
	assert.NotContains(t, joined, "secret-value", "a malformed pair may hold a secret")

	cfg, warnings, err = FromEnv(Metrics, env("OTEL_EXPORTER_OTLP_TIMEOUT", "soon", "OTEL_EXPORTER_OTLP_COMPRESSION", "zstd",
		"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "Delta",
		"OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION", "base2_exponential_bucket_histogram"))
	require.NoError(t, err)
	assert.Equal(t, defaultTimeout, cfg.Timeout)
	assert.False(t, cfg.Gzip)
	assert.Contains(t, strings.Join(warnings, "\n"), `OTEL_EXPORTER_OTLP_TIMEOUT="soon": want a number of milliseconds`)
	assert.Contains(t, strings.Join(warnings, "\n"), `OTEL_EXPORTER_OTLP_COMPRESSION="zstd": want gzip or none`)
	assert.Equal(t, metricdata.DeltaTemporality, cfg.Temporality(sdkmetric.InstrumentKindCounter))
	assert.Equal(t, metricdata.DeltaTemporality, cfg.Temporality(sdkmetric.InstrumentKindObservableCounter))
	assert.Equal(t, metricdata.CumulativeTemporality, cfg.Temporality(sdkmetric.InstrumentKindUpDownCounter))
	assert.IsType(t, sdkmetric.AggregationBase2ExponentialHistogram{}, cfg.Aggregation(sdkmetric.InstrumentKindHistogram))

	cfg, _, err = FromEnv(Metrics, env("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "lowmemory"))
	require.NoError(t, err)
	assert.Equal(t, metricdata.DeltaTemporality, cfg.Temporality(sdkmetric.InstrumentKindCounter))
	assert.Equal(t, metricdata.CumulativeTemporality, cfg.Temporality(sdkmetric.InstrumentKindObservableCounter))

	// What an attacker who sets the variable would try: a line break to end
	// the header and add another, a name that is not an HTTP token.
	cfg, warnings, err = FromEnv(Traces, env("OTEL_EXPORTER_OTLP_HEADERS", "x-a=ok%0D%0AX-Injected: 1,bad(name)=v,x-b=fine"))
	require.NoError(t, err)
	assert.Equal(t, http.Header{"X-B": {"fine"}}, cfg.Headers)
	assert.Contains(t, strings.Join(warnings, "\n"), `the value of "x-a" holds control characters`)
	assert.Contains(t, strings.Join(warnings, "\n"), `"bad(name..." is not key=value`)

	_, warnings, _ = FromEnv(Metrics, env("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "sometimes"))
	assert.Contains(t, strings.Join(warnings, "\n"), `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE="sometimes"`)
}

func TestCertificates(t *testing.T) {
	_, _, err := FromEnv(Traces, env("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "OTEL_EXPORTER_OTLP_CERTIFICATE")

	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("hello"), 0o600))
	_, _, err = FromEnv(Traces, env("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", notPEM))
	require.ErrorContains(t, err, "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE="+notPEM+": no PEM certificate")

	_, _, err = FromEnv(Traces, env("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", notPEM))
	require.ErrorContains(t, err, "needs its key")
}

// A collector over TLS whose certificate the CERTIFICATE file names gets the
// spans; without it, the export fails on the unknown authority, at once:
// one connection, no retry.
func TestTLSCollector(t *testing.T) {
	var got, conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pemOf(srv.Certificate().Raw), 0o600))

	cfg, _, err := FromEnv(Traces, env("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL, "OTEL_EXPORTER_OTLP_CERTIFICATE", ca))
	require.NoError(t, err)
	require.NoError(t, NewSpanExporter(cfg).ExportSpans(context.Background(), testSpans()))
	assert.Equal(t, int32(1), got.Load())

	cfg, _, err = FromEnv(Traces, env("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL, "OTEL_EXPORTER_OTLP_TIMEOUT", "2000"))
	require.NoError(t, err)
	conns.Store(0)
	err = NewSpanExporter(cfg).ExportSpans(context.Background(), testSpans())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "certificate")
	assert.Equal(t, int32(1), conns.Load(), "a certificate that does not verify is not tried again")
}

// Retryable statuses are retried (Retry-After honoured), the body arrives
// gzip'd with the headers asked for, and a refusal is not retried and says
// what the collector said.
func TestPostRetriesAndReports(t *testing.T) {
	var calls atomic.Int32
	var lastBody []byte
	var lastHeader http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		lastHeader = r.Header.Clone()
		zr, err := gzip.NewReader(r.Body)
		if err == nil {
			lastBody, _ = io.ReadAll(zr)
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/refuse"):
			http.Error(w, "bad payload: unknown field", http.StatusBadRequest)
		case n == 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		case n == 2:
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	t.Cleanup(srv.Close)
	cfg, _, err := FromEnv(Traces, env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/v1/traces", "OTEL_EXPORTER_OTLP_COMPRESSION", "gzip",
		"OTEL_EXPORTER_OTLP_HEADERS", "api-key=k%3D1"))
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, NewSpanExporter(cfg).ExportSpans(context.Background(), testSpans()))
	assert.Equal(t, int32(3), calls.Load(), "503 and 502 are retried")
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "Retry-After: 1 was waited for")
	assert.Equal(t, "gzip", lastHeader.Get("Content-Encoding"))
	assert.Equal(t, "application/x-protobuf", lastHeader.Get("Content-Type"))
	assert.Equal(t, "k=1", lastHeader.Get("Api-Key"))
	var req coltracepb.ExportTraceServiceRequest
	require.NoError(t, proto.Unmarshal(lastBody, &req))
	assert.Len(t, req.ResourceSpans, 2)

	calls.Store(0)
	cfg.URL = srv.URL + "/refuse"
	err = NewSpanExporter(cfg).ExportSpans(context.Background(), testSpans())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "400 Bad Request: bad payload: unknown field")
	assert.Equal(t, int32(1), calls.Load(), "a 400 is not retried")
}

// A collector that never answers costs the export its timeout, not more.
func TestTimeoutBoundsTheExport(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	t.Cleanup(func() { close(block); srv.Close() })
	cfg, _, err := FromEnv(Metrics, env("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL, "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "300"))
	require.NoError(t, err)
	start := time.Now()
	err = NewMetricExporter(cfg).Export(context.Background(), testMetrics())
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Contains(t, err.Error(), "/v1/metrics")
}

func pemOf(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
