package registry_test

import (
	"encoding/json"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// benchSchema is a typical tool: 8 properties of the usual kinds.
const benchSchema = `{
	"type": "object",
	"properties": {
		"query":       {"type": "string", "minLength": 1, "maxLength": 500},
		"city":        {"type": "string"},
		"limit":       {"type": "integer", "minimum": 1, "maximum": 100},
		"offset":      {"type": "integer", "minimum": 0},
		"unit":        {"enum": ["celsius", "fahrenheit"]},
		"include_raw": {"type": "boolean"},
		"tags":        {"type": "array", "items": {"type": "string"}, "maxItems": 10},
		"filter":      {"type": "object", "properties": {"field": {"type": "string"}, "value": {"type": "string"}}, "required": ["field"]}
	},
	"required": ["query", "limit"],
	"additionalProperties": false
}`

const benchArgs = `{"query":"weather in Oslo next week","city":"Oslo","limit":10,"offset":0,"unit":"celsius","include_raw":false,"tags":["forecast","weekly"],"filter":{"field":"region","value":"Europe"}}`

// BenchmarkValidateArgs measures Entry.ValidateArgs (decode, limits, schema)
// for a typical 8-property argument object; see docs/registry.md.
func BenchmarkValidateArgs(b *testing.B) {
	r := registry.New(nil)
	if err := r.Register(registry.NewTool("search", "Search.", json.RawMessage(benchSchema))); err != nil {
		b.Fatal(err)
	}
	e, _ := r.Get("search")
	args := []byte(benchArgs)
	b.Run("valid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := e.ValidateArgs(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	v, err := registry.DecodeValue(args)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("schema-only", func(b *testing.B) { // ValidateValue on an already decoded value
		b.ReportAllocs()
		for b.Loop() {
			if err := e.ValidateValue(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := registry.DecodeValue(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	bad := []byte(`{"query":"","limit":500,"unit":"kelvin","tags":"x","extra":1}`)
	b.Run("invalid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := e.ValidateArgs(bad); err == nil {
				b.Fatal("accepted")
			}
		}
	})
	b.Run("registry.Validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := r.Validate("search", args); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRegister measures checking and compiling one schema.
func BenchmarkRegister(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		r := registry.New(nil)
		if err := r.Register(registry.NewTool("search", "Search.", json.RawMessage(benchSchema))); err != nil {
			b.Fatal(err)
		}
	}
}
