// Package otlphttp sends traces and metrics to an OpenTelemetry collector
// over OTLP/HTTP with protobuf bodies (http/protobuf), configured from the
// OTEL_EXPORTER_OTLP_* environment ([FromEnv]).
//
// It stands in for the SDK's otlptracehttp and otlpmetrichttp exporters,
// which marshal the collector service packages of
// go.opentelemetry.io/proto/otlp; those packages hold the gRPC service
// stubs as well, so they link google.golang.org/grpc and its HTTP tracing
// page (html/template) into every binary that exports over HTTP: about
// 6 MB of the command, and html/template's reflection keeps every method of
// every linked type (docs/packaging.md). The messages are written with
// protowire (encode.go); the tests decode them with the generated types.
package otlphttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// client posts encoded requests to one URL.
type client struct {
	cfg  Config
	http *http.Client

	mu      sync.Mutex
	stopped bool
}

func newClient(cfg Config) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.TLS != nil {
		tr.TLSClientConfig = cfg.TLS
	}
	return &client{cfg: cfg, http: &http.Client{Transport: tr}}
}

// Retries: the statuses the OTLP/HTTP specification names as retryable and
// an attempt that timed out, a first wait that doubles up to a ceiling, and
// a Retry-After header honoured when the server sends one. Everything stays inside the export's
// timeout (OTEL_EXPORTER_OTLP_TIMEOUT) and the caller's context.
const (
	firstWait = 500 * time.Millisecond
	maxWait   = 5 * time.Second
)

func retryable(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// post sends body, retrying as above, and returns the last failure.
func (c *client) post(ctx context.Context, body []byte) error {
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if stopped {
		return errors.New("otlp: the exporter is shut down")
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	payload := body
	if c.cfg.Gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		if err := zw.Close(); err != nil {
			return err
		}
		payload = buf.Bytes()
	}
	wait := firstWait
	for {
		next, err := c.try(ctx, payload)
		if err == nil {
			return nil
		}
		if next < 0 {
			return err
		}
		if next == 0 {
			next = wait
			wait = min(2*wait, maxWait)
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up: %v)", err, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// try makes one request. It returns how long to wait before the next try
// (0: the backoff's next step; -1: do not retry) and the failure.
func (c *client) try(ctx context.Context, payload []byte) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, bytes.NewReader(payload))
	if err != nil {
		return -1, err
	}
	for k, v := range c.cfg.Headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "toolselect-otlp/1 (OTLP over HTTP, protobuf)")
	if c.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// An attempt that timed out is tried again (as the SDK's exporters
		// do); a refused connection or a certificate that does not verify
		// would fail the same way until the timeout, and is reported now.
		var urlErr *url.Error
		if ctx.Err() == nil && errors.As(err, &urlErr) && urlErr.Timeout() {
			return 0, fmt.Errorf("otlp: POST %s: %w", c.cfg.URL, err)
		}
		return -1, fmt.Errorf("otlp: POST %s: %w", c.cfg.URL, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return 0, nil
	}
	err = fmt.Errorf("otlp: POST %s: %s", c.cfg.URL, resp.Status)
	if text := printable(msg); text != "" {
		err = fmt.Errorf("%w: %s", err, text)
	}
	if !retryable(resp.StatusCode) {
		return -1, err
	}
	if s, perr := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); perr == nil && s > 0 {
		return time.Duration(s) * time.Second, err
	}
	return 0, err
}

// printable is a response body's text when it is text (a collector's error
// is often a protobuf Status, which is not shown).
func printable(b []byte) string {
	s := strings.TrimSpace(string(b))
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0xfffd {
			return ""
		}
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func (c *client) shutdown() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.http.CloseIdleConnections()
}

// SpanExporter sends spans; see [NewSpanExporter].
type SpanExporter struct{ c *client }

// NewSpanExporter returns an exporter posting to cfg.URL (a Config from
// FromEnv(Traces, ...)).
func NewSpanExporter(cfg Config) *SpanExporter { return &SpanExporter{newClient(cfg)} }

// ExportSpans implements sdktrace.SpanExporter.
func (e *SpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	return e.c.post(ctx, EncodeTraces(spans))
}

// Shutdown implements sdktrace.SpanExporter.
func (e *SpanExporter) Shutdown(context.Context) error {
	e.c.shutdown()
	return nil
}

// MetricExporter sends metrics; see [NewMetricExporter].
type MetricExporter struct{ c *client }

// NewMetricExporter returns an exporter posting to cfg.URL (a Config from
// FromEnv(Metrics, ...)), with its temporality and aggregation.
func NewMetricExporter(cfg Config) *MetricExporter {
	if cfg.Temporality == nil {
		cfg.Temporality = sdkmetric.DefaultTemporalitySelector
	}
	if cfg.Aggregation == nil {
		cfg.Aggregation = sdkmetric.DefaultAggregationSelector
	}
	return &MetricExporter{newClient(cfg)}
}

// Temporality implements sdkmetric.Exporter.
func (e *MetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return e.c.cfg.Temporality(k)
}

// Aggregation implements sdkmetric.Exporter.
func (e *MetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return e.c.cfg.Aggregation(k)
}

// Export implements sdkmetric.Exporter.
func (e *MetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if rm == nil || len(rm.ScopeMetrics) == 0 {
		return nil
	}
	return e.c.post(ctx, EncodeMetrics(rm))
}

// ForceFlush implements sdkmetric.Exporter: nothing is held here.
func (e *MetricExporter) ForceFlush(context.Context) error { return nil }

// Shutdown implements sdkmetric.Exporter.
func (e *MetricExporter) Shutdown(context.Context) error {
	e.c.shutdown()
	return nil
}

var (
	_ sdktrace.SpanExporter = (*SpanExporter)(nil)
	_ sdkmetric.Exporter    = (*MetricExporter)(nil)
)
