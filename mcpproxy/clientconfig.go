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
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/toolselect/toolselect/internal/strictjson"
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

// parseClientConfig reads a client's file whose servers are under key,
// its placeholders handled by pp.
func parseClientConfig(data []byte, key string, pp *placeholderPass) (*Config, error) {
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
		pp.upstream(where, &u)
		u.Name = upstreamName(name, taken)
		if u.Name != name {
			c.Ignored = append(c.Ignored, fmt.Sprintf("%s (served as %q: an upstream name is letters, digits, '_', '.' and '-', without \"__\")", where, u.Name))
		}
		c.Upstreams = append(c.Upstreams, u)
	}
	sort.Strings(c.Ignored)
	if key == vscodeServersKey {
		pp.declareInputs(top["inputs"])
	}
	return c, pp.err()
}

// upstream turns a client's server into an upstream, its placeholders
// left as they are (see placeholders.go).
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
	return u, nil
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
