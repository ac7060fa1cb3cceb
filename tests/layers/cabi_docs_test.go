package layers

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/cabi.md's table of operations names every C export: in full
// (`toolselect_registry_new`), or by its suffix after the group's first
// function (`_authorize`).
func TestCABIDocsListEveryExport(t *testing.T) {
	root := filepath.Join("..", "..")
	src, err := os.ReadFile(filepath.Join(root, "cabi", "cabi.go"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "cabi.md"))
	if err != nil {
		t.Fatal(err)
	}
	exports := regexp.MustCompile(`(?m)^//export (toolselect_\w+)`).FindAllStringSubmatch(string(src), -1)
	if len(exports) < 20 {
		t.Fatalf("found %d exports in cabi/cabi.go; the pattern is stale", len(exports))
	}
	for _, m := range exports {
		name := m[1]
		parts := strings.SplitN(name, "_", 3)
		short := ""
		if len(parts) == 3 {
			short = "_" + parts[2]
		}
		if !strings.Contains(string(doc), "`"+name+"`") && (short == "" || !strings.Contains(string(doc), "`"+short+"`")) {
			t.Errorf("docs/cabi.md does not list %s", name)
		}
	}
}
