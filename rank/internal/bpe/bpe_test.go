package bpe

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"
)

// texts are what the counts are compared on: every line of the data sets'
// tool catalogs and queries (tool definitions in many languages), and
// strings built to reach the merge's corners.
func texts(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "sets", "*", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no data sets under testdata/sets (%v)", err)
	}
	out := []string{"", " ", "hello world", "<|endoftext|> is text here", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		strings.Repeat(" ", 300), strings.Repeat("ab", 200), strings.Repeat("\r\n", 50), "\xff\xfe invalid \xc3",
		strings.Repeat("x", 5000), "函数调用：查询北京的天气", "Überweisung an die Bank — ÄÖÜ ß", "👩‍👩‍👧‍👦 emoji 🎉🎉"}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		b := make([]byte, r.IntN(200))
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		out = append(out, string(b))
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			out = append(out, sc.Text())
		}
		fh.Close()
	}
	return out
}

// Every count equals tiktoken-go's, the reference the vocabularies were
// generated from, for both encodings.
func TestCountsEqualTiktokenGo(t *testing.T) {
	all := texts(t)
	if testing.Short() {
		all = all[:min(len(all), 2000)]
	}
	for _, c := range []struct {
		ours *Encoding
		ref  *codec.Codec
	}{{O200k(), codec.NewO200kBase()}, {Cl100k(), codec.NewCl100kBase()}} {
		if c.ours.Name() != c.ref.GetName() {
			t.Fatalf("name %q, want %q", c.ours.Name(), c.ref.GetName())
		}
		if len(c.ours.ranks) < 100000 {
			t.Fatalf("%s: %d tokens loaded", c.ours.Name(), len(c.ours.ranks))
		}
		bad := 0
		for _, s := range all {
			got, err := c.ours.Count(s)
			want, werr := c.ref.Count(s)
			if err != nil || werr != nil || got != want {
				bad++
				if bad <= 5 {
					t.Errorf("%s: %q: %d tokens (%v), tiktoken-go %d (%v)", c.ours.Name(), trim(s), got, err, want, werr)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d texts counted differently", c.ours.Name(), bad, len(all))
		}
	}
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// The vocabulary files are text: a token written as it is is a slice of
// the file, an escaped one (\\ and \xHH) is decoded, an empty line is a rank
// with no token; a file that breaks the form is refused, never read as
// other tokens.
func TestLoadReadsTheTextForm(t *testing.T) {
	e := load("test", "a\n\nb\\x00\\\\c\n\u00e9t\u00e9\n", splitCl100k)
	want := map[string]uint32{"a": 0, "b\x00\\c": 2, "été": 3}
	if len(e.ranks) != len(want) {
		t.Fatalf("ranks %v, want %v", e.ranks, want)
	}
	for tok, id := range want {
		if got, ok := e.ranks[tok]; !ok || got != id {
			t.Errorf("%q: rank %d (%v), want %d", tok, got, ok, id)
		}
	}
	for _, bad := range []string{"a", "b\\x0g\n", "b\\q\n", "b\\x0\n", "b\\\n"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%q: read without a word", bad)
				}
			}()
			load("test", bad, splitCl100k)
		}()
	}
}
