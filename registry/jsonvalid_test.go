package registry

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

var validJSONCases = []string{
	``, ` `, `{}`, `[]`, `{"a":1}`, ` {"a" : [1, 2.5, -0, 1e3, 1E-2, 0.1e+5] } `, `{"a":}`, `{"a" 1}`, `{,}`, `[1,]`, `[,1]`,
	`{"a":1,}`, `{1:2}`, `"x"`, `"\u00e9\n\"\\\/\b\f\r\t"`, `"\u00g0"`, `"\x"`, "\"a\x01\"", "\"\xff\"", `01`, `-`, `-01`,
	`1.`, `.5`, `1e`, `1e+`, `+1`, `true`, `tru`, `false`, `null`, `nul`, `truex`, `[true false]`, `{"a":{"b":[{}]}}`,
	`{"a":{"b":[{}]}`, `]`, `}`, `[}`, `{]`, `"unterminated`, `"\u12"`, `1 2`, "\t[\r\n]\n", `[1]]`, `{"a":1}}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000), strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validJSONCases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%.60q) = %v, json.Valid says %v", c, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range validJSONCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

// plainStrings decodes exactly what json.Unmarshal decodes into []string, or
// declines.
func FuzzPlainStrings(f *testing.F) {
	for _, c := range []string{`[]`, `[ ]`, `["a"]`, `["a", "b" ]`, `["a",]`, `[,"a"]`, `["a" "b"]`, `["\u00e9"]`, "[\"\xff\"]", `[1]`, `["a"]]`, `[`, `["a"`, `null`, `[null]`} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := plainStrings(b)
		if !ok {
			return
		}
		var want []string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("plainStrings(%q) = %q, json.Unmarshal fails: %v", b, got, err)
		}
		if want == nil || got == nil || !slices.Equal(got, want) {
			t.Fatalf("plainStrings(%q) = %#v, json.Unmarshal gives %#v", b, got, want)
		}
	})
}
