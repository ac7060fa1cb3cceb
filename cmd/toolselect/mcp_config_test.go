package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// A client's file is served as it is: one warning line names what the
// proxy ignores, never a value of env or headers; each upstream that cannot
// start is reported once, by name, however it is given.
func TestMCPClientConfigWarningsAndFailures(t *testing.T) {
	const secret = "sk-do-not-print-1234"
	body, _ := json.Marshal(map[string]any{
		"globalShortcut": "Ctrl+Space",
		"mcpServers": map[string]any{
			"owls":   map[string]any{"command": mustExe(t), "env": map[string]string{"TOOLSELECT_TEST_UPSTREAM": "no-tools", "API_KEY": secret}, "autoApprove": []string{}},
			"broken": map[string]any{"command": "no-such-cmd-xyz", "env": map[string]string{"API_KEY": secret}},
			"remote": map[string]any{"type": "sse", "url": "http://127.0.0.1:1/sse", "headers": map[string]string{"Authorization": "Bearer " + secret}},
		},
	})
	file := writeTemp(t, "claude_desktop_config.json", string(body))
	for _, args := range [][]string{{"mcp", "--config", file}, {"mcp", "stats", "--config", file}} {
		r := execCLI(t, nil, "", args...)
		if r.code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		if strings.Contains(r.stderr+r.stdout, secret) {
			t.Errorf("%v prints a secret:\n%s%s", args, r.stderr, r.stdout)
		}
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		var warnings []string
		for _, l := range lines {
			if strings.Contains(l, "warning") {
				warnings = append(warnings, l)
			}
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "globalShortcut, mcpServers.owls.autoApprove") {
			t.Errorf("%v: want one warning naming globalShortcut and mcpServers.owls.autoApprove, got:\n%s", args, r.stderr)
		}
		for _, name := range []string{"broken", "remote"} {
			if n := strings.Count(r.stderr, name); n != 1 {
				t.Errorf("%v: upstream %s reported %d times, want once:\n%s", args, name, n, r.stderr)
			}
		}
	}
	// The same with nothing else to serve: each failing upstream once, and
	// the closing line counts them.
	r := execCLI(t, nil, "", "mcp", "--upstream", "broken=no-such-cmd-xyz", "--upstream-url", "remote=http://127.0.0.1:1/mcp")
	if r.code != exitUsage || !strings.Contains(r.stderr, "(2 could not start, named above)") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, name := range []string{"broken", "remote"} {
		if n := strings.Count(r.stderr, name); n != 1 {
			t.Errorf("upstream %s named %d times, want once:\n%s", name, n, r.stderr)
		}
	}
}

// mustExe is the test binary, which serves as an MCP upstream (TestMain).
func mustExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}
