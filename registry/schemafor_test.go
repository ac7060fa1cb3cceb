package registry_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/registry"
)

// forecastArgs covers what SchemaFor reads: descriptions, required and
// optional fields, enums of strings, integers and slice items, a pointer, a
// nested struct and a field left out.
type forecastArgs struct {
	City   string   `json:"city" jsonschema:"the city, as its inhabitants write it"`
	Unit   string   `json:"unit,omitempty" jsonschema:"temperature unit" enum:"c,f"`
	Days   int      `json:"days,omitempty" enum:"1,3,7"`
	Fields []string `json:"fields,omitempty" enum:"temp,rain,wind"`
	Hourly *bool    `json:"hourly,omitempty"`
	Near   struct {
		Lat float64 `json:"lat"`
		Lon float64 `json:"lon"`
	} `json:"near,omitzero" jsonschema:"a point to start from"`
	Secret string `json:"-"`
}

// TestSchemaForGolden compares the inferred schema with
// testdata/schemafor/forecast.json (-update rewrites it), and checks that
// the registry accepts it and validates by it.
func TestSchemaForGolden(t *testing.T) {
	schema, err := registry.SchemaFor[forecastArgs]()
	require.NoError(t, err)
	assertSchemaGolden(t, "forecast.json", schema)

	r := registry.New(nil)
	require.NoError(t, r.Register(registry.NewTool("forecast", "Weather forecast.", schema)))
	e, _ := r.Lookup("forecast")
	assert.NoError(t, e.ValidateArgs([]byte(`{"city":"Lyon","unit":"c","days":3,"fields":["rain"],"hourly":null}`)))
	for args, rule := range map[string]string{
		`{"unit":"c"}`:                   "required",
		`{"city":"Lyon","unit":"k"}`:     "enum",
		`{"city":"Lyon","days":2}`:       "enum",
		`{"city":"Lyon","fields":["x"]}`: "enum",
		`{"city":"Lyon","CITY":"x"}`:     "additionalProperties",
	} {
		var ve *registry.ValidationError
		require.ErrorAs(t, e.ValidateArgs([]byte(args)), &ve, args)
		rules := []string{}
		for _, v := range ve.Violations {
			rules = append(rules, v.Rule)
		}
		assert.Contains(t, rules, rule, args)
	}
}

// SchemaFor refuses what cannot be a tool's arguments, naming the type or
// the field.
func TestSchemaForRefuses(t *testing.T) {
	_, err := registry.SchemaFor[string]()
	assert.ErrorContains(t, err, "must be a struct")
	_, err = registry.SchemaFor[struct {
		F func() `json:"f"`
	}]()
	assert.Error(t, err)
	_, err = registry.SchemaFor[struct {
		N int `json:"n" enum:"one,two"`
	}]()
	assert.ErrorContains(t, err, `field N: enum value "one"`)
	_, err = registry.SchemaFor[struct {
		M map[string]int `json:"m" enum:"1"`
	}]()
	assert.ErrorContains(t, err, "needs a string, number or boolean field")
}

// DecodeArgs decodes the value it validated; invalid arguments never reach
// the target, and a value the Go type cannot hold is a "decode" violation
// at the field's pointer.
func TestDecodeArgs(t *testing.T) {
	r := registry.New(nil)
	require.NoError(t, r.Register(registry.NewTool("t", "T.", json.RawMessage(
		`{"type":"object","properties":{"n":{"type":"number"},"s":{"type":"string"}},"required":["s"]}`))))
	e, _ := r.Lookup("t")
	var in struct {
		N int    `json:"n"`
		S string `json:"s"`
	}
	require.NoError(t, e.DecodeArgs([]byte(`{"s":"x","n":12345678901234}`), &in))
	assert.Equal(t, 12345678901234, in.N)
	assert.Equal(t, "x", in.S)

	in.S = "kept"
	var ve *registry.ValidationError
	require.ErrorAs(t, e.DecodeArgs([]byte(`{"n":1}`), &in), &ve)
	assert.Equal(t, "required", ve.Violations[0].Rule)
	assert.Equal(t, "kept", in.S, "invalid arguments are not decoded")

	err := e.DecodeArgs([]byte(`{"s":"x","n":1.5}`), &in)
	require.ErrorAs(t, err, &ve)
	assert.True(t, errors.Is(err, registry.ErrInvalidArgs))
	assert.Equal(t, registry.Violation{Pointer: "/n", Rule: "decode", Message: "a JSON number 1.5 does not fit the handler's Go type int"}, ve.Violations[0])
}

// assertSchemaGolden compares schema, indented, with
// testdata/schemafor/name (-update rewrites it).
func assertSchemaGolden(t *testing.T, name string, schema json.RawMessage) {
	t.Helper()
	var got bytes.Buffer
	require.NoError(t, json.Indent(&got, schema, "", "  "))
	got.WriteByte('\n')
	path := filepath.Join("testdata", "schemafor", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./registry -run "+t.Name()+" -update")
	assert.Equal(t, string(want), got.String())
}
