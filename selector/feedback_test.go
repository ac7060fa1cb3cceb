package selector_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/rank/feedbackstore"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

func feedbackRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New(nil)
	city := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	require.NoError(t, reg.RegisterAll([]registry.Tool{
		registry.NewTool("get_forecast", "Weather forecast for a city.", city),
		registry.NewTool("send_email", "Send an email message.", json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}`)),
		registry.NewTool("trip_planner", "Plan a trip itinerary between cities.", city),
	}))
	return reg
}

// A selection is recorded under the task text, with only the calls that
// passed validation; the next ranking offers the learned tool for a
// paraphrase whose words its description lacks.
func TestSelectionRecordedAsFeedback(t *testing.T) {
	reg := feedbackRegistry(t)
	path := filepath.Join(t.TempDir(), "feedback.jsonl")
	ctx := context.Background()
	l, err := feedbackstore.OpenLearner(ctx, path, nil)
	require.NoError(t, err)
	var cfg selector.Config
	cfg.FailOpen = true // keep the valid call, drop the invalid one
	cfg.Feedback = path
	client := &recordingClient{reply: selector.ChatResponse{Content: `{"calls":[
		{"tool":"get_forecast","args":{"city":"Chamonix"}},
		{"tool":"send_email","args":{"to":3}}]}`}}
	prefilter := rank.For(reg).Prefilter(&rank.Options{MaxCandidates: 2, Feedback: l.Feedback()})
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Recorder = l
	cfg.Prefilter = prefilter
	sel, err := selector.New(client, &cfg)
	require.NoError(t, err)

	// Before: nothing learned, the paraphrase is not offered get_forecast.
	para := selector.Request{Registry: reg, Task: selector.Task{Description: "is snow expected on my ski trip to Chamonix?"}}
	res, err := sel.Select(ctx, para)
	require.NoError(t, err)
	assert.NotContains(t, res.Offered, "get_forecast")

	// A selection over every tool (no prefilter for this request) is recorded.
	task := "will it snow during my ski holiday in Chamonix next week"
	res, err = sel.Select(ctx, selector.Request{Registry: reg, Task: selector.Task{Description: task},
		Prefilter: func(_ context.Context, _ string, e []*registry.Entry) ([]*registry.Entry, error) { return e, nil }})
	require.NoError(t, err)
	require.Len(t, res.Calls, 1)
	assert.Empty(t, res.FeedbackError)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `{"query":"`+task+`","tools":["get_forecast"]}`+"\n", string(b), "only the validated call is recorded, under the task text")

	// After: the paraphrase is offered the learned tool.
	res, err = sel.Select(ctx, para)
	require.NoError(t, err)
	assert.Contains(t, res.Offered, "get_forecast")
}

func TestFailedSelectionIsNotRecorded(t *testing.T) {
	reg := feedbackRegistry(t)
	path := filepath.Join(t.TempDir(), "feedback.jsonl")
	l, err := feedbackstore.OpenLearner(context.Background(), path, nil)
	require.NoError(t, err)
	var cfg selector.Config
	cfg.Feedback = path
	client := &recordingClient{reply: selector.ChatResponse{Content: `{"calls":[{"tool":"get_forecast","args":{}}]}`}}
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Recorder = l
	sel, err := selector.New(client, &cfg)
	require.NoError(t, err)
	_, err = sel.Select(context.Background(), selector.Request{Registry: reg, Task: selector.Task{Description: "snow in Chamonix?"}})
	require.ErrorIs(t, err, selector.ErrFailClosed)
	_, err = os.Stat(path)
	assert.True(t, errors.Is(err, os.ErrNotExist), "a failed selection was recorded")
}

func TestFeedbackStoreFailureIsReported(t *testing.T) {
	reg := feedbackRegistry(t)
	path := filepath.Join(t.TempDir(), "missing-dir", "feedback.jsonl")
	st, err := feedbackstore.Open(path)
	require.NoError(t, err)
	l := feedbackstore.NewLearner(st, nil)
	var cfg selector.Config
	cfg.Feedback = path
	client := &recordingClient{reply: selector.ChatResponse{Content: `{"calls":[{"tool":"get_forecast","args":{"city":"Oslo"}}]}`}}
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Recorder = l
	sel, err := selector.New(client, &cfg)
	require.NoError(t, err)
	res, err := sel.Select(context.Background(), selector.Request{Registry: reg, Task: selector.Task{Description: "snow in Oslo?"}})
	require.NoError(t, err)
	assert.Len(t, res.Calls, 1, "the calls stand")
	assert.Contains(t, res.FeedbackError, "missing-dir")
}

func TestFeedbackConfig(t *testing.T) {
	for _, ok := range []string{"", "/var/lib/ts/feedback.jsonl", "feedback.jsonl", "redis://localhost:6379/2", "rediss://:pw@cache.internal:6380"} {
		_, err := selector.ConfigFromEnvMap(map[string]string{selector.EnvPrefix + "FEEDBACK": ok})
		assert.NoError(t, err, ok)
	}
	for _, bad := range []string{"http://example.com/x", "redis://", "redis://host:99999", "redis://host/abc", "a\x01b"} {
		_, err := selector.ConfigFromEnvMap(map[string]string{selector.EnvPrefix + "FEEDBACK": bad})
		var ce *selector.ConfigError
		require.ErrorAs(t, err, &ce, bad)
		assert.Equal(t, selector.EnvPrefix+"FEEDBACK", ce.Var)
		assert.Contains(t, err.Error(), "redis://", "the error says what is accepted")
	}
	// A password never shows.
	_, err := selector.ConfigFromEnvMap(map[string]string{selector.EnvPrefix + "FEEDBACK": "redis://:s3cret@host:99999"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "s3cret")
	var cfg selector.Config
	cfg.Feedback = "redis://:s3cret@host:6379"
	assert.NotContains(t, cfg.String(), "s3cret")
	// A configured store without a recorder is refused, not ignored.
	_, err = selector.New(nil, &cfg)
	require.ErrorIs(t, err, selector.ErrInvalidConfig)
	assert.True(t, strings.Contains(err.Error(), "Config.Recorder"), err.Error())
	assert.NotContains(t, err.Error(), "s3cret")
}

// The same through the offer budget (rank.Offering): above the budget the
// ranked top K is offered, and feedback takes part in that ranking.
func TestFeedbackInTheOfferBudget(t *testing.T) {
	reg := feedbackRegistry(t)
	path := filepath.Join(t.TempDir(), "feedback.jsonl")
	ctx := context.Background()
	l, err := feedbackstore.OpenLearner(ctx, path, nil)
	require.NoError(t, err)
	var cfg selector.Config
	cfg.Feedback = path
	cfg.OfferTokens, cfg.TopK = 1, 2 // always over budget: offer the ranked top 2
	client := &recordingClient{reply: selector.ChatResponse{Content: `{"calls":[{"tool":"get_forecast","args":{"city":"Chamonix"}}]}`}}
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Recorder = l
	cfg.Ranker = &rank.Offering{Options: rank.Options{Feedback: l.Feedback()}}
	sel, err := selector.New(client, &cfg)
	require.NoError(t, err)
	para := selector.Request{Registry: reg, Task: selector.Task{Description: "is snow expected on my ski trip to Chamonix?"}}
	res, _ := sel.Select(ctx, para) // fails closed: the model calls a tool that was not offered
	assert.NotContains(t, res.Offered, "get_forecast")
	require.NoError(t, l.Record(ctx, "will it snow during my ski holiday in Chamonix next week", []string{"get_forecast"}))
	res, err = sel.Select(ctx, para)
	require.NoError(t, err)
	assert.Contains(t, res.Offered, "get_forecast")
	require.Len(t, res.Calls, 1)
	b, _ := os.ReadFile(path)
	assert.Contains(t, string(b), `{"query":"is snow expected on my ski trip to Chamonix?","tools":["get_forecast"]}`)
}
