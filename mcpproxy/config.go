package mcpproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/toolselect/toolselect/rank"
)

// Defaults used when a Config leaves a field at its zero value.
const (
	defaultSeparator = "__"
	defaultTimeout   = 30 * time.Second
)

// Upstream describes one MCP server the proxy connects to: either a command
// started as a child process speaking stdio, or the URL of a streamable HTTP
// server.
type Upstream struct {
	// Name prefixes the upstream's tools (name + separator + tool). It must
	// not contain the separator.
	Name string `json:"name"`
	// Command and Args start a stdio server.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is added to the proxy's own environment for the child process.
	Env map[string]string `json:"env,omitempty"`
	// Dir is the child's working directory (default: the proxy's).
	Dir string `json:"dir,omitempty"`
	// URL is a streamable HTTP endpoint (exclusive with Command).
	URL string `json:"url,omitempty"`
}

// Exposure selects what tools/list shows.
type Exposure struct {
	// Mode is "meta" (default: find_tool, call_tool and the keep-list) or
	// "top" (no meta-tools: the TopK tools ranked for Query, plus the keep-list).
	Mode string `json:"mode,omitempty"`
	// TopK is the number of tools served in "top" mode.
	TopK int `json:"topK,omitempty"`
	// Query is the fixed query or task ranked in "top" mode.
	Query string `json:"query,omitempty"`
}

// Duration is a time.Duration that reads from JSON as a Go duration string
// ("30s") or a number of seconds.
type Duration time.Duration

// UnmarshalJSON accepts "1m30s" or 90.
func (d *Duration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("timeout %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("timeout must be a duration string or a number of seconds, got %s", b)
	}
	*d = Duration(f * float64(time.Second))
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Config configures a Proxy. The zero value is valid (no upstreams, defaults
// everywhere); a nil *Config passed to New means the same.
type Config struct {
	// Upstreams are the MCP servers whose tools are imported.
	Upstreams []Upstream `json:"upstreams"`
	// Separator joins an upstream's name and a tool's name (default "__").
	Separator string `json:"separator,omitempty"`
	// Keep lists namespaced tool names always shown in full in tools/list.
	Keep []string `json:"keep,omitempty"`
	// AllowDestructive makes tools with destructiveHint findable and callable.
	AllowDestructive bool `json:"allowDestructive,omitempty"`
	// Timeout bounds every upstream tools/call (default 30s). Starting and
	// listing an upstream get at least 30s.
	Timeout Duration `json:"timeout,omitempty"`
	// Listen is the streamable HTTP address (host:port); empty means stdio.
	// Read by the command line, not by the Proxy.
	Listen string `json:"listen,omitempty"`
	// Expose selects the exposure mode.
	Expose Exposure `json:"expose,omitempty"`
	// Catalogs are catalog files (any format registry.ReadCatalog reads)
	// imported without an upstream: findable and counted, not callable.
	Catalogs []string `json:"catalogs,omitempty"`
	// Pins is a pin file (registry.Pins): each upstream or catalog tool's
	// definition is pinned on first sight, and a tool whose definition later
	// differs is held (not listed, not findable, a call is a tool error)
	// until approved. Empty means no pinning.
	Pins string `json:"pins,omitempty"`
	// StrictDescriptions holds, too, tools whose description carries
	// invisible or bidirectional control characters or an HTML comment
	// (flagged in stats and the pin file either way). Needs Pins.
	StrictDescriptions bool `json:"strictDescriptions,omitempty"`
}

// separator returns the configured or default separator.
func (c *Config) separator() string {
	if c.Separator == "" {
		return defaultSeparator
	}
	return c.Separator
}

func (c *Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return defaultTimeout
	}
	return time.Duration(c.Timeout)
}

var upstreamNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Validate reports the first problem in the configuration, naming the field.
func (c *Config) Validate() error {
	sep := c.separator()
	if strings.TrimSpace(sep) != sep {
		return fmt.Errorf("separator %q must not contain surrounding white space", sep)
	}
	seen := map[string]bool{}
	for i, u := range c.Upstreams {
		where := fmt.Sprintf("upstreams[%d]", i)
		if u.Name == "" {
			return fmt.Errorf("%s: name is required", where)
		}
		where = fmt.Sprintf("upstreams[%d] (%q)", i, u.Name)
		if !upstreamNameRE.MatchString(u.Name) {
			return fmt.Errorf("%s: name must match %s", where, upstreamNameRE)
		}
		if strings.Contains(u.Name, sep) {
			return fmt.Errorf("%s: name contains the separator %q", where, sep)
		}
		if seen[u.Name] {
			return fmt.Errorf("%s: name is used twice", where)
		}
		seen[u.Name] = true
		switch {
		case u.Command == "" && u.URL == "":
			return fmt.Errorf("%s: set command or url", where)
		case u.Command != "" && u.URL != "":
			return fmt.Errorf("%s: set command or url, not both", where)
		case u.URL != "" && !strings.HasPrefix(u.URL, "http://") && !strings.HasPrefix(u.URL, "https://"):
			return fmt.Errorf("%s: url must be http:// or https://", where)
		}
	}
	if c.Timeout < 0 {
		return errors.New("timeout must not be negative")
	}
	switch c.Expose.Mode {
	case "", "meta":
	case "top":
		if c.Expose.TopK <= 0 || c.Expose.TopK > rank.MaxFindLimit {
			return fmt.Errorf("expose.topK must be 1..%d in \"top\" mode (the most a ranking returns)", rank.MaxFindLimit)
		}
		if strings.TrimSpace(c.Expose.Query) == "" {
			return errors.New("expose.query is required in \"top\" mode")
		}
	default:
		return fmt.Errorf("expose.mode %q is not \"meta\" or \"top\"", c.Expose.Mode)
	}
	return nil
}

// LoadConfig reads a JSON configuration file. Unknown fields are an error so
// that a misspelt option is not silently ignored.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// ParseUpstream reads the command-line form of an upstream:
// "[name=]COMMAND ARGS..." where the command may be preceded by environment
// assignments as in a shell ("memory=MEMORY_FILE_PATH=/tmp/m.jsonl
// mcp-server-memory"). Words are split on white space; single and double
// quotes group, and a backslash escapes the next character. A leading
// "KEY=" whose KEY is all upper case is an environment assignment, any
// other valid name is the upstream's name. Without a name, one is derived
// from the command (see DeriveName).
func ParseUpstream(spec string) (Upstream, error) {
	var u Upstream
	words, err := splitWords(spec)
	if err != nil {
		return Upstream{}, err
	}
	if len(words) > 0 {
		if k, v, ok := strings.Cut(words[0], "="); ok && upstreamNameRE.MatchString(k) && !envKeyRE.MatchString(k) {
			u.Name = k
			if v == "" {
				words = words[1:]
			} else {
				words[0] = v
			}
		}
	}
	for len(words) > 0 {
		k, v, ok := strings.Cut(words[0], "=")
		if !ok || !envKeyRE.MatchString(k) {
			break
		}
		if u.Env == nil {
			u.Env = map[string]string{}
		}
		u.Env[k] = v
		words = words[1:]
	}
	if len(words) == 0 {
		return Upstream{}, fmt.Errorf("upstream %q has no command", spec)
	}
	u.Command, u.Args = words[0], words[1:]
	if u.Name == "" {
		u.Name = DeriveName(u.Command, u.Args)
	}
	return u, nil
}

var envKeyRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// DeriveName makes an upstream name from a command line: the base name of
// the command (or, for launchers such as npx, node, uvx and python, of the
// first non-flag argument), without "mcp-server-", "server-" or "mcp-"
// prefixes and extensions, reduced to letters, digits, '-' and '_'.
// "mcp-server-memory" and "npx -y @modelcontextprotocol/server-memory" both
// give "memory".
func DeriveName(command string, args []string) string {
	base := filepath.Base(command)
	switch strings.TrimSuffix(base, ".exe") {
	case "npx", "node", "uvx", "uv", "python", "python3", "bunx", "deno", "pipx":
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && a != "run" {
				base = a
				break
			}
		}
	}
	base = filepath.Base(base)
	if at := strings.LastIndexByte(base, '@'); at > 0 { // pkg@version
		base = base[:at]
	}
	base = strings.TrimSuffix(base, filepath.Ext(base))
	for _, p := range []string{"mcp-server-", "server-", "mcp-"} {
		if strings.HasPrefix(base, p) && len(base) > len(p) {
			base = base[len(p):]
			break
		}
	}
	base = strings.TrimSuffix(base, "-mcp")
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "upstream"
	}
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// UpstreamFromURL builds an HTTP upstream; the name is "name=URL"'s name or
// derived from the host.
func UpstreamFromURL(spec string) (Upstream, error) {
	var u Upstream
	if i := strings.Index(spec, "="); i > 0 && !strings.Contains(spec[:i], ":") {
		u.Name, spec = spec[:i], spec[i+1:]
	}
	if !strings.HasPrefix(spec, "http://") && !strings.HasPrefix(spec, "https://") {
		return Upstream{}, fmt.Errorf("upstream url %q must start with http:// or https://", spec)
	}
	u.URL = spec
	if u.Name == "" {
		host := strings.TrimPrefix(strings.TrimPrefix(spec, "http://"), "https://")
		if i := strings.IndexAny(host, ":/"); i >= 0 {
			host = host[:i]
		}
		u.Name = DeriveName(strings.ReplaceAll(host, ".", "-"), nil)
	}
	return u, nil
}

// splitWords splits a command line the way a POSIX shell would for the
// simple cases: white space separates, quotes group, backslash escapes.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	esc := false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case r == '\\' && quote != '\'':
			esc, inWord = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if esc {
		return nil, fmt.Errorf("trailing backslash in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
