package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/registry"
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
