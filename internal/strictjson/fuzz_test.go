package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// hasDuplicate is the reference: encoding/json's own tokens, names compared
// as decoded.
func hasDuplicate(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('['):
			for dec.More() {
				if walk() {
					return true
				}
			}
			dec.Token()
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, _ := dec.Token()
				if seen[k.(string)] {
					return true
				}
				seen[k.(string)] = true
				if walk() {
					return true
				}
			}
			dec.Token()
		}
		return false
	}
	return walk()
}

// FuzzCheckAgreesWithEncodingJSON: on any input Check does not panic,
// refuses what encoding/json cannot read, and finds a name given twice
// exactly when encoding/json's tokens show one.
func FuzzCheckAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `1`, `"a"`, `{"a":1,"a":2}`, `{"a":{"b":[1,{"c":1,"\u0063":2}]}}`,
		`{"a":"x\"y","b":[true,false,null,-1.5e3]}`, `{"\ud800":1,"\udc00":2}`, `{"a": 1} {}`, `{"a":`, `[1,2,]`,
		`{"k":"\\","k2":"\\\""}`, " { \"a\" : [ { } , [ ] ] , \"b\" : { \"a\" : 1 } } "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Check(b, nil)
		if !json.Valid(b) {
			if err == nil {
				t.Fatalf("%q: invalid JSON accepted", b)
			}
			return
		}
		var ke *KeyError
		if dup := errors.As(err, &ke) && ke.Problem == ProblemDuplicate; dup != hasDuplicate(b) {
			t.Fatalf("%q: duplicate %v (%v), encoding/json's tokens say %v", b, dup, err, !dup)
		}
		if err != nil && !errors.As(err, &ke) {
			t.Fatalf("%q: valid JSON refused: %v", b, err)
		}
	})
}
