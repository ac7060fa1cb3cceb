package selecteval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolselect/toolselect/modeltest"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selecteval"
	"github.com/toolselect/toolselect/selector"
)

// A candidate scored on one task against the fake model: the call is the
// gold call, so both accuracies are 1; the fake reports 100 prompt tokens.
func ExampleRun() {
	fake := modeltest.NewServer(modeltest.Reply{Calls: []modeltest.Call{
		{Tool: "get_weather", Args: map[string]any{"city": "Paris"}},
	}})
	defer fake.Close()
	reg := registry.New(nil)
	_ = reg.Register(registry.NewTool("get_weather", "Current weather for a city.",
		json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)))
	tasks, _ := selecteval.ReadTasks(strings.NewReader(
		`{"id":"w","task":"What is the weather in Paris?","calls":[{"tool":"get_weather","args":{"city":["Paris"]}}]}`), "tasks.jsonl")
	cand := selecteval.Candidate{Name: "small", Config: selector.Config{Settings: selector.Settings{BaseURL: fake.URL, Model: "small"}}}
	rep, err := selecteval.Run(context.Background(), reg, tasks, []selecteval.Candidate{cand}, selecteval.Options{})
	if err != nil {
		panic(err)
	}
	s := rep.Candidates[0]
	fmt.Println(s.Name, s.Exact, s.ToolAccuracy, s.PromptTokens, s.Results[0].Verdict)
	// Output:
	// small 1 1 100 exact
}

// Check scores calls against a task's gold calls and names the first
// difference: here a value the gold answer does not accept.
func ExampleCheck() {
	tasks, _ := selecteval.ReadTasks(strings.NewReader(
		`{"id":"m","task":"CPU of payments-api","calls":[{"tool":"get_metrics","args":{"service":["payments-api"],"metric":["cpu"],"window":["1h",""]}}]}`), "tasks.jsonl")
	toolsOK, exact, diff := selecteval.Check(&tasks[0], []selector.ToolCall{
		{Tool: "get_metrics", Args: json.RawMessage(`{"service":"payments-api","metric":"memory"}`)},
	})
	fmt.Println(toolsOK, exact)
	fmt.Println(diff)
	// Output:
	// true false
	// get_metrics: parameter "metric" is "memory", gold accepts ["cpu"]
}
