package registry_test

import (
	"fmt"

	"github.com/toolselect/toolselect/registry"
)

// SchemaFor writes a tool's schema from its arguments' Go type: the json
// tag names a property (omitempty: not required), the jsonschema tag
// describes it, and the enum tag lists its values.
func ExampleSchemaFor() {
	type weatherArgs struct {
		City string `json:"city" jsonschema:"the city name"`
		Unit string `json:"unit,omitempty" enum:"c,f"`
	}
	schema, err := registry.SchemaFor[weatherArgs]()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(schema))
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"the city name"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"],"additionalProperties":false}
}
