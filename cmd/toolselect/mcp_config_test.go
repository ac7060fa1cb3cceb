package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
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
	// Absolute paths: Claude Desktop starts servers without the shell's
	// PATH, from "/".
	if u.Name != "toolselect" || !filepath.IsAbs(u.Command) || !strings.HasPrefix(filepath.Base(u.Command), "toolselect") ||
		len(u.Args) != 3 || u.Args[0] != "mcp" || u.Args[1] != "--config" || !filepath.IsAbs(u.Args[2]) {
		t.Fatalf("%s: entry %+v, want /ABS/toolselect mcp --config /ABS/PATH", what, u)
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
		if !strings.Contains(printed, strconv.Quote(mustExe(t))) {
			t.Errorf("import-config --client %s: the entry does not name this binary (%s):\n%s", c.name, mustExe(t), printed)
		}
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

// import-config keeps placeholders as references: the secret a ${NAME}
// stands for is in the proxy's environment when it starts, never in the
// file written; --out leaves a 0600 file whatever mode the file it
// replaces had. The proxy started on what was written expands the
// reference from its own environment.
func TestMCPImportKeepsReferences(t *testing.T) {
	const secret = "ghp_never_on_disk_0123456789"
	t.Setenv("TS_TEST_GH_TOKEN", secret)
	file, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"echo": map[string]any{"command": mustExe(t), "env": map[string]string{"TOOLSELECT_TEST_UPSTREAM": "echo", "GH": "${TS_TEST_GH_TOKEN}", "LIT": "written-out"}},
		"web":  map[string]any{"url": "http://127.0.0.1:1/mcp", "headers": map[string]string{"Authorization": "Bearer ${env:TS_TEST_GH_TOKEN}"}},
	}})
	out := filepath.Join(t.TempDir(), "toolselect.json")
	if err := os.WriteFile(out, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := execCLI(t, nil, "", "mcp", "import-config", writeTemp(t, ".mcp.json", string(file)), "--out", out)
	if r.code != exitOK {
		t.Fatalf("import-config: exit %d: %s", r.code, r.stderr)
	}
	written, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(out); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("--out over a 0644 file left mode %04o", fi.Mode().Perm())
	}
	if strings.Contains(string(written)+r.stdout+r.stderr, secret) {
		t.Fatalf("the secret a placeholder stands for is written or printed:\n%s\n%s", written, r.stdout)
	}
	for _, want := range []string{`"GH": "${env:TS_TEST_GH_TOKEN}"`, `"Authorization": "Bearer ${env:TS_TEST_GH_TOKEN}"`, `"LIT": "written-out"`} {
		if !strings.Contains(string(written), want) {
			t.Errorf("the written configuration lacks %s:\n%s", want, written)
		}
	}
	// Printed: a bare reference says where the value comes from; what is
	// written out is masked.
	if !strings.Contains(r.stdout, `"GH": "${env:TS_TEST_GH_TOKEN}"`) || strings.Contains(r.stdout, "written-out") {
		t.Errorf("printed:\n%s", r.stdout)
	}
	cfg, err := mcpproxy.LoadConfig(out)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Upstreams[0].Env["GH"] != secret || cfg.Upstreams[1].Headers["Authorization"] != "Bearer "+secret {
		t.Errorf("the proxy does not expand the references at start: %+v", cfg.Upstreams)
	}
	// A variable unset where import-config runs is said, not fatal.
	t.Setenv("TS_TEST_GH_TOKEN", "")
	os.Unsetenv("TS_TEST_GH_TOKEN")
	r = execCLI(t, nil, "", "mcp", "import-config", writeTemp(t, ".mcp.json", string(file)))
	if r.code != exitOK || !strings.Contains(r.stderr, "reads TS_TEST_GH_TOKEN from the environment, not set here") {
		t.Errorf("unset: exit %d: %s", r.code, r.stderr)
	}
}

// A VS Code input stays VS Code's to ask for: the entry import-config
// prints passes it to the proxy in a variable (with the input's
// declaration), and the configuration reads that variable.
func TestMCPImportVSCodeInputs(t *testing.T) {
	file := `{
  // VS Code writes comments
  "inputs": [{"type": "promptString", "id": "gh-token", "description": "GitHub token", "password": true}, {"type": "promptString", "id": "unused"}],
  "servers": {"gh": {"type": "stdio", "command": "github-mcp-server", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${input:gh-token}"}},},
}`
	out := filepath.Join(t.TempDir(), "toolselect.json")
	r := execCLI(t, nil, "", "mcp", "import-config", writeTemp(t, "mcp.json", file), "--client", "vscode", "--out", out)
	if r.code != exitOK {
		t.Fatalf("import-config: exit %d: %s", r.code, r.stderr)
	}
	written, _ := os.ReadFile(out)
	if !strings.Contains(string(written), `"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:VSCODE_INPUT_GH_TOKEN}"`) {
		t.Errorf("written:\n%s", written)
	}
	_, entry, _ := strings.Cut(r.stdout, "\n# VS Code")
	_, entry, _ = strings.Cut(entry, "\n")
	var snippet struct {
		Inputs  []map[string]any `json:"inputs"`
		Servers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(entry), &snippet); err != nil {
		t.Fatalf("%v:\n%s", err, entry)
	}
	if snippet.Servers["toolselect"].Env["VSCODE_INPUT_GH_TOKEN"] != "${input:gh-token}" || len(snippet.Inputs) != 1 || snippet.Inputs[0]["id"] != "gh-token" || snippet.Inputs[0]["password"] != true {
		t.Errorf("entry:\n%s", entry)
	}
	// The same file for a client that has no inputs is refused.
	r = execCLI(t, nil, "", "mcp", "import-config", writeTemp(t, "mcp.json", file), "--client", "cursor")
	if r.code != exitUsage || !strings.Contains(r.stderr, "VS Code inputs (gh-token)") {
		t.Errorf("cursor: exit %d: %s", r.code, r.stderr)
	}
}

// What import-config prints keeps a URL's user info and query string out of
// sight, and a placeholder in the URL or the arguments stays a reference;
// --out writes the user info and query string as given. The proxy that
// expands the references at start lists what the environment put into the
// URL, the command or the arguments as Secrets, so it masks them in its
// errors, stats and log.
func TestMCPImportConfigMasksSecretsInURLsAndArgs(t *testing.T) {
	t.Setenv("TS_TEST_PATH_KEY", "path-key-secret")
	t.Setenv("TS_TEST_ARG_TOKEN", "arg-token-secret")
	client := `{"mcpServers": {
		"web": {"url": "https://user:userinfo-secret@mcp.example/mcp/${env:TS_TEST_PATH_KEY}/sse?api_key=query-secret"},
		"local": {"command": "server", "args": ["--token", "${TS_TEST_ARG_TOKEN}", "--home", "${TS_TEST_UNSET:-plain-default}"]}
	}}`
	out := filepath.Join(t.TempDir(), "toolselect-mcp.json")
	r := execCLI(t, nil, "", "mcp", "import-config", writeTemp(t, "claude_desktop_config.json", client), "--out", out)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, secret := range []string{"userinfo-secret", "query-secret", "path-key-secret", "arg-token-secret"} {
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("%q printed:\n%s%s", secret, r.stdout, r.stderr)
		}
	}
	for _, shown := range []string{"https://mcp.example/mcp/${env:TS_TEST_PATH_KEY}/sse?...", "${env:TS_TEST_ARG_TOKEN}", "${env:TS_TEST_UNSET:-plain-default}"} {
		if !strings.Contains(r.stdout, shown) {
			t.Errorf("the printed configuration lacks %s:\n%s", shown, r.stdout)
		}
	}
	written, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"userinfo-secret", "query-secret", "${env:TS_TEST_PATH_KEY}", "${env:TS_TEST_ARG_TOKEN}"} {
		if !strings.Contains(string(written), want) {
			t.Errorf("the written configuration lacks %s:\n%s", want, written)
		}
	}
	cfg, err := mcpproxy.LoadConfig(out)
	if err != nil {
		t.Fatal(err)
	}
	var secrets []string
	for _, u := range cfg.Upstreams {
		secrets = append(secrets, u.Secrets...)
	}
	slices.Sort(secrets)
	if !slices.Equal(secrets, []string{"arg-token-secret", "path-key-secret"}) {
		t.Errorf("the proxy's expanded secrets: %q", secrets)
	}
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
