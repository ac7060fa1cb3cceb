package metatool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/executor/metatool"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// Offer a model the two meta-tools instead of the whole catalog: find_tool
// searches what this executor would run, call_tool validates and runs it.
func ExampleTools_Handle() {
	ex := executor.New(registry.New(nil), nil)
	city := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	_ = ex.Register(registry.NewTool("get_weather", "Current weather for a city.", city),
		func(ctx context.Context, args json.RawMessage) (any, error) { return "sunny, 21°C", nil })
	_ = ex.Register(registry.NewTool("send_email", "Send an email message.",
		json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}`)),
		func(ctx context.Context, args json.RawMessage) (any, error) { return "sent", nil })

	tools := metatool.New(ex, nil) // rank's default ranking

	// What the model is given: the two definitions, in its provider's format.
	meta, _ := rank.MetaToolEntries()
	view, _ := registry.MarshalView(meta, registry.FormatOpenAI, nil)
	fmt.Println(len(view) > 0)

	// What the model calls, one step at a time (OpenAI delivers arguments as a string).
	ctx := context.Background()
	for _, c := range []executor.Call{
		executor.Call{ID: "1", Tool: "find_tool", Args: json.RawMessage(`{"query":"what is the weather like","limit":1}`)},
		executor.Call{ID: "2", Tool: "call_tool", Args: json.RawMessage(`{"name":"get_weather","arguments":{}}`)},
		executor.Call{ID: "3", Tool: "call_tool", Args: json.RawMessage(`{"name":"get_weather","arguments":{"city":"Lyon"}}`)},
	} {
		res, handled, err := tools.Handle(ctx, c)
		if !handled {
			res, err = ex.Call(ctx, c)
		}
		fmt.Printf("%s (ran: %t)\n", c.Tool, err == nil)
		if found, ok := res.Value.([]metatool.FoundTool); ok {
			// Content() is this list as JSON: name, description, parameters, score.
			fmt.Printf("  found %s, score in (0,1]: %t\n", found[0].Name, found[0].Score > 0 && found[0].Score <= 1)
			continue
		}
		fmt.Println("  " + res.Content())
	}
	// Output:
	// true
	// find_tool (ran: true)
	//   found get_weather, score in (0,1]: true
	// call_tool (ran: false)
	//   {"error":"call of tool \"get_weather\" invalid: invalid arguments for tool \"get_weather\": at /: missing property 'city' (required)","tool":"get_weather","outcome":"invalid","violations":[{"pointer":"","rule":"required","message":"missing property 'city'"}],"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"hint":"fix the arguments so they satisfy the parameters schema and call again"}
	// call_tool (ran: true)
	//   sunny, 21°C
}
