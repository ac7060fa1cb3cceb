package registry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/toolselect/toolselect/registry"
)

// Register a tool with a JSON Schema for its arguments. The schema is kept
// byte for byte; registration compiles it once and refuses anything that is
// not a self-contained JSON Schema object.
func ExampleRegistry_Register() {
	r := registry.New(nil)
	err := r.Register(registry.NewTool("weather.current", "Current weather for a city.", json.RawMessage(`{
		"type": "object",
		"properties": {
			"city": {"type": "string"},
			"unit": {"enum": ["celsius", "fahrenheit"]}
		},
		"required": ["city"]
	}`)))
	fmt.Println("registered:", err == nil, r.Names())

	// A schema that loads another document is refused, naming the tool.
	err = r.Register(registry.NewTool("remote", "Uses a remote schema.", json.RawMessage(`{"$ref": "https://example.com/args.json"}`)))
	fmt.Println(errors.Is(err, registry.ErrExternalRef))
	fmt.Println(err)
	// Output:
	// registered: true [weather.current]
	// true
	// tool "remote": invalid parameters schema: reference outside the schema document: "https://example.com/args.json" cannot be resolved inside the document (toolselect loads no files or URLs)
}

// Validate arguments a model produced: every violation comes back with its
// JSON pointer and the rule it broke.
func ExampleRegistry_Validate() {
	r := registry.New(nil)
	_ = r.Register(registry.NewTool("weather.forecast", "Forecast for a city.", json.RawMessage(`{
		"type": "object",
		"properties": {
			"city": {"type": "string"},
			"days": {"type": "integer", "minimum": 1, "maximum": 14},
			"unit": {"enum": ["celsius", "fahrenheit"]}
		},
		"required": ["city"],
		"additionalProperties": false
	}`)))

	fmt.Println(r.Validate("weather.forecast", []byte(`{"city": "Oslo", "days": 3}`)))

	err := r.Validate("weather.forecast", []byte(`{"days": 0, "unit": "kelvin", "lang": "no"}`))
	var ve *registry.ValidationError
	if errors.As(err, &ve) {
		for _, v := range ve.Violations {
			fmt.Printf("pointer %q, rule %s: %s\n", v.Pointer, v.Rule, v.Message)
		}
	}
	// Output:
	// <nil>
	// pointer "", rule additionalProperties: additional properties 'lang' not allowed
	// pointer "", rule required: missing property 'city'
	// pointer "/days", rule minimum: minimum: got 0, want 1
	// pointer "/unit", rule enum: value must be one of 'celsius', 'fahrenheit'
}

// Show the catalog to a provider. Names the provider forbids are mapped, and
// Lookup resolves a call that comes back under the mapped name.
func ExampleRegistry_View() {
	r := registry.New(nil)
	_ = r.Register(registry.NewTool("math.add", "Add two numbers.",
		json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)))

	view, _ := r.View(registry.FormatOpenAI)
	os.Stdout.Write(view)
	fmt.Println()

	name := r.ProviderName(registry.FormatOpenAI, "math.add")
	e, _ := r.Lookup(name)
	fmt.Println(name, "->", e.Name())
	// Output:
	// [{"type":"function","function":{"name":"math_add","description":"Add two numbers.","parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}}]
	// math_add -> math.add
}

// Load a catalog in any supported format; the format is detected.
func ExampleParseCatalog() {
	mcp := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[
		{"name":"read_file","description":"Read a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},
		 "annotations":{"readOnlyHint":true}},
		{"name":"delete_file","description":"Delete a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},
		 "annotations":{"destructiveHint":true}}]}}`)
	tools, format, err := registry.ParseCatalog(mcp)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(format)
	for _, t := range tools {
		fmt.Printf("%s safe=%v readOnly=%v\n", t.Name, t.Safe, t.ReadOnly())
	}
	r := registry.New(nil)
	fmt.Println(r.RegisterAll(tools))
	// Output:
	// mcp
	// read_file safe=true readOnly=true
	// delete_file safe=false readOnly=false
	// <nil>
}

// Suggest names the registered tools a name that names none most likely
// meant, among those the caller may run: here the unsafe tool a letter away
// is left out for a caller that does not allow unsafe tools.
func ExampleRegistry_Suggest() {
	reg := registry.New(nil)
	obj := json.RawMessage(`{"type":"object"}`)
	_ = reg.Register(registry.NewTool("create_event", "Create a calendar event.", obj))
	wipe := registry.NewTool("create_events", "Create many events, replacing the calendar.", obj)
	wipe.Safe = false
	_ = reg.Register(wipe)

	caller := registry.Eligibility{} // no unsafe tools, no roles
	fmt.Println(reg.Suggest("create_evnt", caller.Allows))
	fmt.Println(reg.Suggest("create_evnt", nil))
	// Output:
	// [create_event]
	// [create_event create_events]
}
