package selector

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolselect/toolselect/internal/testing/telemetrytest"
	"github.com/toolselect/toolselect/registry"
)

// selectionCounts is toolselect.selections by outcome, and the duration
// histogram's count and bounds by outcome.
func selectionCounts(t *testing.T, reader *sdkmetric.ManualReader) (counts, durations map[string]int64, bounds []float64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	counts, durations = map[string]int64{}, map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case "toolselect.selections":
				assert.Equal(t, "{selection}", m.Unit)
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					v, _ := dp.Attributes.Value("toolselect.outcome")
					counts[v.AsString()] += dp.Value
				}
			case "toolselect.selection.duration":
				assert.Equal(t, "s", m.Unit)
				for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					v, _ := dp.Attributes.Value("toolselect.outcome")
					durations[v.AsString()] += int64(dp.Count)
					bounds = dp.Bounds
				}
			}
		}
	}
	return counts, durations, bounds
}

// spansNamed returns the ended spans with that name.
func spansNamed(rec *tracetest.SpanRecorder, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// Every selection is counted with its outcome kind and gets a span: the
// ones refused before a Session exists (no_client, bad_request) and the
// ones whose ranking failed (prefilter) too. The duration histogram has
// boundaries in seconds.
func TestEverySelectionIsCounted(t *testing.T) {
	rec, reader := telemetrytest.Install(t)
	ctx := context.Background()

	noClient := newSel(t, nil, cfgWith(nil))
	_, err := noClient.Select(ctx, testRequest(t))
	require.ErrorIs(t, err, ErrNoClient)

	sel := newSel(t, &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(validReply)}}, cfgWith(nil))
	_, err = sel.Select(ctx, Request{Task: Task{Description: "x"}})
	require.ErrorIs(t, err, ErrBadRequest)
	_, err = sel.Begin(ctx, Request{Registry: newTestRegistry(t)})
	require.ErrorIs(t, err, ErrBadRequest)

	failingRank := newSel(t, &fakeClient{}, cfgWith(nil), withPrefilter(func(context.Context, string, []*registry.Entry) ([]*registry.Entry, error) {
		return nil, errors.New("index down: PREFILTERSECRET")
	}))
	_, err = failingRank.Select(ctx, testRequest(t))
	require.Error(t, err)
	assert.Equal(t, "prefilter", ErrorKind(err))

	_, err = sel.Select(ctx, testRequest(t))
	require.NoError(t, err)

	counts, durations, bounds := selectionCounts(t, reader)
	want := map[string]int64{"no_client": 1, "bad_request": 2, "prefilter": 1, "ok": 1}
	assert.Equal(t, want, counts)
	assert.Equal(t, want, durations, "every counted selection is timed")
	assert.Equal(t, durationBuckets, bounds, "explicit boundaries in seconds, not the SDK's 0, 5, 10, ... 10000")
	assert.Equal(t, 0.01, bounds[0])

	byOutcome := map[string]int{}
	for _, s := range spansNamed(rec, "toolselect.select") {
		a := attrs(s)
		outcome := a["toolselect.outcome"].AsString()
		byOutcome[outcome]++
		if outcome == "ok" {
			assert.Equal(t, codes.Unset, s.Status().Code)
			continue
		}
		assert.Equal(t, outcome, a["error.type"].AsString())
		assert.Equal(t, codes.Error, s.Status().Code)
	}
	assert.Equal(t, map[string]int{"no_client": 1, "bad_request": 2, "prefilter": 1, "ok": 1}, byOutcome)
}
