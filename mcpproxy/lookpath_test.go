package mcpproxy

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCommandFoundInTheEntrysPath: an entry whose env sets PATH runs the
// command its client runs, the one found in that PATH, not the first in the
// proxy's own; a command not there is refused naming the PATH searched,
// never looked up elsewhere; relative entries are not searched.
func TestCommandFoundInTheEntrysPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the symlink and mode bits below are POSIX; commandPath's PATHEXT branch is read, not run, here")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	own, entry := t.TempDir(), t.TempDir()
	// The proxy's own PATH holds a binary of the same name that is not an
	// MCP server at all; the entry's PATH holds the test upstream.
	if err := os.WriteFile(filepath.Join(own, "mcp-test-server"), []byte("#!/bin/sh\necho not the one the client runs >&2\nexit 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(entry, "mcp-test-server")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", own+string(os.PathListSeparator)+os.Getenv("PATH"))
	env := map[string]string{"TOOLSELECT_TEST_UPSTREAM": "1", "PATH": "relative/dir" + string(os.PathListSeparator) + entry}
	if p, ok, err := commandPath("mcp-test-server", env); !ok || err != nil || p != filepath.Join(entry, "mcp-test-server") {
		t.Fatalf("commandPath = %q %v %v", p, ok, err)
	}
	p := startProxy(t, &Config{Upstreams: []Upstream{{Name: "t", Command: "mcp-test-server", Env: env}}})
	cs := connectMemory(t, p, "")
	if res := call(t, cs, "t__sleep", map[string]any{"ms": 1}); res.IsError || text(res) != "done" {
		t.Fatalf("the upstream in the entry's PATH did not answer: %s", text(res))
	}

	if _, ok, err := commandPath("mcp-test-server", map[string]string{"PATH": own + "-nowhere"}); !ok || err == nil || !strings.Contains(err.Error(), "env.PATH") {
		t.Errorf("a command missing from the entry's PATH: %v %v", ok, err)
	}
	for _, c := range []struct {
		cmd string
		env map[string]string
	}{{"mcp-test-server", nil}, {"./mcp-test-server", map[string]string{"PATH": entry}}, {exe, map[string]string{"PATH": entry}}} {
		if _, ok, _ := commandPath(c.cmd, c.env); ok {
			t.Errorf("%s with env %v: looked up in the entry's PATH, want exec's own rule", c.cmd, c.env)
		}
	}
}
