package layers

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// buildWords are phrases that speak of how the project was built rather than
// of the product: numbers of its own tracker's tickets, a ticket as the reason
// for a behaviour, a work period, a sibling folder outside the repository. A
// reader of the code has none of these; the reason itself belongs there.
// The patterns are written so that this file does not match them itself.
var buildWords = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bissues? #?\d+`),
	regexp.MustCompile(`(?i)[(]issue\b`),
	regexp.MustCompile(`(?i)\bthe[ ]issues?\b`),
	regexp.MustCompile(`(?i)\b(this|last|previous|earlier) round\b`),
	regexp.MustCompile(`(?i)\brounds? ago\b`),
	regexp.MustCompile(`\.\./shared\b`),
}

// externalRef matches a reference to another project's tracker (a URL, or
// Go's go.dev/issue/N), which names a durable source and may stay.
var externalRef = regexp.MustCompile(`https?://\S+|\bgo\.dev/issue/\d+`)

// wordsExempt are tracked files that are data, not the project's own words:
// a dictionary table, the tokenizers' vocabularies (one token a line, taken
// from the tokenizer's own files), WordNet's packed table (Ascii85), Unicode's confusables and their licence,
// and data sets and fuzz corpora under testdata (whose README and SOURCE files
// are still read).
func wordsExempt(path string) bool {
	if strings.HasPrefix(path, "rank/internal/bpe/") && filepath.Ext(path) == ".txt" || path == "rank/internal/wordnet/related.packed" {
		return true
	}
	if strings.HasPrefix(path, "rank/internal/cedict/") || path == "registry/internal/confusables/confusables_ascii.json" ||
		path == "registry/internal/confusables/tables.go" || path == "registry/internal/confusables/NOTICE" {
		return true
	}
	inTestdata := strings.HasPrefix(path, "testdata/") || strings.Contains(path, "/testdata/")
	return inTestdata && filepath.Ext(path) != ".md"
}

// TestProductSpeaksOfItself fails on a tracked text file (code, comments,
// docs, tests, Makefile, scripts, Python) that uses words of how the project
// was built, naming file and line.
func TestProductSpeaksOfItself(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, path := range trackedFiles(t) {
		if path == "" || wordsExempt(path) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet committed
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(data, 0) >= 0 {
			continue // binary
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, len(data)+1)
		for n := 1; sc.Scan(); n++ {
			line := externalRef.ReplaceAllString(sc.Text(), "")
			for _, re := range buildWords {
				if m := re.FindString(line); m != "" {
					t.Errorf("%s:%d: %q speaks of how the project was built; say the reason itself", path, n, m)
				}
			}
		}
	}
}
