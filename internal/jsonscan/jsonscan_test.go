package jsonscan

import (
	"encoding/json"
	"fmt"
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

// Names finds a repeated name whether the object is small (the slice) or
// large (the map it moves to after 16 names), and only a repeated one.
func TestNames(t *testing.T) {
	for _, n := range []int{3, 16, 17, 40} {
		var names Names
		for i := 0; i < n; i++ {
			if names.Add(fmt.Sprintf("k%d", i)) {
				t.Fatalf("%d names: k%d reported repeated on first sight", n, i)
			}
		}
		for _, i := range []int{0, n / 2, n - 1} {
			if !names.Add(fmt.Sprintf("k%d", i)) {
				t.Errorf("%d names: k%d given again not reported", n, i)
			}
		}
	}
}
