package executor_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/registry"
)

// AddTool registers a tool from a typed handler: the schema comes from the
// input type, and the handler gets the checked arguments decoded.
func ExampleAddTool() {
	type weatherArgs struct {
		City string `json:"city" jsonschema:"the city name"`
		Unit string `json:"unit,omitempty" enum:"c,f"`
	}
	ex := executor.New(registry.New(nil), nil)
	err := executor.AddTool(ex, registry.NewTool("get_weather", "Current weather for a city.", nil),
		func(ctx context.Context, in weatherArgs) (string, error) {
			return "light rain in " + in.City, nil
		})
	if err != nil {
		panic(err)
	}
	res, err := ex.Call(context.Background(), executor.Call{Tool: "get_weather", Args: json.RawMessage(`{"city":"Lyon"}`)})
	fmt.Println(res.Content(), err)
	_, err = ex.Call(context.Background(), executor.Call{Tool: "get_weather", Args: json.RawMessage(`{"city":"Lyon","unit":"kelvin"}`)})
	fmt.Println(err)
	// Output:
	// light rain in Lyon <nil>
	// call of tool "get_weather" invalid: invalid arguments for tool "get_weather": at /unit: value must be one of 'c', 'f' (enum)
}

// With gives an admin path its own policy and audit sink over the handlers
// the service bound once.
func ExampleExecutor_With() {
	ex := executor.New(registry.New(nil), nil) // what every user may run
	admin := ex.With(&executor.Options{AllowUnsafe: true})
	type ticket struct {
		ID string `json:"id"`
	}
	err := executor.AddTool(admin, registry.Tool{Name: "delete_ticket", Description: "Delete a ticket.", Safe: false},
		func(ctx context.Context, in ticket) (string, error) { return "deleted " + in.ID, nil })
	if err != nil {
		panic(err)
	}
	c := executor.Call{Tool: "delete_ticket", Args: json.RawMessage(`{"id":"T-7"}`)}
	_, err = ex.Call(context.Background(), c)
	fmt.Println(err)
	res, err := admin.Call(context.Background(), c)
	fmt.Println(res.Content(), err)
	// Output:
	// call of tool "delete_ticket" refused: unsafe tool not allowed: "delete_ticket" is marked unsafe (set Options.AllowUnsafe to run it)
	// deleted T-7 <nil>
}
