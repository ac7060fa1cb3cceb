package telemetry

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Instruments follows the global meter provider: instruments made for one
// provider are made again when a program (or a test) installs another.
func TestInstrumentsFollowTheProvider(t *testing.T) {
	prev := otel.GetMeterProvider()
	t.Cleanup(func() { otel.SetMeterProvider(prev) })
	var cache InstrumentCache[metric.Int64Counter]
	build := func(m metric.Meter) metric.Int64Counter { c, _ := m.Int64Counter("n"); return c }
	collect := func(r *sdkmetric.ManualReader) int64 {
		var rm metricdata.ResourceMetrics
		require.NoError(t, r.Collect(context.Background(), &rm))
		var n int64
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					n += dp.Value
				}
			}
		}
		return n
	}
	for range 2 {
		r := sdkmetric.NewManualReader()
		otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(r)))
		Instruments(&cache, build).Add(context.Background(), 1)
		assert.Equal(t, int64(1), collect(r), "the measurement reaches the provider installed now")
	}
}
