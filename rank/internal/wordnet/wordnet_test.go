package wordnet

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	for _, line := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		w, rel, ok := strings.Cut(line, "\t")
		if !ok || rel == "" {
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
		t.Skip("WordNet database not installed (apt-get install -y wordnet-base; make test installs it when run as root): cannot regenerate related.txt")
	}
	out := filepath.Join(t.TempDir(), "related.txt")
	cmd := exec.Command("go", "run", "gen.go", "-dir", dir, "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen.go: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != data {
		t.Fatalf("related.txt differs from gen.go's output (%d vs %d bytes): run `make wordnet`", len(data), len(got))
	}
}
