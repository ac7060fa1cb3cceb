package registry_test

import (
	"fmt"
	"time"

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

// A time, a duration, an address or a URL is a string with a format that
// the registry asserts: a wrong one is refused at its own pointer before
// anything is decoded, and a right one decodes into the Go value.
func ExampleSchemaFor_times() {
	type remindArgs struct {
		When  time.Time     `json:"when"`
		Every time.Duration `json:"every,omitempty"`
	}
	schema, _ := registry.SchemaFor[remindArgs]()
	reg := registry.New(nil)
	_ = reg.Register(registry.NewTool("remind", "Set a reminder.", schema))
	e, _ := reg.Lookup("remind")

	var in remindArgs
	fmt.Println(e.DecodeArgs([]byte(`{"when":"yesterday"}`), &in))
	fmt.Println(e.DecodeArgs([]byte(`{"when":"2026-05-01T09:00:00Z","every":"36h"}`), &in), in.Every)
	// Output:
	// invalid arguments for tool "remind": at /when: 'yesterday' is not valid date-time: less than 20 characters long (format)
	// <nil> 36h0m0s
}
