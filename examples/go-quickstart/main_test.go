package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The quick start runs as the README says (go run ./examples/go-quickstart)
// with no endpoint configured, and does each step: a ranked pick with the
// tool's own word as the reason, a selected call, the call run.
func TestQuickstartRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example with go run")
	}
	cmd := exec.Command("go", "run", ".")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LLM_COMMON_TOOL_SELECTION_") && !strings.HasPrefix(kv, "OPENAI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	for _, want := range []string{
		"rank: get_weather ", "matched weather",
		"no model endpoint configured: using the loopback fake model",
		`select: get_weather {"city":"Paris"}`,
		"run: get_weather -> light rain in Paris, 14°C (ok)",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// The README and docs/python.md show the example programs whole, so what a
// reader copies is what the tests run.
func TestDocsShowTheProgramsWhole(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme, pydoc := read("../../README.md"), read("../../docs/python.md")
	for doc, files := range map[string][]string{
		"README.md":      {"main.go", "../python_quickstart.py"},
		"docs/python.md": {"../python_quickstart.py"},
	} {
		text := readme
		if doc == "docs/python.md" {
			text = pydoc
		}
		for _, f := range files {
			if !strings.Contains(text, read(f)) {
				t.Errorf("%s does not show %s whole: copy the program into it again", doc, f)
			}
		}
	}
}
