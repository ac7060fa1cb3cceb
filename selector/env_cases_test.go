package selector

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// TestEnvCases holds ConfigFromEnvMap to testdata/env_cases.json, the table
// the Python package's from_env is held to as well (python/tests), so the two
// read the environment alike: Go's trimming (unicode.IsSpace), strconv's
// integer and float syntax, and the boolean spellings.
func TestEnvCases(t *testing.T) {
	b, err := os.ReadFile("testdata/env_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Var   string `json:"var"`
			Value string `json:"value"`
			Field string `json:"field"`
			Want  any    `json:"want"`
			Error string `json:"error"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) < 100 {
		t.Fatalf("only %d cases", len(doc.Cases))
	}
	for _, c := range doc.Cases {
		got, err := ConfigFromEnvMap(map[string]string{c.Var: c.Value})
		if c.Error != "" {
			if err == nil || !strings.Contains(err.Error(), "is "+c.Error) {
				t.Errorf("%s=%q: want a %q error, got %v", c.Var, c.Value, c.Error, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s=%q: %v", c.Var, c.Value, err)
			continue
		}
		wire, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(wire, &m); err != nil {
			t.Fatal(err)
		}
		if w, ok := c.Want.(float64); ok {
			if g, ok := m[c.Field].(float64); !ok || math.Abs(g-w) > 0 {
				t.Errorf("%s=%q: %s = %v, want %v", c.Var, c.Value, c.Field, m[c.Field], w)
			}
		} else if m[c.Field] != c.Want {
			t.Errorf("%s=%q: %s = %#v, want %#v", c.Var, c.Value, c.Field, m[c.Field], c.Want)
		}
	}
}
