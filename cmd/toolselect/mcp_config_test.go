package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/mcpproxy"
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

// echoConfig writes a toolselect configuration fronting the test binary's
// echo upstream (TestMain), by way of import-config from a Claude Desktop
// file, and returns its path.
func echoConfig(t *testing.T) string {
	t.Helper()
	client, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"echo": map[string]any{"command": mustExe(t), "env": map[string]string{"TOOLSELECT_TEST_UPSTREAM": "echo"}},
	}})
	out := filepath.Join(t.TempDir(), "toolselect.json")
	r := execCLI(t, nil, "", "mcp", "import-config", writeTemp(t, "claude_desktop_config.json", string(client)), "--out", out)
	if r.code != exitOK {
		t.Fatalf("import-config: exit %d: %s", r.code, r.stderr)
	}
	return out
}

// serveFromSnippet parses a client's entry as the proxy reads a client's
// file, checks it runs "toolselect mcp --config PATH", starts the proxy with
// PATH replaced by config, and checks it serves the echo upstream's tool
// through find_tool and call_tool.
func serveFromSnippet(t *testing.T, what, snippet, config string) {
	t.Helper()
	cfg, err := mcpproxy.LoadConfig(writeTemp(t, "client.json", snippet))
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, snippet)
	}
	if len(cfg.Upstreams) != 1 {
		t.Fatalf("%s: %d servers, want the one toolselect entry", what, len(cfg.Upstreams))
	}
	u := cfg.Upstreams[0]
	if u.Name != "toolselect" || u.Command != "toolselect" || len(u.Args) != 3 || u.Args[0] != "mcp" || u.Args[1] != "--config" {
		t.Fatalf("%s: entry %+v, want toolselect mcp --config PATH", what, u)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"find_tool","arguments":{"query":"echo the text back"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"echo__echo","arguments":{"text":"hello from the snippet"}}}}`,
	}, "\n") + "\n"
	r := execCLI(t, nil, in, u.Args[0], u.Args[1], config)
	if r.code != exitOK {
		t.Fatalf("%s: exit %d: %s", what, r.code, r.stderr)
	}
	for _, want := range []string{`"name":"find_tool"`, `"name":"call_tool"`, `\"name\":\"echo__echo\"`, `"text":"hello from the snippet"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("%s: the proxy's answers lack %s:\n%s", what, want, r.stdout)
		}
	}
}

// docSnippets returns the first JSON block after each "#### TITLE" heading
// of docs/mcp.md.
func docSnippets(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "mcp.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, part := range strings.Split(string(doc), "\n#### ")[1:] {
		title, rest, _ := strings.Cut(part, "\n")
		_, block, ok := strings.Cut(rest, "```json\n")
		if !ok {
			continue
		}
		block, _, _ = strings.Cut(block, "```")
		out[title] = block
	}
	return out
}

// Each client's entry shown in docs/mcp.md, and each import-config prints,
// starts a proxy that serves the upstreams of the configuration it names.
func TestMCPClientSnippets(t *testing.T) {
	config := echoConfig(t)
	docs := docSnippets(t)
	for _, c := range mcpClients {
		snippet, ok := docs[c.title]
		if !ok {
			t.Errorf("docs/mcp.md has no \"#### %s\" section with a JSON block", c.title)
			continue
		}
		serveFromSnippet(t, "docs/mcp.md "+c.title, snippet, config)

		printed := importConfig(t, c.name, config)
		serveFromSnippet(t, "import-config --client "+c.name, printed, config)
	}
	// toolselect's own file is not a client's to import.
	if r := execCLI(t, nil, "", "mcp", "import-config", config); r.code != exitUsage || !strings.Contains(r.stderr, "already toolselect's own configuration") {
		t.Errorf("import-config of toolselect's own file: exit %d: %s", r.code, r.stderr)
	}
}

// importConfig runs import-config for client on a Claude Desktop file
// fronting the echo upstream, with a secret in env and headers, and returns
// the client's entry it prints.
func importConfig(t *testing.T, client, out string) string {
	t.Helper()
	const secret = "sk-never-printed-42"
	file, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"echo":   map[string]any{"command": mustExe(t), "env": map[string]string{"TOOLSELECT_TEST_UPSTREAM": "echo", "KEY": secret}},
		"remote": map[string]any{"url": "http://127.0.0.1:1/mcp", "headers": map[string]string{"Authorization": "Bearer " + secret}},
	}})
	r := execCLI(t, nil, "", "mcp", "import-config", "--client", client, writeTemp(t, "claude_desktop_config.json", string(file)))
	if r.code != exitOK {
		t.Fatalf("import-config --client %s: exit %d: %s", client, r.code, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, secret) {
		t.Errorf("import-config prints a secret:\n%s", r.stdout)
	}
	// The configuration first, then the client's entry, each after a "# " line.
	parts := strings.Split(r.stdout, "\n# ")
	if len(parts) != 2 || !strings.HasPrefix(parts[0], "# toolselect configuration") {
		t.Fatalf("import-config output:\n%s", r.stdout)
	}
	var shown mcpproxy.Config
	_, conf, _ := strings.Cut(parts[0], "\n")
	if err := json.Unmarshal([]byte(conf), &shown); err != nil || len(shown.Upstreams) != 2 || shown.Upstreams[0].Env["KEY"] != "***" {
		t.Fatalf("printed configuration (%v):\n%s", err, conf)
	}
	_, entry, _ := strings.Cut(parts[1], "\n")
	return entry
}

// --destructive sets the mode over the configuration file's; with
// --allow-destructive it must agree (allow), and a mode it does not know is
// a configuration error.
func TestMCPDestructiveFlag(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "proxy.json")
	if err := os.WriteFile(file, []byte(`{"catalogs":["tools.json"],"destructive":"allow"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cat := stringList{"tools.json"}
	for _, c := range []struct {
		flags mcpFlags
		want  string // the mode, or part of the error
	}{
		{mcpFlags{config: file}, "allow"},
		{mcpFlags{config: file, destructive: "ask"}, "ask"},
		{mcpFlags{catalogs: cat, allowDestructive: true, destructive: "allow"}, "allow"},
		{mcpFlags{catalogs: cat, allowDestructive: true, destructive: "ask"}, "disagree"},
		{mcpFlags{catalogs: cat, destructive: "maybe"}, `destructive "maybe" is not`},
	} {
		cfg, err := c.flags.configure()
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = cfg.Destructive
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("--destructive %q (--allow-destructive %v): %q, want %q", c.flags.destructive, c.flags.allowDestructive, got, c.want)
		}
	}
}
