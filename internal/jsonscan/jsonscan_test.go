package jsonscan

import (
	"encoding/json"
	"testing"
)

// Every string String accepts, encoding/json decodes to the same text.
func FuzzStringAgreesWithJSON(f *testing.F) {
	for _, c := range []string{`"a"`, `""`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u003c"`, `"\ud83d\ude00"`, "\"\xff\"", `"a`, `"\x"`, `"\u12"`, "\"a\x01\"", `"日本"`} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, end, ok := String(b, 0)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(b[:end], &want); err != nil {
			t.Fatalf("String(%q) = %q, json.Unmarshal fails: %v", b[:end], got, err)
		}
		if got != want {
			t.Fatalf("String(%q) = %q, json.Unmarshal gives %q", b[:end], got, want)
		}
	})
}

func TestStringsAndSpace(t *testing.T) {
	list, end, ok := Strings([]byte(` [ "a" , "b\n" ] x`), 1)
	if !ok || end != 16 || len(list) != 2 || list[1] != "b\n" {
		t.Errorf("Strings = %q, %d, %v", list, end, ok)
	}
	if list, _, ok := Strings([]byte(`[]`), 0); !ok || list == nil {
		t.Errorf("an empty array must give a non-nil empty list: %#v, %v", list, ok)
	}
	if _, _, ok := Strings([]byte(`["a",]`), 0); ok {
		t.Error("a trailing comma was accepted")
	}
	if SkipSpace([]byte(" \t\r\nx"), 0) != 4 {
		t.Error("SkipSpace")
	}
}
