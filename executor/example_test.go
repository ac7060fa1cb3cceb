package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// Register a tool together with its Go handler, then call it.
func ExampleExecutor_Register() {
	ex := executor.New(registry.New(nil), nil)
	weather := registry.NewTool("get_weather", "Current weather for a city.",
		json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`))
	err := ex.Register(weather, func(ctx context.Context, args json.RawMessage) (any, error) {
		var a struct{ City string }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return map[string]any{"city": a.City, "celsius": 21}, nil
	})
	if err != nil {
		panic(err)
	}

	res, err := ex.Call(context.Background(), executor.Call{Tool: "get_weather", Args: json.RawMessage(`{"city":"Lyon"}`)})
	fmt.Println(res.Content(), err)

	// Invalid arguments never reach the handler: they are an error, not a result.
	_, err = ex.Call(context.Background(), executor.Call{Tool: "get_weather", Args: json.RawMessage(`{}`)})
	fmt.Println(errors.Is(err, executor.ErrInvalidArgs))
	var ce *executor.CallError
	if errors.As(err, &ce) {
		fmt.Println(ce.Outcome, ce.Violations[0])
	}
	// Output:
	// {"celsius":21,"city":"Lyon"} <nil>
	// true
	// invalid at /: missing property 'city' (required)
}

// Hydrate a provider's tool_call: the name comes back as the OpenAI view
// mapped it and the arguments arrive as a JSON string.
func ExampleExecutor_Hydrate() {
	reg := registry.New(nil)
	_ = reg.Register(registry.NewTool("ops.restart service", "Restart a service.",
		json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"}},"required":["service"]}`)))
	ex := executor.New(reg, nil)
	_ = ex.Handle("ops.restart service", func(ctx context.Context, args json.RawMessage) (any, error) {
		return "restarted", nil
	})

	mapped := reg.ProviderName(registry.FormatOpenAI, "ops.restart service")
	message := fmt.Sprintf(`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function",
		"function":{"name":%q,"arguments":"{\"service\":\"checkout\"}"}}]}`, mapped)
	calls, err := executor.ParseToolCalls([]byte(message))
	if err != nil {
		panic(err)
	}
	inv, err := ex.Hydrate(context.Background(), calls[0])
	if err != nil {
		panic(err)
	}
	fmt.Println(inv.ID, inv.Tool, string(inv.Args), inv.Validated)
	res, _ := ex.Run(context.Background(), inv)
	fmt.Println(res.Content())
	// Output:
	// call_1 ops.restart service {"service":"checkout"} true
	// restarted
}

// Run calls under policy and read the audit trail: an unsafe tool is
// refused, a schema-less read-only tool runs but is audited as unvalidated,
// and a tool's own failure is a result.
func Example_audit() {
	reg := registry.New(nil)
	drop := registry.NewTool("drop_table", "Drop a table.", json.RawMessage(`{"type":"object"}`))
	drop.Safe = false
	status := registry.Tool{Name: "status", Description: "System status.", Safe: true,
		AllowNoSchema: true, NoSchemaMode: registry.NoSchemaReadOnly, Capabilities: []string{registry.CapabilityReadOnly}}
	flaky := registry.NewTool("flaky", "Fails.", json.RawMessage(`{"type":"object"}`))
	if err := reg.RegisterAll([]registry.Tool{drop, status, flaky}); err != nil {
		panic(err)
	}

	// The audit trail, kept in memory (Audit may be called concurrently).
	var mu sync.Mutex
	var trail []executor.Record
	audit := func(_ context.Context, r executor.Record) {
		mu.Lock()
		defer mu.Unlock()
		trail = append(trail, r)
	}
	ex := executor.New(reg, &executor.Options{Audit: audit})
	_ = ex.Handle("drop_table", func(context.Context, json.RawMessage) (any, error) { return "dropped", nil })
	_ = ex.Handle("status", func(context.Context, json.RawMessage) (any, error) { return "all green", nil })
	_ = ex.Handle("flaky", func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("upstream 503") })

	ctx := context.Background()
	_, err := ex.Call(ctx, executor.Call{Tool: "drop_table"})
	fmt.Println("drop_table:", errors.Is(err, executor.ErrUnsafe))
	res, err := ex.Call(ctx, executor.Call{Tool: "status"})
	fmt.Println("status:", res.Content(), err)
	res, err = ex.Call(ctx, executor.Call{Tool: "flaky"})
	fmt.Println("flaky:", res.IsError, res.Error, err)

	for _, r := range trail {
		fmt.Printf("%-10s validated=%-5v outcome=%s\n", r.Tool, r.Validated, r.Outcome)
	}
	// Output:
	// drop_table: true
	// status: all green <nil>
	// flaky: true upstream 503 <nil>
	// drop_table validated=false outcome=refused
	// status     validated=false outcome=ok
	// flaky      validated=true  outcome=tool_error
}

// cannedChat stands in for a model: it always answers the same calls.
type cannedChat string

func (c cannedChat) Chat(context.Context, selector.ChatRequest) (selector.ChatResponse, error) {
	return selector.ChatResponse{Content: string(c)}, nil
}

// Select calls for a task through the selector, then run them.
func ExampleExecutor_Resolve() {
	// In production: client, _ := selector.NewOpenAIClient(&cfg, nil)
	model := cannedChat(`{"calls":[{"tool":"get_metrics","args":{"service":"checkout","metric":"error_rate"},"reasoning":"check the alert"}]}`)
	sel, err := selector.New(model, &selector.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	ex := executor.New(registry.New(nil), &executor.Options{Select: sel.SelectToolCalls})
	_ = ex.Register(registry.NewTool("get_metrics", "Read a service metric.",
		json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"},"metric":{"enum":["cpu","error_rate"]}},"required":["service","metric"]}`)),
		func(ctx context.Context, args json.RawMessage) (any, error) { return "error_rate=7.2%", nil })

	calls, err := ex.Resolve(context.Background(), selector.Request{Task: selector.Task{Description: "Why is checkout failing?"}})
	if err != nil {
		panic(err) // errors.Is(err, selector.ErrFailClosed): no calls, every attempt listed
	}
	for _, o := range ex.CallAll(context.Background(), calls) {
		fmt.Println(o.Call.Tool, string(o.Call.Args), "->", o.Result.Content(), o.Err)
	}
	// Output:
	// get_metrics {"service":"checkout","metric":"error_rate"} -> error_rate=7.2% <nil>
}

// Offer a model the two meta-tools instead of the whole catalog: find_tool
// searches what this executor would run, call_tool validates and runs it.
func ExampleExecutor_HandleMeta() {
	ex := executor.New(registry.New(nil), nil)
	city := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	_ = ex.Register(registry.NewTool("get_weather", "Current weather for a city.", city),
		func(ctx context.Context, args json.RawMessage) (any, error) { return "sunny, 21°C", nil })
	_ = ex.Register(registry.NewTool("send_email", "Send an email message.",
		json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}`)),
		func(ctx context.Context, args json.RawMessage) (any, error) { return "sent", nil })

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
		res, handled, err := ex.HandleMeta(ctx, c)
		if !handled {
			res, err = ex.Call(ctx, c)
		}
		fmt.Printf("%s (ran: %t)\n", c.Tool, err == nil)
		if found, ok := res.Value.([]executor.FoundTool); ok {
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
