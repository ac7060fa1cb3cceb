package registry_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

const weatherSchema = `{
	"type": "object",
	"properties": {
		"city": {"type": "string"},
		"unit": {"enum": ["c", "f"]},
		"days": {"type": "integer", "minimum": 1},
		"a/b": {"type": "string"},
		"t~x": {"type": "object", "properties": {"deep": {"type": "array", "items": {"type": "number"}}}}
	},
	"required": ["city", "days"],
	"additionalProperties": false
}`

func weatherRegistry(t testing.TB, opts *registry.Options) *registry.Registry {
	t.Helper()
	r := registry.New(opts)
	if err := r.Register(registry.NewTool("weather", "Forecast for a city.", json.RawMessage(weatherSchema))); err != nil {
		t.Fatal(err)
	}
	return r
}

func violations(t *testing.T, err error) []registry.Violation {
	t.Helper()
	if err == nil {
		return nil
	}
	var ve *registry.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %T %v is not a *ValidationError", err, err)
	}
	if !errors.Is(err, registry.ErrInvalidArgs) {
		t.Errorf("errors.Is(err, ErrInvalidArgs) = false")
	}
	if ve.Tool != "weather" {
		t.Errorf("ValidationError.Tool = %q", ve.Tool)
	}
	return ve.Violations
}

// TestValidateEveryViolation: one document breaking six rules gives six
// violations, each with its JSON pointer (RFC 6901 escaping) and rule.
func TestValidateEveryViolation(t *testing.T) {
	r := weatherRegistry(t, nil)
	err := r.Validate("weather", []byte(`{"city":3,"unit":"k","days":0,"a/b":1,"t~x":{"deep":[1,"x"]},"extra":1,"more":2}`))
	got := violations(t, err)
	want := []struct{ pointer, rule, msg string }{
		{"", "additionalProperties", "'extra', 'more'"},
		{"/a~1b", "type", "want string"},
		{"/city", "type", "got number, want string"},
		{"/days", "minimum", "got 0, want 1"},
		{"/t~0x/deep/1", "type", "got string, want number"},
		{"/unit", "enum", "'c', 'f'"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations, want %d: %v", len(got), len(want), err)
	}
	for i, w := range want {
		g := got[i]
		if g.Pointer != w.pointer || g.Rule != w.rule || !strings.Contains(g.Message, w.msg) {
			t.Errorf("violation %d = %+v, want pointer %q rule %q message containing %q", i, g, w.pointer, w.rule, w.msg)
		}
	}
	for _, w := range []string{`tool "weather"`, "at /a~1b:", "at /t~0x/deep/1: got string, want number (type)", "(enum)"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message %q lacks %q", err, w)
		}
	}
	// The JSON form is what a command or a repair prompt shows.
	b, _ := json.Marshal(err)
	if !strings.Contains(string(b), `{"pointer":"/days","rule":"minimum","message":"minimum: got 0, want 1"}`) {
		t.Errorf("JSON form: %s", b)
	}
}

func TestValidateRequired(t *testing.T) {
	r := weatherRegistry(t, nil)
	for _, args := range []string{`{}`, ``, "  \n ", `{"unit":"c"}`} {
		got := violations(t, r.Validate("weather", []byte(args)))
		if len(got) != 1 || got[0].Rule != "required" || got[0].Pointer != "" || !strings.Contains(got[0].Message, "'city', 'days'") {
			t.Errorf("args %q: %+v", args, got)
		}
	}
	if err := r.Validate("weather", []byte(`{"city":"Oslo","days":3,"t~x":{"deep":[1.5,2]}}`)); err != nil {
		t.Errorf("valid args refused: %v", err)
	}
}

func TestValidateEmptyArgsIsEmptyObject(t *testing.T) {
	r := registry.New(nil)
	if err := r.Register(tool("ping", `{"type":"object","properties":{}}`)); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{"", " ", "\n", "{}"} {
		if err := r.Validate("ping", []byte(args)); err != nil {
			t.Errorf("args %q: %v", args, err)
		}
	}
	if err := r.Validate("ping", nil); err != nil {
		t.Errorf("nil args: %v", err)
	}
}

func TestValidateNonObject(t *testing.T) {
	r := weatherRegistry(t, nil)
	for args, kind := range map[string]string{`[]`: "an array", `"x"`: "a string", `""`: "a string", `null`: "null", `3`: "a number", `true`: "a boolean"} {
		got := violations(t, r.Validate("weather", []byte(args)))
		if len(got) != 1 || got[0].Rule != "type" || !strings.Contains(got[0].Message, "must be a JSON object, got "+kind) {
			t.Errorf("args %s: %+v", args, got)
		}
	}
	for _, args := range []string{`{`, `{"city":"x","days":1} {}`, `{'a':1}`} {
		got := violations(t, r.Validate("weather", []byte(args)))
		if len(got) != 1 || got[0].Rule != "json" {
			t.Errorf("args %s: %+v", args, got)
		}
	}
}

func TestValidateLimits(t *testing.T) {
	open := `{"type":"object"}`
	nest := func(n int) string { // n objects inside one another
		return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1)
	}
	t.Run("args bytes", func(t *testing.T) {
		r := registry.New(&registry.Options{Limits: registry.Limits{MaxArgsBytes: 32}})
		if err := r.Register(tool("t", open)); err != nil {
			t.Fatal(err)
		}
		if err := r.Validate("t", []byte(`{"s":"`+strings.Repeat("x", 24)+`"}`)); err != nil {
			t.Errorf("32 bytes refused: %v", err)
		}
		err := r.Validate("t", []byte(`{"s":"`+strings.Repeat("x", 25)+`"}`))
		var ve *registry.ValidationError
		if !errors.As(err, &ve) || ve.Violations[0].Rule != "maxBytes" || !strings.Contains(err.Error(), "33 bytes, over the limit of 32") {
			t.Errorf("33 bytes: %v", err)
		}
	})
	t.Run("args depth", func(t *testing.T) {
		r := registry.New(&registry.Options{Limits: registry.Limits{MaxArgsDepth: 3}})
		if err := r.Register(tool("t", open)); err != nil {
			t.Fatal(err)
		}
		if err := r.Validate("t", []byte(nest(3))); err != nil {
			t.Errorf("depth 3 refused: %v", err)
		}
		if err := r.Validate("t", []byte(`{"a":[[1]]}`)); err != nil {
			t.Errorf("depth 3 with arrays refused: %v", err)
		}
		for _, args := range []string{nest(4), `{"a":[[[]]]}`} {
			err := r.Validate("t", []byte(args))
			var ve *registry.ValidationError
			if !errors.As(err, &ve) || ve.Violations[0].Rule != "maxDepth" || !strings.Contains(err.Error(), "deeper than 3 levels") {
				t.Errorf("%s: %v", args, err)
			}
		}
	})
	t.Run("default args depth", func(t *testing.T) {
		r := registry.New(nil)
		if err := r.Register(tool("t", open)); err != nil {
			t.Fatal(err)
		}
		if err := r.Validate("t", []byte(nest(registry.Limits{}.WithDefaults().MaxArgsDepth))); err != nil {
			t.Errorf("default depth refused: %v", err)
		}
		if err := r.Validate("t", []byte(nest(registry.Limits{}.WithDefaults().MaxArgsDepth+1))); err == nil {
			t.Error("default depth + 1 accepted")
		}
	})
	t.Run("schema bytes", func(t *testing.T) {
		r := registry.New(&registry.Options{Limits: registry.Limits{MaxSchemaBytes: 20}})
		if err := r.Register(tool("ok", `{"type":"object"}`)); err != nil {
			t.Error(err)
		}
		err := r.Register(tool("big", `{"type":"object","properties":{}}`))
		if err == nil || !strings.Contains(err.Error(), `tool "big"`) || !strings.Contains(err.Error(), "over the limit of 20") {
			t.Errorf("big schema: %v", err)
		}
	})
	t.Run("schema depth", func(t *testing.T) {
		r := registry.New(&registry.Options{Limits: registry.Limits{MaxSchemaDepth: 4}})
		if err := r.Register(tool("ok", `{"type":"object","properties":{"a":{"type":"string"}}}`)); err != nil {
			t.Error(err)
		}
		err := r.Register(tool("deep", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{}}}}}`))
		if err == nil || !strings.Contains(err.Error(), `tool "deep"`) || !strings.Contains(err.Error(), "deeper than 4 levels") {
			t.Errorf("deep schema: %v", err)
		}
	})
	t.Run("enum size", func(t *testing.T) {
		r := registry.New(&registry.Options{Limits: registry.Limits{MaxEnum: 3}})
		if err := r.Register(tool("ok", `{"type":"object","properties":{"e":{"enum":[1,2,3]}}}`)); err != nil {
			t.Error(err)
		}
		err := r.Register(tool("many", `{"type":"object","properties":{"e":{"enum":[1,2,3,4]}}}`))
		if err == nil || !strings.Contains(err.Error(), "4 values, over the limit of 3") {
			t.Errorf("big enum: %v", err)
		}
	})
}

// TestValidateNumbers: integers beyond float64 precision and decimals keep
// their exact value through the registry's decoding.
func TestValidateNumbers(t *testing.T) {
	r := registry.New(nil)
	if err := r.Register(tool("n", `{"type":"object","properties":{"id":{"type":"integer","maximum":9007199254740993},"p":{"multipleOf":0.01}}}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.Validate("n", []byte(`{"id":9007199254740993,"p":0.07}`)); err != nil {
		t.Errorf("exact values refused: %v", err)
	}
	if err := r.Validate("n", []byte(`{"id":9007199254740994}`)); err == nil {
		t.Error("an integer one above the maximum was accepted (precision lost?)")
	}
	if err := r.Validate("n", []byte(`{"id":1.0}`)); err != nil {
		t.Errorf("1.0 is an integer in JSON Schema: %v", err)
	}
}

func TestValidateValueAndDecodeValue(t *testing.T) {
	r := weatherRegistry(t, nil)
	e, _ := r.Get("weather")
	v, err := registry.DecodeValue([]byte(`{"city":"Oslo","days":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.(map[string]any)["days"].(json.Number); !ok {
		t.Errorf("DecodeValue gave %T for a number, want json.Number", v.(map[string]any)["days"])
	}
	if err := e.ValidateValue(v); err != nil {
		t.Error(err)
	}
	if err := e.ValidateValue("not an object"); !errors.Is(err, registry.ErrInvalidArgs) {
		t.Errorf("ValidateValue(string) = %v", err)
	}
	if _, err := registry.DecodeValue([]byte(`{} {}`)); err == nil {
		t.Error("DecodeValue accepted trailing data")
	}
	if !reflect.DeepEqual(violations(t, e.ValidateArgs([]byte(`{"city":"x"}`))), violations(t, r.Validate("weather", []byte(`{"city":"x"}`)))) {
		t.Error("Entry.ValidateArgs and Registry.Validate disagree")
	}
}

func TestValidateRuleNames(t *testing.T) {
	r := registry.New(nil)
	schemas := map[string]string{
		"dep2020": `{"type":"object","dependentRequired":{"a":["b"]}}`,
		"dep7":    `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"a":["b"]}}`,
		"never":   `{"type":"object","properties":{"a":false}}`,
		"pattern": `{"type":"object","properties":{"a":{"pattern":"^x"}}}`,
	}
	for name, s := range schemas {
		if err := r.Register(tool(name, s)); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]struct{ args, pointer, rule string }{
		"dep2020": {`{"a":1}`, "", "dependentRequired"},
		"dep7":    {`{"a":1}`, "", "dependencies"},
		"never":   {`{"a":1}`, "/a", "false"},
		"pattern": {`{"a":"y"}`, "/a", "pattern"},
	} {
		err := r.Validate(name, []byte(want.args))
		var ve *registry.ValidationError
		if !errors.As(err, &ve) || len(ve.Violations) != 1 || ve.Violations[0].Rule != want.rule || ve.Violations[0].Pointer != want.pointer {
			t.Errorf("%s: %v, want one %s violation at %q", name, err, want.rule, want.pointer)
		}
	}
}
