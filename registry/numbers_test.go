package registry

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestNumbersValidatedAsReceived: a number is validated as the float a
// receiver reads it as, and passed on so. 1e-400 is 0 and
// 0.99999999999999999999 is 1 to Go's float64, C's double and Python's
// float: true of the decimal text, exclusiveMinimum: 0 and exclusiveMaximum:
// 1 would let through a value every receiver sees on the bound.
func TestNumbersValidatedAsReceived(t *testing.T) {
	r := New(nil)
	schema := `{"type":"object","properties":{"f":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},"n":{"type":"integer"}}}`
	if err := r.Register(NewTool("t", "d", json.RawMessage(schema))); err != nil {
		t.Fatal(err)
	}
	e, _ := r.Get("t")
	for _, c := range []struct {
		args, rule, pointer, passed string
	}{
		{`{"f": 1e-400}`, "exclusiveMinimum", "/f", ""},
		{`{"f": 0.99999999999999999999}`, "exclusiveMaximum", "/f", ""},
		{`{"f": -1e-400}`, "exclusiveMinimum", "/f", ""},
		{`{"f": 1e400}`, "number", "/f", ""},
		{`{"n": -1e999}`, "number", "/n", ""},
		{`{"f": 0.5}`, "", "", `{"f":0.5}`},
		{`{"f": 0.1, "n": 3}`, "", "", `{"f":0.1,"n":3}`},
		{`{"f": 5e-1}`, "", "", `{"f":5e-1}`},                         // the same number: kept as written
		{`{"f": 0.30000000000000001}`, "", "", `{"f":0.3}`},           // the float 0.3: written so
		{`{"n": 9007199254740993}`, "", "", `{"n":9007199254740993}`}, // integers as given (int64 receivers)
		{`{"n": 1.0}`, "", "", `{"n":1.0}`},                           // an integral float stays an integer to the schema
		{`{"n": 1.00000000000000000001}`, "", "", `{"n":1}`},          // rounds to an integer: an integer
	} {
		out, err := e.ParseArgs(json.RawMessage(c.args))
		if c.rule == "" {
			if err != nil || string(out) != c.passed {
				t.Errorf("%s: %s %v, want %s", c.args, out, err, c.passed)
			}
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Violations) == 0 || ve.Violations[0].Rule != c.rule || ve.Violations[0].Pointer != c.pointer {
			t.Errorf("%s: %v, want rule %s at %s", c.args, err, c.rule, c.pointer)
		}
	}
}
