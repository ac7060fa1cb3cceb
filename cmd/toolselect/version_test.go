package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolselect/toolselect"
)

// One version, written once in VERSION, is what the CLI, the MCP server
// information, the Python package and its metadata report (the C library's
// toolselect_version is checked against the package by the Python loader;
// tests in python/tests/test_wheel.py).
func TestOneVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(b))
	if toolselect.Version() != want {
		t.Fatalf("VERSION %q, module %q", want, toolselect.Version())
	}
	r := execCLI(t, nil, "", "version")
	if !strings.HasPrefix(r.stdout, "toolselect "+want+" (") {
		t.Fatalf("toolselect version: %q", r.stdout)
	}
	// Nothing else writes a version down.
	for _, f := range []string{"../../python/toolselect/__init__.py", "../../python/pyproject.toml", "../../cabi/cabi.go", "version.go", "../../mcpproxy/proxy.go"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(`(?m)^\s*(__version__|version|const Version|var Version)\s*=\s*"\d+\.\d+`).Find(src); m != nil {
			t.Errorf("%s writes a version of its own: %s", f, m)
		}
	}
}
