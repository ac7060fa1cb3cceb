// Command go-quickstart is the README's Go quick start as a whole program:
// register a tool, rank the catalog, ask a model which calls the task needs,
// run them through the executor.
//
//	go run ./examples/go-quickstart
//
// It uses the model endpoint in LLM_COMMON_TOOL_SELECTION_BASE_URL (or
// OPENAI_BASE_URL) when one is set. Without one it starts the public fake
// model (package modeltest: an OpenAI-compatible server on 127.0.0.1 only),
// scripted to answer get_weather for Paris, and says so.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/executor/chat"
	"github.com/toolselect/toolselect/modeltest"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "go-quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	// 1. One canonical definition per tool, registered with its handler: the
	// schema is inferred from the handler's input type (a schema given in
	// NewTool's third argument would be kept as written instead).
	reg := registry.New(nil)
	ex := executor.New(reg, nil)
	if err := executor.AddTool(ex, registry.NewTool("get_weather", "Current weather for a city.", nil), getWeather); err != nil {
		return err
	}
	task := "Should I take an umbrella in Paris? Check the weather."

	// 2. Ranking needs no model: which tools matter, with score and reason.
	picks, err := rank.For(reg).Rank(ctx, task, nil)
	if err != nil {
		return err
	}
	for _, p := range picks {
		fmt.Fprintf(out, "rank: %s %.3f (%s)\n", p.Tool, p.Score, p.Reason)
	}

	// 3. The selector reads LLM_COMMON_TOOL_SELECTION_* (checked); without an
	// endpoint, the fake model stands in with one scripted reply.
	cfg, err := selector.ConfigFromEnv()
	if err != nil {
		return err
	}
	if cfg.BaseURL == "" && cfg.APIKey == "" {
		fake := modeltest.NewServer(modeltest.Reply{Calls: []modeltest.Call{
			{Tool: "get_weather", Args: map[string]any{"city": "Paris"}, Reasoning: "the task asks for the weather"},
		}})
		defer fake.Close()
		cfg.BaseURL = fake.URL
		fmt.Fprintln(out, "no model endpoint configured: using the loopback fake model (set LLM_COMMON_TOOL_SELECTION_BASE_URL for a real one)")
	}
	client, err := selector.NewOpenAIClient(&cfg, nil)
	if err != nil {
		return err
	}
	sel, err := selector.New(client, &cfg)
	if err != nil {
		return err
	}
	calls, err := sel.SelectToolCalls(ctx, selector.Request{
		Registry: reg,
		Task:     selector.Task{Description: task},
	})
	if err != nil {
		return err // a *selector.SelectionError listing every attempt
	}
	if len(calls) == 0 {
		fmt.Fprintln(out, "select: the model chose no call")
	}
	for _, c := range calls {
		fmt.Fprintf(out, "select: %s %s\n", c.Tool, c.Args)
	}

	// 4. The executor checks each call again and runs it.
	for _, o := range ex.CallAll(ctx, chat.FromToolCalls(calls)) {
		if o.Err != nil {
			fmt.Fprintf(out, "run: %s refused: %v\n", o.Call.Tool, o.Err)
			continue
		}
		fmt.Fprintf(out, "run: %s -> %s (%s)\n", o.Call.Tool, o.Result.Content(), o.Result.Outcome)
	}
	return nil
}

// weatherArgs are get_weather's arguments: the json tag names each one
// (omitempty: optional), the jsonschema tag describes it.
type weatherArgs struct {
	City string `json:"city" jsonschema:"the city name"`
}

// getWeather is the tool: it gets its arguments checked and decoded.
func getWeather(ctx context.Context, in weatherArgs) (string, error) {
	return fmt.Sprintf("light rain in %s, 14°C", in.City), nil
}
