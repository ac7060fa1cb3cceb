package feedbackstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/toolselect/toolselect/modeltest"
	"github.com/toolselect/toolselect/rank/feedbackstore"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// A selection's result carries the text it was recorded under; withdrawing
// takes that text or the selection itself, says how many pairs matched, and
// a withdrawal that matches nothing is an error.
func TestWithdrawTheSelection(t *testing.T) {
	ctx := context.Background()
	l, err := feedbackstore.OpenLearner(ctx, filepath.Join(t.TempDir(), "fb.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	reg := registry.New(nil)
	if err := reg.Register(registry.NewTool("get_weather", "Current weather for a city.",
		json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`))); err != nil {
		t.Fatal(err)
	}
	fake := modeltest.NewServer(modeltest.Reply{Calls: []modeltest.Call{{Tool: "get_weather", Args: map[string]any{"city": "Oslo"}}}})
	defer fake.Close()
	cfg := selector.Config{Settings: selector.Settings{BaseURL: fake.URL}, Recorder: l}
	client, err := selector.NewOpenAIClient(&cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := selector.New(client, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := selector.Request{Registry: reg, Task: selector.Task{Description: "Plan a day in Oslo", SubTasks: []selector.SubTask{{Description: "check the weather"}}}}
	res, err := sel.Select(ctx, req)
	if err != nil || res.FeedbackError != "" {
		t.Fatalf("select: %v %q", err, res.FeedbackError)
	}
	if want := "Plan a day in Oslo\ncheck the weather"; res.FeedbackQuery != want {
		t.Fatalf("FeedbackQuery = %q, want %q", res.FeedbackQuery, want)
	}
	if n, err := sel.Withdraw(ctx, res); err != nil || n != 1 {
		t.Fatalf("Withdraw(the selection) = %d, %v; want 1", n, err)
	}
	if n, err := sel.Withdraw(ctx, res); !errors.Is(err, feedbackstore.ErrNotRecorded) || n != 0 {
		t.Errorf("a second Withdraw = %d, %v; want ErrNotRecorded", n, err)
	}

	res, err = sel.Select(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := l.Withdraw(ctx, res.FeedbackQuery, []string{"get_weather", "get_weather"}); err != nil || n != 1 {
		t.Errorf("Withdraw(FeedbackQuery) = %d, %v; want 1", n, err)
	}
	if n, err := l.Withdraw(ctx, "Plan a day in Oslo", []string{"get_weather"}); !errors.Is(err, feedbackstore.ErrNotRecorded) || n != 0 {
		t.Errorf("Withdraw of the description alone = %d, %v; want ErrNotRecorded", n, err)
	}
	if _, err := sel.Withdraw(ctx, &selector.Result{}); !errors.Is(err, selector.ErrBadRequest) {
		t.Errorf("Withdraw of a selection without calls: %v", err)
	}
}
