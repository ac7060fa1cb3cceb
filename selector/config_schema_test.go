package selector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestSchemaPublishesEverySetting: Python reads its rules from the schema,
// so every setting must be there with its variables and its words.
func TestSchemaPublishesEverySetting(t *testing.T) {
	s := schema()
	if len(s.Fields) != len(settings) {
		t.Errorf("schema() has %d fields, the table %d", len(s.Fields), len(settings))
	}
	seen := map[string]configField{}
	for _, f := range s.Fields {
		seen[f.GoField] = f
		if len(f.Env) == 0 || f.Want == "" || !strings.HasPrefix(f.Env[0], EnvPrefix) {
			t.Errorf("%s: env %v, want %q", f.GoField, f.Env, f.Want)
		}
	}
	if f := seen["MaxCalls"]; f.Name != "max_calls" || f.Type != "int" || f.Default != 5 ||
		*f.Min != 1 || *f.Max != 20 || f.Want != "an integer from 1 to 20" {
		t.Errorf("MaxCalls: %+v", f)
	}
	if f := seen["FailClosed"]; f.Name != "fail_closed" || f.Type != "bool" || f.Default != true {
		t.Errorf("FailClosed: %+v", f)
	}
	if f := seen["Mode"]; !reflect.DeepEqual(f.Choices, []string{"json", "native"}) || f.Default != "json" || f.Want != "json or native" {
		t.Errorf("Mode: %+v", f)
	}
	if f := seen["Mode"]; f.Nullable {
		t.Errorf("Mode is nullable: %+v", f)
	}
	if f := seen["FallbackModel"]; f.Default != nil || f.Required || !f.Nullable {
		t.Errorf("FallbackModel: %+v", f)
	}
	if f := seen["BaseURL"]; !reflect.DeepEqual(f.Env, []string{EnvPrefix + "BASE_URL", "OPENAI_BASE_URL"}) || !f.Secret {
		t.Errorf("BaseURL: %+v", f)
	}
	if f := seen["Provider"]; !reflect.DeepEqual(f.Choices, names(providers)) {
		t.Errorf("Provider: %+v", f)
	}
	if !seen["APIKey"].Secret || !seen["Model"].Required {
		t.Errorf("APIKey secret / Model required lost: %+v %+v", seen["APIKey"], seen["Model"])
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatal(err)
	}
}

// TestEveryVariableIsRead sets each published variable to a valid value
// other than its default and finds it under the setting's JSON key, and to
// a value beyond its bounds or choices and finds the error naming it.
func TestEveryVariableIsRead(t *testing.T) {
	for _, f := range schema().Fields {
		for _, name := range f.Env {
			good, bad := "x", ""
			switch {
			case f.Type == "bool":
				good, bad = fmt.Sprint(!f.Default.(bool)), "maybe"
			case f.Max != nil:
				good, bad = strconv.FormatFloat(*f.Max, 'f', -1, 64), strconv.FormatFloat(*f.Max+1, 'f', -1, 64)
			case len(f.Choices) > 0:
				good, bad = strings.ToUpper(f.Choices[len(f.Choices)-1]), "none-of-these"
			case f.Format == "http_url":
				good, bad = "http://127.0.0.1:1/v1", "localhost:1"
			}
			c, err := ConfigFromEnvMap(map[string]string{name: good})
			if err != nil {
				t.Errorf("%s=%s: %v", name, good, err)
				continue
			}
			var got map[string]any
			b, _ := json.Marshal(c)
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			_ = dec.Decode(&got)
			if f.Secret && f.Type == "string" && f.Format == "" {
				if c.APIKey != good {
					t.Errorf("%s=%s: APIKey %q", name, good, c.APIKey)
				}
			} else if fmt.Sprint(got[f.Name]) != strings.ToLower(good) {
				t.Errorf("%s=%s: %s is %v", name, good, f.Name, got[f.Name])
			}
			if bad == "" {
				continue
			}
			_, err = ConfigFromEnvMap(map[string]string{name: bad})
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(ce.Var, name) || ce.Want != f.Want {
				t.Errorf("%s=%s: got %v, want an error naming it", name, bad, err)
			}
		}
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

// The bound callers check per-request top K against is the setting's.
func TestSchemaBoundsAreTheConstants(t *testing.T) {
	for _, f := range schema().Fields {
		if f.Name == "top_k" && (f.Max == nil || *f.Max != MaxTopK || f.Default != DefaultTopK) {
			t.Errorf("top_k: schema %+v, MaxTopK %d, DefaultTopK %d", f, MaxTopK, DefaultTopK)
		}
	}
}

// TestDocsTableIsTheSettings holds the variable table of docs/selector.md to
// the settings: one row per setting, in the table's order, with its default
// and its bounds or choices.
func TestDocsTableIsTheSettings(t *testing.T) {
	b, err := os.ReadFile("../docs/selector.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| `"+EnvPrefix) {
			rows = append(rows, strings.Split(line, " | "))
		}
	}
	fields := schema().Fields
	if len(rows) != len(fields) {
		t.Fatalf("docs/selector.md has %d variable rows, the table %d settings", len(rows), len(fields))
	}
	have := map[string][]string{}
	for _, r := range rows {
		have[strings.Trim(r[0], "| `")] = r
	}
	for _, f := range fields {
		r, ok := have[f.Env[0]]
		if !ok {
			t.Errorf("%s has no row", f.Env[0])
			continue
		}
		switch {
		case f.Default != nil && !strings.HasPrefix(r[1], fmt.Sprintf("`%v", f.Default)):
			t.Errorf("%s: default %s, the table says %v", f.Env[0], r[1], f.Default)
		case f.Min != nil && !strings.Contains(r[2], fmt.Sprintf("%s-%s", num(*f.Min), num(*f.Max))):
			t.Errorf("%s: accepted %s, the table says %s-%s", f.Env[0], r[2], num(*f.Min), num(*f.Max))
		}
		for _, c := range f.Choices {
			if !strings.Contains(r[2], "`"+c+"`") {
				t.Errorf("%s: accepted %s lacks %s", f.Env[0], r[2], c)
			}
		}
	}
}
