package otlphttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// The reference: the SDK's own OTLP/HTTP exporters, linked by these tests
// only. Each test sends the same data through the reference and through
// this package and requires the two request bodies to decode to equal
// messages (the generated types of go.opentelemetry.io/proto/otlp).

// capture serves one collector URL and keeps the request bodies it gets.
func capture(t *testing.T) (url string, bodies func() [][]byte) {
	t.Helper()
	var mu sync.Mutex
	var got [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return append([][]byte(nil), got...)
	}
}

// referenceBody is the one request body send (the reference exporter,
// exporting to a collector at url) makes.
func referenceBody(t *testing.T, send func(ctx context.Context, url string) error) []byte {
	t.Helper()
	url, bodies := capture(t)
	require.NoError(t, send(context.Background(), url))
	got := bodies()
	require.Len(t, got, 1)
	return got[0]
}

func equalMessages(t *testing.T, want, got proto.Message) {
	t.Helper()
	require.True(t, proto.Equal(want, got), "the reference exporter sent\n%s\nthis package sent\n%s", prototext.Format(want), prototext.Format(got))
}

func testSpans() []sdktrace.ReadOnlySpan {
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "svc"), attribute.Int("pid", 42))
	other := resource.NewSchemaless(attribute.String("service.name", "other"))
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, _ := trace.ParseTraceState("vendor=value,other=x")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1, 1, 1, 1, 1, 1, 1, 1}, TraceFlags: trace.FlagsSampled, TraceState: ts})
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{2, 2, 2, 2, 2, 2, 2, 2}, TraceFlags: trace.FlagsSampled, Remote: true})
	local := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{3, 3, 3, 3, 3, 3, 3, 3}})
	start := time.Unix(1700000000, 123456789)
	scope := instrumentation.Scope{Name: "toolselect", Version: "1.2.3", SchemaURL: "https://opentelemetry.io/schemas/1.26.0",
		Attributes: attribute.NewSet(attribute.String("scope.attr", "v"))}
	stubs := tracetest.SpanStubs{
		{
			Name: "toolselect.select", SpanContext: sc, Parent: parent, SpanKind: trace.SpanKindServer,
			StartTime: start, EndTime: start.Add(1500 * time.Millisecond),
			Attributes: []attribute.KeyValue{
				attribute.String("s", "text é"), attribute.Bool("b", true), attribute.Bool("f", false), attribute.Int64("i", -7),
				attribute.Int64("zero", 0), attribute.Float64("x", 0.25), attribute.Float64("fz", 0),
				attribute.StringSlice("ss", []string{"a", "", "c"}), attribute.Int64Slice("is", []int64{1, -2}),
				attribute.Float64Slice("fs", []float64{1.5}), attribute.BoolSlice("bs", []bool{true, false}),
				attribute.String("empty", ""),
			},
			Events: []sdktrace.Event{
				{Name: "retry", Time: start.Add(time.Millisecond), Attributes: []attribute.KeyValue{attribute.Int("attempt", 2)}, DroppedAttributeCount: 1},
				{Name: "bare", Time: start.Add(2 * time.Millisecond)},
			},
			Links: []sdktrace.Link{
				{SpanContext: parent, Attributes: []attribute.KeyValue{attribute.String("why", "follows")}, DroppedAttributeCount: 2},
				{SpanContext: local},
			},
			Status:            sdktrace.Status{Code: codes.Error, Description: "the model timed out"},
			DroppedAttributes: 3, DroppedEvents: 4, DroppedLinks: 5, ChildSpanCount: 1,
			Resource: res, InstrumentationScope: scope,
		},
		{
			Name: "chat glm", SpanContext: local, Parent: sc, SpanKind: trace.SpanKindClient,
			StartTime: start, EndTime: start.Add(time.Second), Status: sdktrace.Status{Code: codes.Ok},
			Resource: res, InstrumentationScope: scope,
		},
		{
			Name: "root, no status", SpanContext: local, StartTime: start, EndTime: start,
			Resource: other, InstrumentationScope: instrumentation.Scope{Name: "another"},
		},
		{
			Name: "same resource, second scope", SpanContext: sc, SpanKind: trace.SpanKindInternal, StartTime: start, EndTime: start,
			Resource: res, InstrumentationScope: instrumentation.Scope{Name: "another"},
		},
	}
	return stubs.Snapshots()
}

func TestTracesEncodeAsTheReferenceDoes(t *testing.T) {
	spans := testSpans()
	body := referenceBody(t, func(ctx context.Context, url string) error {
		ref, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url+"/v1/traces"))
		if err == nil {
			err = errors.Join(ref.ExportSpans(ctx, spans), ref.Shutdown(ctx))
		}
		return err
	})
	var want, mine coltracepb.ExportTraceServiceRequest
	require.NoError(t, proto.Unmarshal(body, &want))
	require.NoError(t, proto.Unmarshal(EncodeTraces(spans), &mine))
	// The reference groups spans through maps, so the order of resources
	// and of a resource's scopes changes from run to run: compare in one
	// order (spans keep theirs).
	for _, m := range []*coltracepb.ExportTraceServiceRequest{&want, &mine} {
		slices.SortFunc(m.ResourceSpans, func(a, b *tracepb.ResourceSpans) int {
			return strings.Compare(prototext.Format(a.Resource), prototext.Format(b.Resource))
		})
		for _, rs := range m.ResourceSpans {
			slices.SortFunc(rs.ScopeSpans, func(a, b *tracepb.ScopeSpans) int {
				return strings.Compare(prototext.Format(a.Scope), prototext.Format(b.Scope))
			})
		}
	}
	equalMessages(t, &want, &mine)
}

func testMetrics() *metricdata.ResourceMetrics {
	start := time.Unix(1700000000, 5)
	now := start.Add(time.Minute)
	set := attribute.NewSet(attribute.String("tool", "get_weather"), attribute.String("outcome", "ok"))
	ex := []metricdata.Exemplar[float64]{{FilteredAttributes: []attribute.KeyValue{attribute.String("user", "u")}, Time: now, Value: 0.5,
		SpanID: []byte{1, 2, 3, 4, 5, 6, 7, 8}, TraceID: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}}
	exInt := []metricdata.Exemplar[int64]{{Time: now, Value: 0}}
	return &metricdata.ResourceMetrics{
		Resource: resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "svc")),
		ScopeMetrics: []metricdata.ScopeMetrics{{
			Scope: instrumentation.Scope{Name: "toolselect", Version: "v1", SchemaURL: "https://opentelemetry.io/schemas/1.26.0",
				Attributes: attribute.NewSet(attribute.Bool("s", true))},
			Metrics: []metricdata.Metrics{
				{Name: "calls", Description: "Tool calls.", Unit: "{call}", Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
					DataPoints: []metricdata.DataPoint[int64]{{Attributes: set, StartTime: start, Time: now, Value: 7, Exemplars: exInt}, {StartTime: start, Time: now, Value: 0}}}},
				{Name: "inflight", Data: metricdata.Sum[float64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.DataPoint[float64]{{Time: now, Value: -1.5, Exemplars: ex}}}},
				{Name: "tokens", Unit: "{token}", Data: metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Attributes: set, Time: now, Value: -3}}}},
				{Name: "ratio", Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Time: now, Value: 0}}}},
				{Name: "latency", Unit: "s", Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality,
					DataPoints: []metricdata.HistogramDataPoint[float64]{
						{Attributes: set, StartTime: start, Time: now, Count: 3, Bounds: []float64{0.1, 1, 10}, BucketCounts: []uint64{1, 0, 2, 0},
							Min: metricdata.NewExtrema(0.05), Max: metricdata.NewExtrema(7.0), Sum: 8.5, Exemplars: ex},
						{StartTime: start, Time: now, Bounds: []float64{1}, BucketCounts: []uint64{0, 0}},
					}}},
				{Name: "sizes", Data: metricdata.Histogram[int64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.HistogramDataPoint[int64]{{Time: now, Count: 1, Bounds: []float64{}, BucketCounts: []uint64{1}, Sum: 4,
						Min: metricdata.NewExtrema[int64](4), Max: metricdata.NewExtrema[int64](4)}}}},
				{Name: "exp", Data: metricdata.ExponentialHistogram[float64]{Temporality: metricdata.CumulativeTemporality,
					DataPoints: []metricdata.ExponentialHistogramDataPoint[float64]{{Attributes: set, StartTime: start, Time: now, Count: 5, Sum: -2.5,
						Scale: -3, ZeroCount: 1, ZeroThreshold: 1e-9, Min: metricdata.NewExtrema(-2.0), Max: metricdata.NewExtrema(3.0),
						PositiveBucket: metricdata.ExponentialBucket{Offset: -2, Counts: []uint64{1, 0, 300}},
						NegativeBucket: metricdata.ExponentialBucket{Offset: 3, Counts: []uint64{2}}, Exemplars: ex}}}},
				{Name: "exp-int", Data: metricdata.ExponentialHistogram[int64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.ExponentialHistogramDataPoint[int64]{{Time: now}}}},
				{Name: "summary", Data: metricdata.Summary{DataPoints: []metricdata.SummaryDataPoint{{Attributes: set, StartTime: start, Time: now, Count: 2, Sum: 3,
					QuantileValues: []metricdata.QuantileValue{{Quantile: 0, Value: 1}, {Quantile: 0.5, Value: 1.5}}}}}},
			},
		}},
	}
}

func TestMetricsEncodeAsTheReferenceDoes(t *testing.T) {
	rm := testMetrics()
	body := referenceBody(t, func(ctx context.Context, url string) error {
		ref, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(url+"/v1/metrics"))
		if err == nil {
			err = errors.Join(ref.Export(ctx, rm), ref.Shutdown(ctx))
		}
		return err
	})
	var want, mine colmetricpb.ExportMetricsServiceRequest
	require.NoError(t, proto.Unmarshal(body, &want))
	require.NoError(t, proto.Unmarshal(EncodeMetrics(rm), &mine))
	equalMessages(t, &want, &mine)
}
