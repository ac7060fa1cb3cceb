package packed

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// sample returns n sorted lines "kNNNNNN\tvalue NNNNNN\n", long enough to
// span several blocks.
func sample(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%06d\tvalue %d %s\n", i*2, i, strings.Repeat("x", i%50))
	}
	return b.String()
}

func pack(t *testing.T, text string) *Table {
	t.Helper()
	var buf bytes.Buffer
	if err := Pack(&buf, []byte(text)); err != nil {
		t.Fatal(err)
	}
	tab, err := Open(buf.String())
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestRoundTrip(t *testing.T) {
	text := sample(20000)
	tab := pack(t, text)
	if tab.Len() < 3 {
		t.Fatalf("%d blocks for %d bytes, want several", tab.Len(), len(text))
	}
	var all strings.Builder
	for i := range tab.Len() {
		all.WriteString(tab.Lines(i))
	}
	if all.String() != text {
		t.Fatal("the blocks do not add up to the text packed")
	}
	for i := range 20000 {
		key := fmt.Sprintf("k%06d", i*2)
		want := fmt.Sprintf("value %d %s", i, strings.Repeat("x", i%50))
		if v, ok := tab.Lookup(key); !ok || v != want {
			t.Fatalf("Lookup(%s) = %q, %v; want %q", key, v, ok, want)
		}
		// Keys between two lines are absent, and Seek finds the next key.
		odd := fmt.Sprintf("k%06d", i*2+1)
		if v, ok := tab.Lookup(odd); ok || tab.Has(odd) {
			t.Fatalf("Lookup(%s) = %q, want absent", odd, v)
		}
		if !tab.Has(key) {
			t.Fatalf("Has(%s) = false", key)
		}
		k, ok := tab.Seek(odd)
		if next := fmt.Sprintf("k%06d", i*2+2); i < 19999 && (!ok || k != next) {
			t.Fatalf("Seek(%s) = %s, %v; want %s", odd, k, ok, next)
		}
		if i == 19999 && ok {
			t.Fatalf("Seek(%s) after the last key = %s, want none", odd, k)
		}
	}
	if k, ok := tab.Seek(""); !ok || k != "k000000" {
		t.Fatalf("Seek(\"\") = %s, %v; want the first key", k, ok)
	}
}

func TestPackRefuses(t *testing.T) {
	for name, text := range map[string]string{
		"no final newline": "a\t1\nb\t2",
		"no tab":           "a\t1\nb 2\n",
		"empty key":        "\t1\n",
		"two tabs":         "a\t1\t2\n",
		"unsorted":         "b\t1\na\t2\n",
		"repeated":         "a\t1\na\t2\n",
	} {
		if err := Pack(&bytes.Buffer{}, []byte(text)); err == nil {
			t.Errorf("%s: Pack(%q) succeeded, want an error", name, text)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	var buf bytes.Buffer
	if err := Pack(&buf, []byte(sample(5000))); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	for name, data := range map[string]string{
		"empty":     "",
		"no header": "a\t1\n",
		"truncated": good[:len(good)-1],
		"index cut": good[:len(magic)+3],
		"keys only": good[:len(magic)+100],
	} {
		if _, err := Open(data); err == nil {
			t.Errorf("%s: Open succeeded, want an error", name)
		}
	}
}

func TestEmpty(t *testing.T) {
	tab := pack(t, "")
	if _, ok := tab.Seek("a"); ok || tab.Has("a") || tab.Len() != 0 {
		t.Fatal("an empty table found a line")
	}
	if _, ok := tab.Lookup("a"); ok {
		t.Fatal("Lookup in an empty table found a line")
	}
}

// TestPackedIsText: a table of ASCII lines packs to printable ASCII lines
// (the repository holds text only), its values not readable as written.
func TestPackedIsText(t *testing.T) {
	text := sample(5000)
	var buf bytes.Buffer
	if err := Pack(&buf, []byte(text)); err != nil {
		t.Fatal(err)
	}
	for i, c := range buf.Bytes() {
		if c != '\n' && (c < 0x20 || c > 0x7e) {
			t.Fatalf("byte %d of the packed table is %#x, not printable ASCII", i, c)
		}
	}
	if strings.Contains(buf.String(), "value 4999") {
		t.Error("the values are written as they are, not deflated")
	}
	if buf.Len() >= len(text)/2 {
		t.Errorf("packed %d bytes into %d", len(text), buf.Len())
	}
}
