package main

import (
	"os"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/internal/testing/mcpupstream"
)

// The test binary doubles as a small MCP upstream: with
// TOOLSELECT_TEST_UPSTREAM=echo it serves over stdio one tool, echo; with
// TOOLSELECT_TEST_UPSTREAM=no-tools a prompt and a
// resource and no tool (no tools capability; tools/list is "Method not
// found", as a TypeScript SDK server without tools answers).
func TestMain(m *testing.M) {
	switch os.Getenv("TOOLSELECT_TEST_UPSTREAM") {
	case "no-tools":
		mcpupstream.ServeNoTools("no-tools")
		return
	case "echo":
		mcpupstream.ServeEcho("echo")
		return
	}
	os.Exit(m.Run())
}

// noToolsUpstream is the --upstream spec of the test binary serving
// prompts and resources only, named owls.
func noToolsUpstream(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return "owls=TOOLSELECT_TEST_UPSTREAM=no-tools '" + exe + "'"
}

// An upstream offering prompts and resources but no tools is something to
// serve: "mcp" serves it, "mcp stats" counts it, neither exits "nothing to
// serve".
func TestMCPUpstreamWithoutTools(t *testing.T) {
	up := noToolsUpstream(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"zoo://owls__animals/owl"}}`,
	}, "\n") + "\n"
	r := execCLI(t, nil, in, "mcp", "--upstream", up)
	if r.code != exitOK || strings.Contains(r.stderr, "nothing to serve") || strings.Contains(r.stderr, "could not start") {
		t.Fatalf("mcp: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{`"owls__greet"`, `"hoot"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %s:\n%s", want, r.stdout)
		}
	}

	r = execCLI(t, nil, "", "mcp", "stats", "--upstream", up)
	if r.code != exitOK || !strings.Contains(r.stdout, `"state": "ready"`) {
		t.Fatalf("mcp stats: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
}

// --pass-env names more of the proxy's variables an --upstream gets; the
// proxy's own TOOLSELECT_* ones are refused, and so is a --pass-env with no
// --upstream to apply to.
func TestMCPPassEnvFlag(t *testing.T) {
	up := noToolsUpstream(t)
	r := execCLI(t, nil, "", "mcp", "stats", "--pass-env", "TOOLSELECT_MCP_AUTH_TOKEN", "--upstream", up)
	if r.code != exitUsage || !strings.Contains(r.stderr, `passEnv[0] "TOOLSELECT_MCP_AUTH_TOKEN": the proxy's own TOOLSELECT_* variables`) {
		t.Errorf("TOOLSELECT_ passed: exit %d: %s", r.code, r.stderr)
	}
	r = execCLI(t, nil, "", "mcp", "stats", "--pass-env", "GITHUB_TOKEN", "--upstream-url", "http://127.0.0.1:9/mcp")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--pass-env applies to --upstream commands") {
		t.Errorf("no --upstream: exit %d: %s", r.code, r.stderr)
	}
	r = execCLI(t, nil, "", "mcp", "stats", "--pass-env", "GITHUB_TOKEN", "--upstream", up)
	if r.code != exitOK {
		t.Errorf("a valid --pass-env: exit %d: %s", r.code, r.stderr)
	}
}

// A hung upstream (a program that never answers initialize) does not hold
// the client's initialize: "mcp" serves the upstream that is ready, and the
// hung one is neither waited for nor, before its start timeout, reported.
func TestMCPServesWithoutWaitingForAHungUpstream(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`,
	}, "\n") + "\n"
	r := execCLI(t, nil, in, "mcp", "--upstream", "hung=sleep 600", "--upstream", noToolsUpstream(t))
	if r.code != exitOK || strings.Contains(r.stderr, "could not start") {
		t.Fatalf("mcp: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, `"owls__greet"`) {
		t.Errorf("the ready upstream is not served:\n%s", r.stdout)
	}
}
