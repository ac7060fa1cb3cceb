package registry_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// FuzzValidateSchemaArgs fuzzes the schema and the argument document
// together (FuzzValidateArgs keeps the schema fixed). A schema is registered
// or refused with a *RegistrationError naming the tool; arguments are accepted
// only when they are a well-formed JSON object, or refused with a
// *ValidationError whose violations each carry a rule, a JSON pointer and a
// message. Verdicts are deterministic, ignore surrounding white space, agree
// with ValidateValue on the decoded document, and are the same through a
// provider-mapped name.
func FuzzValidateSchemaArgs(f *testing.F) {
	for _, seed := range []struct{ schema, args string }{
		{`{"type":"object","properties":{"city":{"type":"string","minLength":1},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city"],"additionalProperties":false}`, `{"city":"Paris","days":3}`},
		{`{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+-[0-9]{2,}$"}}}`, `{"id":"ab-12"}`},
		{`{"type":"object","properties":{"u":{"enum":["c","f",1,null,{"a":[]}]}}}`, `{"u":{"a":[]}}`},
		{`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, `{"next":{"next":{"next":{}}}}`},
		{`{"type":"object","properties":{"x":{"$ref":"http://example.com/s.json"}}}`, `{}`},
		{`{"type":"object","properties":{"x":{"$ref":"other.json#/a"}}}`, `{}`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"a":["b"]}}`, `{"a":1}`},
		{`{"type":"object","if":{"required":["a"]},"then":{"required":["b"]},"else":{"properties":{"c":false}}}`, `{"c":1}`},
		{`{"type":"object","dependentRequired":{"a/b":["c~d"]}}`, `{"a/b":1}`},
		{`{"type":"object","properties":{"n":{"multipleOf":0.01,"exclusiveMaximum":1e308}}}`, `{"n":1e400}`},
		{`{"type":"object","properties":{"s":{"format":"date-time"},"e":{"format":"email"}}}`, `{"s":"2024-13-01","e":"x"}`},
		{`{"type":"object","minProperties":2,"maxProperties":2,"propertyNames":{"maxLength":3}}`, `{"long":1}`},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"},"uniqueItems":true,"minItems":1,"contains":{"const":2}}}}`, `{"a":[1,1.0]}`},
		{`{"type":"object","patternProperties":{"^x-":{"type":"string"}},"unevaluatedProperties":false}`, `{"x-a":"s","y":1}`},
		{`{"type":"object","oneOf":[{"required":["a"]},{"required":["b"]}],"not":{"required":["c"]}}`, `{"a":1,"b":2,"c":3}`},
		{`{"type":"object","properties":{"a":{"pattern":"(a+)+$"}}}`, `{"a":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}`},
		{`{"type":"object","properties":{"a":{"pattern":"["}}}`, `{}`},
		{`{"type":"object"}`, `{}}`},
		{`{"type":"object"}`, `{} {}`},
		{`{"type":"object"}`, `[]`},
		{`{"type":"object"}`, ``},
		{`{"type":"object","properties":{"path":{"pattern":"^/safe/"}}}`, `{"path":"/safe/x","path":"/etc/shadow"}`},
		{`{"type":"object"}`, `{"a":[{"k":1,"\u006b":2}],"s":"\ud800\u2028<&>"}`},
		{`{"type":"object"}`, `{"a":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`},
		{`true`, `{}`}, {`{}`, `{}`}, {`[]`, `{}`}, {`{"type":5}`, `{}`}, {`{"$ref":"#/nope"}`, `{}`}, {`{"$ref":"#"}`, `{}`},
	} {
		f.Add([]byte(seed.schema), []byte(seed.args))
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		const name = "fuzz.tool" // mapped to fuzz_tool for OpenAI
		r := registry.New(nil)
		if err := r.Register(registry.NewTool(name, "Fuzzed.", json.RawMessage(schema))); err != nil {
			var re *registry.RegistrationError
			if !errors.As(err, &re) || re.Tool != name || re.Reason == "" || !strings.Contains(err.Error(), name) {
				t.Fatalf("schema refusal %T %v", err, err)
			}
			return
		}
		e, _ := r.Get(name)
		err := e.ValidateArgs(args)
		if err == nil {
			if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && (!json.Valid(trimmed) || trimmed[0] != '{') {
				t.Fatalf("arguments %q are accepted but are not a JSON object", args)
			}
		} else {
			var ve *registry.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, registry.ErrInvalidArgs) || ve.Tool != name || len(ve.Violations) == 0 {
				t.Fatalf("refusal %T %v", err, err)
			}
			for _, v := range ve.Violations {
				if v.Rule == "" || strings.TrimSpace(v.Message) == "" || (v.Pointer != "" && v.Pointer[0] != '/') {
					t.Fatalf("violation without rule, message or pointer: %+v", v)
				}
			}
		}
		msg := func(err error) string {
			if err == nil {
				return "<valid>"
			}
			return err.Error()
		}
		if again := e.ValidateArgs(args); msg(again) != msg(err) {
			t.Fatalf("verdict changed between runs:\n%s\n%s", msg(err), msg(again))
		}
		if padded := e.ValidateArgs(append(append([]byte(" \n\t"), args...), "\r\n "...)); msg(padded) != msg(err) {
			t.Fatalf("surrounding white space changed the verdict:\n%s\n%s", msg(err), msg(padded))
		}
		if via := r.Validate(r.ProviderName(registry.FormatOpenAI, name), args); msg(via) != msg(err) {
			t.Fatalf("the mapped name gives another verdict:\n%s\n%s", msg(err), msg(via))
		}
		// On a well-formed object, the raw check and the value check agree.
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		if _, ok := v.(map[string]any); !ok {
			return
		}
		var ve *registry.ValidationError
		if errors.As(err, &ve) && len(ve.Violations) == 1 {
			switch ve.Violations[0].Rule {
			case "json", "maxBytes", "maxDepth", "duplicateKey":
				return
			}
		}
		if vv := e.ValidateValue(v); (vv == nil) != (err == nil) {
			t.Fatalf("ValidateArgs says %s but ValidateValue says %s", msg(err), msg(vv))
		}
		// What is passed on is the value that was checked, compact.
		if err == nil {
			checked, perr := e.ParseArgs(args)
			if perr != nil {
				t.Fatalf("ParseArgs refuses what ValidateArgs accepts: %v", perr)
			}
			var buf bytes.Buffer
			if json.Compact(&buf, checked) != nil || !bytes.Equal(buf.Bytes(), checked) {
				t.Fatalf("ParseArgs gave %q, not compact JSON", checked)
			}
			d := json.NewDecoder(bytes.NewReader(checked))
			d.UseNumber()
			var back any
			if d.Decode(&back) != nil || !reflect.DeepEqual(back, v) {
				t.Fatalf("ParseArgs gave %q, which is not the checked value %v", checked, v)
			}
		}
	})
}

// TestValidateArgsRefusesTrailingClosers is the crasher FuzzValidateSchemaArgs
// found and keeps in its corpus: the trailing-data check used Decoder.More,
// which is false before a stray '}' or ']', so `{}}` was reported valid.
func TestValidateArgsRefusesTrailingClosers(t *testing.T) {
	r := registry.New(nil)
	if err := r.Register(registry.NewTool("t", "", json.RawMessage(`{"type":"object"}`))); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{}}`, `{}]`, `{"a":1}}`, `{} }`, `{}{}`, `{} x`} {
		err := r.Validate("t", []byte(args))
		var ve *registry.ValidationError
		if !errors.As(err, &ve) || ve.Violations[0].Rule != "json" {
			t.Errorf("%s: got %v, want a json violation", args, err)
		}
		if _, err := registry.DecodeValue([]byte(args)); err == nil {
			t.Errorf("DecodeValue(%s) accepted trailing data", args)
		}
	}
	for _, args := range []string{`{}`, " {} \n", `{"a":[1,{}]}`} {
		if err := r.Validate("t", []byte(args)); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
}
