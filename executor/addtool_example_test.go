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
