package registry

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
)

// TestNumbersValidatedAsReceived: a number is validated as the float a
// receiver reads it as, and passed on so (testdata/numbers/cases.json, the
// table the C ABI, Python and the MCP proxy are held to as well). 1e-400 is 0 and
// 0.99999999999999999999 is 1 to Go's float64, C's double and Python's
// float: true of the decimal text, exclusiveMinimum: 0 and exclusiveMaximum:
// 1 would let through a value every receiver sees on the bound.
func TestNumbersValidatedAsReceived(t *testing.T) {
	schema, cases := fixtures.Numbers(t)
	r := New(nil)
	if err := r.Register(NewTool("t", "d", schema)); err != nil {
		t.Fatal(err)
	}
	e, _ := r.Get("t")
	for _, c := range cases {
		out, err := e.ParseArgs(json.RawMessage(c.Args))
		if c.Refused == "" {
			if err != nil || string(out) != c.Passed {
				t.Errorf("%s (%s): %s %v, want %s", c.Args, c.Why, out, err, c.Passed)
			}
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Violations) == 0 || ve.Violations[0].Rule != c.Refused || ve.Violations[0].Pointer != c.Pointer {
			t.Errorf("%s (%s): %v, want rule %s at %s", c.Args, c.Why, err, c.Refused, c.Pointer)
		}
	}
}
