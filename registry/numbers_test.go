package registry

import (
	"encoding/json"
	"errors"
	"strings"
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
	e, cases := numbersEntry(t)
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

// TestValidateValueAgreesOnNumbers: the same table through ValidateValue,
// the document decoded with json.Number first. A decoded value is checked
// as its document is: 1e400 is refused at its pointer, and
// 0.99999999999999999999 meets exclusiveMaximum: 1 as the 1 it is to a
// receiver.
func TestValidateValueAgreesOnNumbers(t *testing.T) {
	e, cases := numbersEntry(t)
	for _, c := range cases {
		d := json.NewDecoder(strings.NewReader(c.Args))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			continue // not a document; ParseArgs alone meets it
		}
		if _, ok := v.(map[string]any); !ok {
			continue
		}
		err := e.ValidateValue(v)
		var ve *ValidationError
		switch {
		case c.Refused == "" && err != nil:
			t.Errorf("%s (%s): ValidateValue refuses what ParseArgs passes: %v", c.Args, c.Why, err)
		case c.Refused == "duplicateKey":
			// decoding kept one of the two; nothing left to refuse
		case c.Refused != "" && !errors.As(err, &ve):
			t.Errorf("%s (%s): ValidateValue passes what ParseArgs refuses (%s at %s)", c.Args, c.Why, c.Refused, c.Pointer)
		case c.Refused != "" && (ve.Violations[0].Pointer != c.Pointer):
			t.Errorf("%s (%s): ValidateValue refuses at %s, ParseArgs at %s", c.Args, c.Why, ve.Violations[0].Pointer, c.Pointer)
		}
	}
}

// numbersEntry registers the numbers table's schema as a tool and returns
// its entry and the table's cases.
func numbersEntry(t *testing.T) (*Entry, []fixtures.NumberCase) {
	t.Helper()
	schema, cases := fixtures.Numbers(t)
	r := New(nil)
	if err := r.Register(NewTool("t", "d", schema)); err != nil {
		t.Fatal(err)
	}
	e, _ := r.Get("t")
	return e, cases
}

// TestValidateValueRefusesNumbersNoDocumentHolds: a Go caller can build a
// json.Number from any text; ValidateValue refuses one that is not a JSON
// number (the schema validator alone let "abc" through as a number), at its
// pointer, and says what it is.
func TestValidateValueRefusesNumbersNoDocumentHolds(t *testing.T) {
	e, _ := numbersEntry(t)
	for _, text := range []string{"abc", "", "0x10", "1e5x", "+1", "01", "1.", ".5", "NaN", "Infinity", " 1"} {
		err := e.ValidateValue(map[string]any{"extra": []any{json.Number(text)}})
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Violations[0].Rule != "number" || ve.Violations[0].Pointer != "/extra/0" ||
			!strings.Contains(ve.Violations[0].Message, "is not a JSON number") {
			t.Errorf("json.Number(%q): %v, want rule number at /extra/0 saying it is not a JSON number", text, err)
		}
	}
	if err := e.ValidateValue(map[string]any{"extra": []any{json.Number("-0.5e-3"), json.Number("12")}}); err != nil {
		t.Errorf("JSON numbers refused: %v", err)
	}
}
