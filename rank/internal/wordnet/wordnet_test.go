package wordnet

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/rank/internal/packed"
)

func TestRelated(t *testing.T) {
	for w, want := range map[string]string{
		"automobile": "car", "cars": "auto", "pictures": "image", "forecasting": "prediction",
	} {
		if got := Related(w); !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("Related(%q) = %q, want it to hold %q", w, got, want)
		}
	}
	for _, w := range []string{"", "zzzz", "aardvarkz", "car\t"} {
		if got := Related(w); got != "" {
			t.Errorf("Related(%q) = %q, want nothing", w, got)
		}
	}
}

// Every line of the table is found by its own word, whatever its neighbours.
func TestLookupEveryLine(t *testing.T) {
	n := 0
	for _, line := range strings.Split(strings.TrimSuffix(text(table()), "\n"), "\n") {
		w, rel, _ := strings.Cut(line, "\t")
		if rel == "" {
			t.Fatalf("malformed line %q", line)
		}
		if got := lookup(w); got != rel {
			t.Fatalf("lookup(%q) = %q, want %q", w, got, rel)
		}
		n++
	}
	if n < 50000 {
		t.Fatalf("table has %d words", n)
	}
}

// The committed table is what gen.go makes of WordNet 3.0 as Debian's
// wordnet-base installs it.
func TestTableIsGenerated(t *testing.T) {
	const dir = "/usr/share/wordnet"
	if _, err := os.Stat(filepath.Join(dir, "data.noun")); err != nil {
		t.Skip("WordNet database not installed (apt-get install -y wordnet-base; make test installs it when run as root): cannot regenerate related.packed")
	}
	out := filepath.Join(t.TempDir(), "related.packed")
	cmd := exec.Command("go", "run", "gen.go", "-dir", dir, "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen.go: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The lines, not the deflated bytes: another Go release may deflate
	// the same lines differently.
	gen, err := packed.Open(string(got))
	if err != nil {
		t.Fatal(err)
	}
	if want, have := text(gen), text(table()); have != want {
		t.Fatalf("related.packed differs from gen.go's output (%d vs %d bytes of lines): run `make wordnet`", len(have), len(want))
	}
}

// text returns all the lines of a packed table.
func text(t *packed.Table) string {
	var b strings.Builder
	for i := range t.Len() {
		b.WriteString(t.Lines(i))
	}
	return b.String()
}

// Known agrees with Related, base forms included, on listed words, their
// inflections and words the table does not know.
func TestKnown(t *testing.T) {
	for _, w := range []string{"automobile", "cars", "pictures", "forecasting", "download", "", "zzzz", "aardvarkz", "car\t", "getweather"} {
		if got, want := Known(w), Related(w) != ""; got != want {
			t.Errorf("Known(%q) = %v, Related says %v", w, got, want)
		}
	}
}
