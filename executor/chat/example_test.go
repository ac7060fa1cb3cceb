package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/executor/chat"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// cannedChat stands in for a model: it always answers the same calls.
type cannedChat string

func (c cannedChat) Chat(context.Context, selector.ChatRequest) (selector.ChatResponse, error) {
	return selector.ChatResponse{Content: string(c)}, nil
}

// Select calls for a task through the selector, then run them.
func ExampleResolve() {
	// In production: client, _ := selector.NewOpenAIClient(&cfg, nil)
	model := cannedChat(`{"calls":[{"tool":"get_metrics","args":{"service":"checkout","metric":"error_rate"},"reasoning":"check the alert"}]}`)
	sel, err := selector.New(model, &selector.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	ex := executor.New(registry.New(nil), nil)
	_ = ex.Register(registry.NewTool("get_metrics", "Read a service metric.",
		json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"},"metric":{"enum":["cpu","error_rate"]}},"required":["service","metric"]}`)),
		func(ctx context.Context, args json.RawMessage) (any, error) { return "error_rate=7.2%", nil })

	calls, err := chat.Resolve(context.Background(), ex, sel.SelectToolCalls, selector.Request{Task: selector.Task{Description: "Why is checkout failing?"}})
	if err != nil {
		panic(err) // errors.Is(err, selector.ErrFailClosed): no calls, every attempt listed
	}
	for _, o := range ex.CallAll(context.Background(), calls) {
		fmt.Println(o.Call.Tool, string(o.Call.Args), "->", o.Result.Content(), o.Err)
	}
	// Output:
	// get_metrics {"service":"checkout","metric":"error_rate"} -> error_rate=7.2% <nil>
}
