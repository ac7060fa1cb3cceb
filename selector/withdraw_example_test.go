package selector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolselect/toolselect/modeltest"
	"github.com/toolselect/toolselect/rank/feedbackstore"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// A selection with calls is recorded as feedback under its FeedbackQuery;
// when running a call fails, Withdraw takes the selection back and says how
// many pairs it matched. Withdrawing what is not recorded is an error.
func ExampleToolSelector_Withdraw() {
	dir, _ := os.MkdirTemp("", "feedback")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	learner, err := feedbackstore.OpenLearner(ctx, filepath.Join(dir, "feedback.jsonl"), nil)
	if err != nil {
		panic(err)
	}
	defer learner.Close()

	fake := modeltest.NewServer(modeltest.Reply{Calls: []modeltest.Call{{Tool: "get_weather", Args: map[string]any{"city": "Oslo"}}}})
	defer fake.Close()
	cfg := selector.Config{Settings: selector.Settings{BaseURL: fake.URL}, Recorder: learner}
	client, _ := selector.NewOpenAIClient(&cfg, nil)
	sel, _ := selector.New(client, &cfg)
	reg := registry.New(nil)
	_ = reg.Register(registry.NewTool("get_weather", "Current weather for a city.", json.RawMessage(`{"type":"object"}`)))

	res, err := sel.Select(ctx, selector.Request{Registry: reg, Task: selector.Task{
		Description: "Plan a day in Oslo", SubTasks: []selector.SubTask{{Description: "check the weather"}}}})
	if err != nil {
		panic(err)
	}
	fmt.Printf("recorded under %q\n", res.FeedbackQuery)
	n, err := sel.Withdraw(ctx, res) // or learner.Withdraw(ctx, res.FeedbackQuery, tools)
	fmt.Println(n, err)
	_, err = sel.Withdraw(ctx, res)
	fmt.Println(err != nil)
	// Output:
	// recorded under "Plan a day in Oslo\ncheck the weather"
	// 1 <nil>
	// true
}
