package mcpproxy

// MCP clients' configuration files, read as they are: the proxy fronts the
// servers a user already has without the user rewriting them.
//
//   - "mcpServers": Claude Desktop (claude_desktop_config.json), Claude Code
//     (.mcp.json) and Cursor (mcp.json). A server is a command (command, args,
//     env, cwd) or a remote one (url, type "http" or "sse", headers).
//   - "servers": VS Code (.vscode/mcp.json), the same fields, with "inputs"
//     that VS Code prompts the user for.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/toolselect/toolselect/internal/strictjson"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The keys that hold the servers of a client's file.
const (
	clientServersKey = "mcpServers"
	vscodeServersKey = "servers"
)

// clientServer is one server of a client's file. Unknown fields are
// collected, not refused.
type clientServer struct {
	Type     string            `json:"type"`
	Command  string            `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	Cwd      string            `json:"cwd"`
	URL      string            `json:"url"`
	Headers  map[string]string `json:"headers"`
	Disabled bool              `json:"disabled"`
}

// clientServerFields are the fields of a server the proxy reads.
var clientServerFields = map[string]bool{"type": true, "command": true, "args": true, "env": true, "cwd": true,
	"url": true, "headers": true, "disabled": true}

// clientTransports maps a client's "type" to the proxy's transport.
var clientTransports = map[string]string{
	"stdio": transportStdio, "http": transportHTTP, "streamable-http": transportHTTP, "streamableHttp": transportHTTP,
	"sse": transportSSE,
}

// The shapes of a client's file, for strictjson.Check: a key that matches
// one the proxy reads only in case ("COMMAND", "Env") is refused, since
// encoding/json would read it as that key while the file's reader, and the
// warning about keys of no use to the proxy, would not.
type (
	clientFile struct {
		Servers map[string]clientServer `json:"mcpServers"`
	}
	vscodeFile struct {
		Servers map[string]clientServer `json:"servers"`
	}
)

// parseClientConfig reads a client's file whose servers are under key.
func parseClientConfig(data []byte, key string) (*Config, error) {
	shape := reflect.TypeFor[clientFile]()
	if key == vscodeServersKey {
		shape = reflect.TypeFor[vscodeFile]()
	}
	if err := strictjson.Check(data, shape); err != nil {
		return nil, err
	}
	top, _, err := orderedObject(data)
	if err != nil {
		return nil, err
	}
	c := &Config{Client: key}
	for k := range top {
		if k != key {
			c.Ignored = append(c.Ignored, k)
		}
	}
	if key == vscodeServersKey {
		if _, ok := top["inputs"]; ok {
			// The inputs are read only where used: a file that declares
			// them but passes none to a server is served.
			c.Ignored = slices.DeleteFunc(c.Ignored, func(k string) bool { return k == "inputs" })
		}
	}
	servers, order, err := orderedObject(top[key])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	taken := map[string]bool{}
	for _, name := range order {
		where := fmt.Sprintf("%s.%s", key, name)
		fields, _, err := orderedObject(servers[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		var s clientServer
		if err := json.Unmarshal(servers[name], &s); err != nil { // keys checked above
			return nil, fmt.Errorf("%s: %v", where, jsonTypeError(err))
		}
		for f := range fields {
			if !clientServerFields[f] {
				c.Ignored = append(c.Ignored, where+"."+f)
			}
		}
		if s.Disabled {
			c.Ignored = append(c.Ignored, where+" (disabled)")
			continue
		}
		u, err := s.upstream(where)
		if err != nil {
			return nil, err
		}
		u.Name = upstreamName(name, taken)
		if u.Name != name {
			c.Ignored = append(c.Ignored, fmt.Sprintf("%s (served as %q: an upstream name is letters, digits, '_', '.' and '-', without \"__\")", where, u.Name))
		}
		c.Upstreams = append(c.Upstreams, u)
	}
	sort.Strings(c.Ignored)
	return c, nil
}

// upstream turns a client's server into an upstream, placeholders expanded.
func (s clientServer) upstream(where string) (Upstream, error) {
	u := Upstream{Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Cwd, URL: s.URL, Headers: s.Headers}
	if s.Type != "" {
		t, ok := clientTransports[s.Type]
		if !ok {
			return Upstream{}, fmt.Errorf("%s: type %q is not \"stdio\", \"http\" or \"sse\"", where, s.Type)
		}
		u.Transport = t
	} else if strings.HasSuffix(strings.TrimRight(s.URL, "/"), "/sse") {
		// Cursor and Claude Desktop's bridges take a url without a type and
		// find the transport themselves; an endpoint named /sse is the
		// HTTP+SSE one.
		u.Transport = transportSSE
	}
	expand := func(field, v string) (string, error) {
		out, read, err := expandPlaceholdersFrom(v)
		if err != nil {
			return "", fmt.Errorf("%s.%s: %w", where, field, err)
		}
		if field != "cwd" && !strings.HasPrefix(field, "env.") && !strings.HasPrefix(field, "headers.") {
			// What the environment put into the command, its arguments or
			// the URL was kept out of the file to be kept out of sight:
			// never printed (Upstream.Secrets). Env and header values are
			// never printed anyway.
			for _, r := range read {
				if r != "" && !slices.Contains(u.Secrets, r) {
					u.Secrets = append(u.Secrets, r)
				}
			}
		}
		return out, nil
	}
	var err error
	if u.Command, err = expand("command", u.Command); err != nil {
		return Upstream{}, err
	}
	if u.Dir, err = expand("cwd", u.Dir); err != nil {
		return Upstream{}, err
	}
	if u.URL, err = expand("url", u.URL); err != nil {
		return Upstream{}, err
	}
	u.Args = append([]string(nil), u.Args...)
	for i := range u.Args {
		if u.Args[i], err = expand(fmt.Sprintf("args[%d]", i), u.Args[i]); err != nil {
			return Upstream{}, err
		}
	}
	for field, m := range map[string]map[string]string{"env": u.Env, "headers": u.Headers} {
		for k, v := range m {
			if m[k], err = expand(field+"."+k, v); err != nil {
				return Upstream{}, err
			}
		}
	}
	return u, nil
}

// placeholderRE finds the placeholders clients expand in a server's strings:
// ${NAME} and ${NAME:-default} (Claude Code), ${env:NAME} (Cursor, VS Code),
// ${input:ID} (VS Code's prompts) and the editors' own (${workspaceFolder}).
var placeholderRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// editorVariables are the placeholders VS Code and Cursor expand from the
// editor's state (the open workspace, the current file): only they can.
var editorVariables = map[string]bool{"workspaceFolder": true, "workspaceFolderBasename": true, "workspaceRoot": true,
	"file": true, "fileDirname": true, "fileBasename": true, "relativeFile": true, "cwd": true, "pathSeparator": true}

// envNameRE is an environment variable's name.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expandPlaceholders replaces ${NAME}, ${NAME:-default} and ${env:NAME}
// with the proxy's environment, and ${userHome} with the home directory. A VS Code input (${input:ID}) is refused,
// not left in place: the server would get the placeholder as its value. The
// error names the placeholder, never the value.
func expandPlaceholders(s string) (string, error) {
	out, _, err := expandPlaceholdersFrom(s)
	return out, err
}

// expandPlaceholdersFrom is expandPlaceholders that also returns the values
// it read from the environment (a default written in the file is not one).
func expandPlaceholdersFrom(s string) (string, []string, error) {
	var bad error
	var read []string
	out := placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		inner := m[2 : len(m)-1]
		name, def, hasDef := strings.Cut(inner, ":-")
		if n, ok := strings.CutPrefix(name, "env:"); ok {
			name = n
		}
		switch {
		case bad != nil:
		case name == "userHome":
			if home, err := os.UserHomeDir(); err == nil {
				return home
			}
			bad = fmt.Errorf("%s: no home directory", m)
		case strings.HasPrefix(inner, "input:"):
			bad = fmt.Errorf("%s is a VS Code input, a value VS Code prompts the user for and the proxy cannot: write the value into the file, or pass it in the environment as ${env:NAME}", m)
		case !envNameRE.MatchString(name) || editorVariables[name]:
			bad = fmt.Errorf("%s is a placeholder only its client can expand: write the value itself, or ${env:NAME} for an environment variable", m)
		default:
			if v, ok := os.LookupEnv(name); ok {
				read = append(read, v)
				return v
			}
			if hasDef {
				return def
			}
			bad = fmt.Errorf("%s: the environment variable %s is not set", m, name)
		}
		return m
	})
	return out, read, bad
}

// upstreamName makes a client's server key a valid upstream name, unique
// among taken: characters an upstream name does not allow become '-', a
// "__" (the default separator) becomes '_'.
func upstreamName(key string, taken map[string]bool) string {
	b := []byte(key)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '.' || ch == '-') {
			b[i] = '-'
		}
	}
	name := string(b)
	for strings.Contains(name, defaultSeparator) {
		name = strings.ReplaceAll(name, defaultSeparator, "_")
	}
	name = strings.TrimLeft(name, "_.-")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		name = "server"
	}
	base := name
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	taken[name] = true
	return name
}

// orderedObject decodes a JSON object into its members and their keys in
// file order (the order the servers are started and listed in). parseConfig
// has refused a name given twice (strictjson.Check) before it is called.
func orderedObject(data []byte) (map[string]json.RawMessage, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("not a JSON object")
	}
	m := map[string]json.RawMessage{}
	var order []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		m[k] = v
		order = append(order, k)
	}
	return m, order, nil
}

// jsonTypeError words a decoding error by field and expected type only: the
// value, which may be a secret, is not repeated.
func jsonTypeError(err error) error {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return fmt.Errorf("%s must be %s, not a JSON %s", te.Field, te.Type, te.Value)
	}
	return err
}
