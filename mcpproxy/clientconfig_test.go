package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeConfig writes body as a configuration file and loads it.
func writeConfig(t *testing.T, name, body string) (*Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return LoadConfig(path)
}

// The secret values of the files below: no error, warning, log line or
// stats may hold them.
const (
	secretEnv    = "ghp_secretEnvValue123"
	secretHeader = "Bearer secretHeaderValue456"
)

// Each client's file, as the client writes it, becomes the upstreams it
// names, in file order; what the proxy has no use for is in Ignored.
func TestClientConfigShapes(t *testing.T) {
	for _, tc := range []struct {
		file, body string
		want       []Upstream
		ignored    []string
	}{
		{"claude_desktop_config.json", `{
			"globalShortcut": "Ctrl+Space",
			"mcpServers": {
				"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"]},
				"github": {"command": "docker", "args": ["run", "-i", "ghcr.io/github/github-mcp-server"], "env": {"GITHUB_TOKEN": "` + secretEnv + `"}}
			}}`,
			[]Upstream{
				{Name: "filesystem", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"}},
				{Name: "github", Command: "docker", Args: []string{"run", "-i", "ghcr.io/github/github-mcp-server"}, Env: map[string]string{"GITHUB_TOKEN": secretEnv}},
			},
			[]string{"globalShortcut"}},
		{".mcp.json", `{"mcpServers": {
				"memory": {"type": "stdio", "command": "mcp-server-memory", "cwd": "/tmp"},
				"remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "` + secretHeader + `"}},
				"legacy": {"type": "sse", "url": "https://mcp.example.com/sse"}
			}}`,
			[]Upstream{
				{Name: "memory", Command: "mcp-server-memory", Dir: "/tmp", Transport: transportStdio},
				{Name: "remote", URL: "https://mcp.example.com/mcp", Transport: transportHTTP, Headers: map[string]string{"Authorization": secretHeader}},
				{Name: "legacy", URL: "https://mcp.example.com/sse", Transport: transportSSE},
			}, nil},
		{"cursor-mcp.json", `{"mcpServers": {
				"web search": {"url": "http://127.0.0.1:9000/mcp", "autoApprove": ["search"]},
				"events": {"url": "http://127.0.0.1:9001/sse/"},
				"old": {"command": "x", "disabled": true},
				"a__b": {"command": "y", "envFile": ".env"}
			}}`,
			[]Upstream{{Name: "web-search", URL: "http://127.0.0.1:9000/mcp"}, {Name: "events", URL: "http://127.0.0.1:9001/sse/", Transport: transportSSE}, {Name: "a_b", Command: "y"}},
			[]string{
				`mcpServers.a__b (served as "a_b": an upstream name is letters, digits, '_', '.' and '-', without "__")`,
				"mcpServers.a__b.envFile", "mcpServers.old (disabled)",
				`mcpServers.web search (served as "web-search": an upstream name is letters, digits, '_', '.' and '-', without "__")`,
				"mcpServers.web search.autoApprove"}},
		{"vscode-mcp.json", `{"inputs": [], "servers": {
				"fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "dev": {"watch": "src/**"}}
			}}`,
			[]Upstream{{Name: "fetch", Command: "uvx", Args: []string{"mcp-server-fetch"}, Transport: transportStdio}},
			[]string{"servers.fetch.dev"}},
	} {
		c, err := writeConfig(t, tc.file, tc.body)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if !reflect.DeepEqual(c.Upstreams, tc.want) {
			t.Errorf("%s: upstreams\n got %+v\nwant %+v", tc.file, c.Upstreams, tc.want)
		}
		if !reflect.DeepEqual(c.Ignored, tc.ignored) {
			t.Errorf("%s: ignored\n got %q\nwant %q", tc.file, c.Ignored, tc.ignored)
		}
	}
}

// What a client's file cannot mean is refused with the place named and
// never the secret values; the proxy's own format still refuses unknown
// fields.
func TestClientConfigRefusals(t *testing.T) {
	for body, want := range map[string]string{
		`{"inputs": [{"id": "tok", "type": "promptString", "password": true}], "servers": {"gh": {"command": "x", "env": {"TOKEN": "${input:tok}"}}}}`: `servers.gh.env.TOKEN: ${input:tok} is a VS Code input`,
		`{"servers": {"gh": {"command": "x", "args": ["${workspaceFolder}"]}}}`:                                                                        `servers.gh.args[0]: ${workspaceFolder} is a placeholder only its client can expand`,
		`{"mcpServers": {"gh": {"command": "x", "env": {"A": "${TS_TEST_UNSET_VAR}"}}}}`:                                                               `the environment variable TS_TEST_UNSET_VAR is not set`,
		`{"mcpServers": {"gh": {"command": "x", "env": {"T": "${env:TOOLSELECT_MCP_AUTH_TOKEN}"}}}}`:                                                   `${env:TOOLSELECT_MCP_AUTH_TOKEN}: the proxy's own TOOLSELECT_* variables`,
		`{"mcpServers": {"r": {"type": "websocket", "url": "ws://x"}}}`:                                                                                `mcpServers.r: type "websocket" is not "stdio", "http" or "sse"`,
		`{"mcpServers": {"r": {"type": "sse", "command": "x"}}}`:                                                                                       `transport "sse" needs url`,
		`{"mcpServers": {"r": {"command": "x", "headers": {"Authorization": "` + secretHeader + `"}}}}`:                                                `headers need url`,
		`{"mcpServers": {"r": {"command": "x", "env": {"TOKEN": 12345}}}}`:                                                                             `mcpServers.r: env must be string, not a JSON number`,
		`{"mcpServers": {"r": {"command": "x"}, "r": {"command": "y"}}}`:                                                                               `the key "mcpServers.r" is given twice`,
		// The attacker's file: a key the proxy reads, in another case, after
		// the one a reviewer reads; and a name given twice where the client
		// and the proxy may keep different ones.
		`{"mcpServers": {"fs": {"command": "mcp-server-filesystem", "COMMAND": "/bin/sh", "ARGS": ["-c", "id"]}}}`: `the key "mcpServers.fs.COMMAND" matches "command" only in case`,
		`{"servers": {"fs": {"command": "x", "Env": {"PATH": "/tmp"}}}}`:                                           `the key "servers.fs.Env" matches "env" only in case`,
		`{"mcpServers": {"fs": {"command": "x", "env": {"PATH": "/usr/bin", "PATH": "/tmp"}}}}`:                    `the key "mcpServers.fs.env.PATH" is given twice`,
		`{"mcpServers": {"r": {"url": "http://x/", "headers": {"X-A": "1", "X-A": "2"}}}}`:                         `the key "mcpServers.r.headers.X-A" is given twice`,
		`{"upstreams": [], "allowDestructive": false, "AllowDestructive": true}`:                                   `the key "AllowDestructive" matches "allowDestructive" only in case`,
		`{"upstreams": [], "pins": "f", "Pins": ""}`:                                                               `the key "Pins" matches "pins" only in case`,
		`{"upstreams": [{"name": "a", "command": "x", "Command": "/bin/sh"}]}`:                                     `the key "upstreams.0.Command" matches "command" only in case`,
		`{"upstreams": [], "pins": "f", "pins": ""}`:                                                               `the key "pins" is given twice`,
		`{"mcpServers": {}} {"mcpServers": {}}`:                                                                    `unexpected data after the JSON value`,
		`{"upstreams": [], "mcpServers": {}}`:                                                                      `unknown field "mcpServers"`,
		`{"upstreams": [{"name": "a", "command": "x", "cwd": "/tmp"}]}`:                                            `unknown field "upstreams.0.cwd"`,
	} {
		_, err := writeConfig(t, "c.json", body)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %q", body, err, want)
			continue
		}
		if strings.Contains(err.Error(), "secretHeaderValue") {
			t.Errorf("%s: the error prints a secret: %v", body, err)
		}
	}
}

// ${NAME}, ${NAME:-default} (Claude Code) and ${env:NAME} (Cursor, VS Code)
// are read from the proxy's environment.
func TestClientConfigPlaceholders(t *testing.T) {
	t.Setenv("TS_TEST_TOKEN", "tok")
	t.Setenv("TS_TEST_HOST", "127.0.0.1")
	c, err := writeConfig(t, ".mcp.json", `{"mcpServers": {
		"a": {"command": "${TS_TEST_UNSET:-srv}", "args": ["--dir", "${TS_TEST_UNSET:-}/x"], "env": {"T": "${env:TS_TEST_TOKEN}"}},
		"b": {"url": "http://${TS_TEST_HOST}:9/mcp", "headers": {"Authorization": "Bearer ${TS_TEST_TOKEN}"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Upstream{
		{Name: "a", Command: "srv", Args: []string{"--dir", "/x"}, Env: map[string]string{"T": "tok"}},
		// What the environment put into the URL is not printed (Secrets).
		{Name: "b", URL: "http://127.0.0.1:9/mcp", Headers: map[string]string{"Authorization": "Bearer tok"}, Secrets: []string{"127.0.0.1"}},
	}
	if !reflect.DeepEqual(c.Upstreams, want) {
		t.Errorf("got %+v\nwant %+v", c.Upstreams, want)
	}
}

// Remote servers of a client's file are reached as it says: streamable HTTP
// with its headers (the upstream refuses a request without them), and SSE.
// The header's value reaches the upstream and nothing else: not the log
// (at debug), not the stats.
func TestClientConfigRemoteUpstreams(t *testing.T) {
	inner := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	guarded := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != secretHeader {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		inner.HTTPHandler(nil).ServeHTTP(w, r)
	}))
	t.Cleanup(guarded.Close)
	sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return inner.Server() }, nil))
	t.Cleanup(sse.Close)

	body, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"keyed":  map[string]any{"type": "http", "url": guarded.URL, "headers": map[string]string{"Authorization": secretHeader}},
		"nokey":  map[string]any{"type": "http", "url": guarded.URL},
		"legacy": map[string]any{"type": "sse", "url": sse.URL},
	}})
	cfg, err := writeConfig(t, ".mcp.json", string(body))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	p := startProxyWith(t, cfg, &Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	st := p.Stats(context.Background())
	state := map[string]string{}
	for _, u := range st.Upstreams {
		state[u.Name] = u.Transport + " " + string(u.State)
	}
	want := map[string]string{"keyed": "http ready", "nokey": "http down", "legacy": "sse ready"}
	if !reflect.DeepEqual(state, want) {
		t.Errorf("upstreams %v, want %v\n%s", state, want, logs.String())
	}
	cs := connectMemory(t, p, "")
	for _, name := range []string{"keyed__call_tool", "legacy__call_tool"} {
		args := map[string]any{"name": "t__sleep", "arguments": map[string]any{"ms": 1}}
		if res := call(t, cs, "call_tool", map[string]any{"name": name, "arguments": args}); res.IsError || text(res) != "done" {
			t.Errorf("%s: %s", name, text(res))
		}
	}
	stats, _ := json.Marshal(p.Stats(context.Background()))
	for what, out := range map[string]string{"log": logs.String(), "stats": string(stats)} {
		if strings.Contains(out, "secretHeaderValue") {
			t.Errorf("the %s prints the header's value:\n%s", what, out)
		}
	}
}

// The proxy's own format expands ${env:NAME} (and ${env:NAME:-default},
// ${userHome}) from the proxy's environment when it loads, and refuses any
// other spelling, naming it.
func TestOwnConfigPlaceholders(t *testing.T) {
	t.Setenv("TS_TEST_TOKEN", "tok")
	c, err := writeConfig(t, "own.json", `{"upstreams": [
		{"name": "a", "command": "srv", "args": ["${env:TS_TEST_UNSET:-d}"], "env": {"T": "${env:TS_TEST_TOKEN}"}},
		{"name": "b", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${env:TS_TEST_TOKEN}"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if c.Upstreams[0].Env["T"] != "tok" || c.Upstreams[0].Args[0] != "d" || c.Upstreams[1].Headers["Authorization"] != "Bearer tok" {
		t.Errorf("not expanded: %+v", c.Upstreams)
	}
	for body, want := range map[string]string{
		`{"upstreams": [{"name": "a", "command": "x", "env": {"T": "${TS_TEST_TOKEN}"}}]}`:             `upstreams[0].env.T: ${TS_TEST_TOKEN}: the proxy's configuration spells an environment variable ${env:TS_TEST_TOKEN}`,
		`{"upstreams": [{"name": "a", "command": "x", "args": ["${workspaceFolder}"]}]}`:               `upstreams[0].args[0]: ${workspaceFolder} is a placeholder only an editor can expand`,
		`{"upstreams": [{"name": "a", "command": "x", "args": ["${input:tok}"]}]}`:                     `upstreams[0].args[0]: ${input:tok} is a VS Code input`,
		`{"upstreams": [{"name": "a", "command": "x", "args": ["${env:TOOLSELECT_MCP_AUTH_TOKEN}"]}]}`: `the proxy's own TOOLSELECT_* variables`,
		`{"upstreams": [{"name": "a", "command": "x", "env": {"T": "${env:TS_TEST_UNSET}"}}]}`:         `upstreams[0].env.T: ${env:TS_TEST_UNSET}: the environment variable TS_TEST_UNSET is not set`,
		`{"upstreams": [{"name": "a", "command": "x", "env": {"T": "${what ever}"}}]}`:                 `${what ever} is not a placeholder the proxy knows`,
	} {
		if _, err := writeConfig(t, "own.json", body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %q", body, err, want)
		}
	}
}

// Every placeholder problem of a file is in one report, each at its place,
// so that a user fixes them in one go.
func TestPlaceholderProblemsInOneReport(t *testing.T) {
	_, err := writeConfig(t, "mcp.json", `{"inputs": [], "servers": {
		"a": {"command": "x", "args": ["${workspaceFolder}"], "env": {"K": "${input:key}", "L": "${env:TS_TEST_UNSET_1}"}},
		"b": {"url": "http://127.0.0.1:9/mcp", "headers": {"X": "${env:TOOLSELECT_MCP_AUTH_TOKEN}"}}}}`)
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{"4 placeholder problems", "servers.a.args[0]: ${workspaceFolder}", "servers.a.env.K: ${input:key}",
		"servers.a.env.L: ${env:TS_TEST_UNSET_1}: the environment variable TS_TEST_UNSET_1 is not set", "servers.b.headers.X: ${env:TOOLSELECT_MCP_AUTH_TOKEN}"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the report lacks %q:\n%v", want, err)
		}
	}
}

// VS Code writes JSONC: comments and trailing commas are read as white
// space, in client files and the proxy's own.
func TestJSONCConfig(t *testing.T) {
	c, err := writeConfig(t, "mcp.json", `// VS Code's .vscode/mcp.json
{
  /* the servers */
  "servers": {
    "memory": {"command": "mcp-server-memory", "args": ["--x", "http://a//b /* no comment */",],}, // trailing commas
  },
}`)
	if err != nil {
		t.Fatal(err)
	}
	// Comment markers inside strings are text.
	if len(c.Upstreams) != 1 || c.Upstreams[0].Command != "mcp-server-memory" || len(c.Upstreams[0].Args) != 2 || c.Upstreams[0].Args[1] != "http://a//b /* no comment */" {
		t.Errorf("%+v", c.Upstreams)
	}
	if _, err := writeConfig(t, "own.json", "{\"upstreams\": [{\"name\": \"a\", \"command\": \"x\"},], // one\n}"); err != nil {
		t.Errorf("own format with a comment: %v", err)
	}
	// JSONC is not a licence for anything: an unknown field, a second
	// object and a string broken by a comment marker are still refused.
	for body, want := range map[string]string{
		`{"upstreams": [], /* c */ "cwd": 1}`:               `unknown field "cwd"`,
		`{"servers": {}} // one` + "\n" + `{"servers": {}}`: `unexpected data after the JSON value`,
		`{"servers": {"a": {"command": "x" /* open}}}`:      ``,
	} {
		if _, err := writeConfig(t, "c.json", body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}
