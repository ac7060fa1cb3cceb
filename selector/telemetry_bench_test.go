package selector

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkSelectTracing is one selection (the test registry, a client that
// answers at once) with telemetry off (no provider installed:
// OpenTelemetry's no-op, what a process without OTEL_* runs) and on (SDK
// providers: spans go to an in-memory exporter through the batcher, as
// OTLP's would, and the selection metrics are aggregated by a meter
// provider, read by a manual reader so no export runs during the loop).
//
//	go test ./selector -run '^$' -bench SelectTracing -count 6
func BenchmarkSelectTracing(b *testing.B) {
	reg := newTestRegistry(b)
	sel := newSel(b, instantClient{}, nil)
	req := Request{Task: Task{Description: "Find the weather in Paris and email it to bob."}, Registry: reg}
	run := func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sel.Select(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("off", run)
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewInMemoryExporter()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		prevT, prevM := otel.GetTracerProvider(), otel.GetMeterProvider()
		otel.SetTracerProvider(tp)
		otel.SetMeterProvider(mp)
		defer func() {
			otel.SetTracerProvider(prevT)
			otel.SetMeterProvider(prevM)
			_ = tp.Shutdown(context.Background())
			_ = mp.Shutdown(context.Background())
		}()
		run(b)
	})
}

// instantClient answers every request at once with validReply.
type instantClient struct{}

func (instantClient) Chat(context.Context, ChatRequest) (ChatResponse, error) {
	return ChatResponse{Content: validReply, PromptTokens: 100, CompletionTokens: 20, FinishReason: "stop"}, nil
}
