package selector

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"
)

// TestSchemaPublishesEverySetting replaces the old grep of the Python sources:
// Python reads its rules from Schema, so what must hold is that Schema lists
// every setting ConfigFromEnv reads, with its variables.
func TestSchemaPublishesEverySetting(t *testing.T) {
	s := schema()
	seen := map[string]configField{}
	for _, f := range s.Fields {
		seen[f.GoField] = f
	}
	for goField, info := range configFields {
		f, ok := seen[goField]
		if !ok {
			t.Errorf("%s (%s) is in configFields but not in schema()", goField, info.env)
			continue
		}
		if len(f.Env) == 0 || f.Want == "" {
			t.Errorf("%s: env %v, want %q", goField, f.Env, f.Want)
		}
	}
	if len(seen) != len(configFields) {
		t.Errorf("schema() has %d fields, configFields %d", len(seen), len(configFields))
	}
	if f := seen["MaxCalls"]; f.Name != "max_calls" || f.Type != "int" || f.Default != DefaultMaxCalls ||
		*f.Min != 1 || *f.Max != 20 {
		t.Errorf("MaxCalls: %+v", f)
	}
	if f := seen["FailClosed"]; f.Name != "fail_closed" || f.Type != "bool" || f.Default != true {
		t.Errorf("FailClosed: %+v", f)
	}
	if f := seen["Mode"]; !reflect.DeepEqual(f.Choices, []string{"json", "native"}) || f.Default != "json" {
		t.Errorf("Mode: %+v", f)
	}
	if f := seen["Mode"]; f.Nullable {
		t.Errorf("Mode is nullable: %+v", f)
	}
	if f := seen["FallbackModel"]; f.Default != nil || f.Required || !f.Nullable {
		t.Errorf("FallbackModel: %+v", f)
	}
	if !seen["APIKey"].Secret || !seen["Model"].Required {
		t.Errorf("APIKey secret / Model required lost: %+v %+v", seen["APIKey"], seen["Model"])
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaBoundsAreTheValidatorsBounds checks each published bound against
// what ConfigFromJSON (the form bindings send) accepts: the bound is accepted
// and one step beyond it is refused.
func TestSchemaBoundsAreTheValidatorsBounds(t *testing.T) {
	for _, f := range schema().Fields {
		step := 1.0
		if f.Type == "float" {
			step = 0.001
		}
		for _, b := range []struct {
			bound *float64
			dir   float64
		}{{f.Min, -1}, {f.Max, 1}} {
			if b.bound == nil {
				continue
			}
			t.Run(fmt.Sprintf("%s/%g", f.Name, *b.bound), func(t *testing.T) {
				doc := func(v float64) []byte {
					if f.Type == "int" {
						return []byte(fmt.Sprintf(`{%q:%d}`, f.Name, int64(math.Round(v))))
					}
					return []byte(fmt.Sprintf(`{%q:%g}`, f.Name, v))
				}
				if _, err := ConfigFromJSON(doc(*b.bound)); err != nil {
					t.Errorf("bound %g refused: %v", *b.bound, err)
				}
				if _, err := ConfigFromJSON(doc(*b.bound + b.dir*step)); err == nil {
					t.Errorf("%g beyond the bound accepted", *b.bound+b.dir*step)
				}
			})
		}
	}
}

// TestSchemaDefaultsAreConfigFromJSONs: an empty document gives every
// published default.
func TestSchemaDefaultsAreConfigFromJSONs(t *testing.T) {
	c, err := ConfigFromJSON([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	b, _ := json.Marshal(c)
	_ = json.Unmarshal(b, &got)
	for _, f := range schema().Fields {
		if f.Secret {
			continue
		}
		want := f.Default
		if want == nil && f.Type == "string" {
			want = ""
		}
		if n, ok := want.(int); ok {
			want = float64(n)
		}
		if n, ok := want.(int64); ok {
			want = float64(n)
		}
		v, ok := got[f.Name]
		if !ok && f.Type == "string" {
			v = "" // omitempty
		}
		if !reflect.DeepEqual(v, want) {
			t.Errorf("%s: ConfigFromJSON({}) gives %v, the schema says %v", f.Name, v, want)
		}
	}
}

func ExampleConfigSchema() {
	var s struct {
		Fields []struct {
			Name     string
			Type     string
			Default  any
			Min, Max float64
			Env      []string
		}
	}
	if err := json.Unmarshal(ConfigSchema(), &s); err != nil {
		panic(err)
	}
	for _, f := range s.Fields {
		if f.Name == "max_calls" {
			fmt.Println(f.Name, f.Type, f.Default, f.Min, f.Max, f.Env)
		}
	}
	// Output: max_calls int 5 1 20 [LLM_COMMON_TOOL_SELECTION_MAX_CALLS]
}

// The validate tags' literal bounds (struct tags cannot name constants) are
// the exported ones callers check against.
func TestSchemaBoundsAreTheConstants(t *testing.T) {
	want := map[string]float64{"offer_tokens": MaxOfferTokens, "top_k": MaxTopK, "max_searches": MaxMaxSearches}
	for _, f := range schema().Fields {
		if m, ok := want[f.Name]; ok {
			if f.Max == nil || *f.Max != m {
				t.Errorf("%s: schema max %v, constant %v", f.Name, f.Max, m)
			}
			delete(want, f.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("fields missing from the schema: %v", want)
	}
}
