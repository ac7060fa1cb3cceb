package modeltest_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolselect/toolselect/modeltest"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// A selector pointed at the fake model gets the scripted calls.
func ExampleNewServer() {
	fake := modeltest.NewServer(modeltest.Reply{Calls: []modeltest.Call{
		{Tool: "get_weather", Args: map[string]any{"city": "Paris"}, Reasoning: "the task asks for the weather"},
	}})
	defer fake.Close()

	reg := registry.New(nil)
	_ = reg.Register(registry.NewTool("get_weather", "Current weather for a city.",
		json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)))
	cfg := selector.Config{Settings: selector.Settings{BaseURL: fake.URL}}
	client, err := selector.NewOpenAIClient(&cfg, nil)
	if err != nil {
		panic(err)
	}
	sel, err := selector.New(client, &cfg)
	if err != nil {
		panic(err)
	}
	calls, err := sel.SelectToolCalls(context.Background(), selector.Request{
		Registry: reg, Task: selector.Task{Description: "What is the weather in Paris?"},
	})
	if err != nil {
		panic(err)
	}
	for _, c := range calls {
		fmt.Printf("%s %s (%s)\n", c.Tool, c.Args, c.Reasoning)
	}
	// Output:
	// get_weather {"city":"Paris"} (the task asks for the weather)
}

// Requests records what the model was sent: here the model, the roles of
// the messages and the tools offered of the one request.
func ExampleServer_Requests() {
	fake := modeltest.NewServer() // no reply scripted: the model chooses no call
	defer fake.Close()

	reg := registry.New(nil)
	_ = reg.Register(registry.NewTool("get_time", "The current time.", json.RawMessage(`{"type":"object"}`)))
	cfg := selector.Config{Settings: selector.Settings{BaseURL: fake.URL, Model: "small-model"}}
	client, _ := selector.NewOpenAIClient(&cfg, nil)
	sel, _ := selector.New(client, &cfg)
	calls, err := sel.SelectToolCalls(context.Background(), selector.Request{
		Registry: reg, Task: selector.Task{Description: "What time is it?"},
	})
	fmt.Println(len(calls), err)
	for _, r := range fake.Requests() {
		fmt.Print(r.Model)
		for _, m := range r.Messages {
			fmt.Print(" ", m.Role)
		}
		fmt.Println(" offered", r.Tools) // the JSON mode lists them in the system prompt
	}
	// Output:
	// 0 <nil>
	// small-model system user offered [get_time]
}

// A reply with a Status answers an HTTP error in OpenAI's shape; the
// selector reports it as the attempt's failure.
func ExampleReply() {
	fake := modeltest.NewServer(modeltest.Reply{Status: 503, Content: "overloaded"})
	defer fake.Close()

	reg := registry.New(nil)
	_ = reg.Register(registry.NewTool("get_time", "The current time.", json.RawMessage(`{"type":"object"}`)))
	cfg := selector.Config{Settings: selector.Settings{BaseURL: fake.URL, Model: "small-model"}}
	client, _ := selector.NewOpenAIClient(&cfg, nil)
	sel, _ := selector.New(client, &cfg)
	_, err := sel.SelectToolCalls(context.Background(), selector.Request{
		Registry: reg, Task: selector.Task{Description: "What time is it?"},
	})
	fmt.Println(selector.ErrorKind(err), len(fake.Requests()) > 0)
	// Output:
	// fail_closed true
}
