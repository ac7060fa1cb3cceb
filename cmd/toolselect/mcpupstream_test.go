package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A server run as "node .../dist/index.js" takes its package's name, not
// "index"; without a package.json, its directory's. Two that still derive
// one name are refused with the way to name them.
func TestDeriveNameOfAScript(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) string {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	weather := write("weather/dist/index.js", "")
	write("weather/package.json", `{"name": "@acme/weather-mcp", "version": "1.0.0"}`)
	notes := write("notes-server/build/index.js", "")
	tasks := write("tasks/src/main.py", "")
	for _, tc := range []struct {
		command string
		args    []string
		want    string
	}{
		{"node", []string{weather}, "weather"},
		{"/usr/bin/node", []string{"--enable-source-maps", notes}, "notes-server"},
		{"python3", []string{tasks}, "tasks"},
		{"npx", []string{"-y", "@modelcontextprotocol/server-memory"}, "memory"},
		{"mcp-server-filesystem", nil, "filesystem"},
		{"node", []string{filepath.Join(dir, "weather/dist/weather-tool.js")}, "weather-tool"},
	} {
		if got := deriveName(tc.command, tc.args); got != tc.want {
			t.Errorf("%s %v: %q, want %q", tc.command, tc.args, got, tc.want)
		}
	}
	r := execCLI(t, nil, "", "mcp", "stats", "--upstream", "node "+notes, "--upstream", "node "+filepath.Join(dir, "notes-server/build/index.js"))
	if r.code != exitUsage || !strings.Contains(r.stderr, `the name "notes-server" derived from the command is already taken by another upstream; give this one its own: --upstream "OTHER=node `) {
		t.Errorf("a collision: exit %d: %s", r.code, r.stderr)
	}
}
