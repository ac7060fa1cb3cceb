package mcpproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailscale/hujson"

	"github.com/toolselect/toolselect/internal/strictjson"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
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
	// Env is the child process's environment beyond the default set a
	// stdio server gets (as MCP's reference clients start one: on POSIX
	// HOME, LOGNAME, PATH, SHELL, TERM and USER; on Windows APPDATA,
	// HOMEDRIVE, HOMEPATH, LOCALAPPDATA, PATH, PROCESSOR_ARCHITECTURE,
	// SYSTEMDRIVE, SYSTEMROOT, TEMP, USERNAME and USERPROFILE). A value
	// here replaces the proxy's. Nothing else of the proxy's environment is
	// passed unless PassEnv names it.
	Env map[string]string `json:"env,omitempty"`
	// PassEnv names more of the proxy's variables the child gets (an API
	// key the server needs, say). A TOOLSELECT_* name is refused: the
	// proxy's own variables, its bearer token among them, never reach an
	// upstream.
	PassEnv []string `json:"passEnv,omitempty"`
	// Dir is the child's working directory (default: the proxy's).
	Dir string `json:"dir,omitempty"`
	// URL is a streamable HTTP endpoint, or an SSE one with Transport
	// "sse" (exclusive with Command).
	URL string `json:"url,omitempty"`
	// Transport is how the proxy speaks to the upstream: "stdio" (a
	// Command), "http" (streamable HTTP, the default for a URL) or "sse"
	// (the older HTTP+SSE transport). Empty means the one Command or URL
	// implies.
	Transport string `json:"transport,omitempty"`
	// Headers are sent with every HTTP request to URL (an API key, a
	// bearer token). Their values, like Env's, are never printed.
	Headers map[string]string `json:"headers,omitempty"`
	// Secrets are strings of URL, Command or Args that are never printed:
	// a key carried in the URL's path ("/mcp/KEY/sse") or in an argument.
	// Errors, toolselect://stats, the log and import-config show "***" in
	// their place (a URL's user info and query string are cut without
	// being listed). import-config lists here the values it expanded from
	// placeholders (${env:NAME}) into the URL, command and arguments.
	Secrets []string `json:"secrets,omitempty"`
}

// Mask replaces u's secrets in s with "***" and cuts a URL's user info and
// query string (publicText): what a client, the model, the log or a person
// reading printed output may see of u's address and errors.
func (u *Upstream) Mask(s string) string {
	for _, sec := range u.Secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "***")
		}
	}
	return publicText(s)
}

// The transports of an upstream ([Upstream.Transport]).
const (
	transportStdio = "stdio"
	transportHTTP  = "http"
	transportSSE   = "sse"
)

// transport returns the upstream's transport, derived when not set.
func (u Upstream) transport() string {
	switch {
	case u.Transport != "":
		return u.Transport
	case u.URL != "":
		return transportHTTP
	}
	return transportStdio
}

// Exposure selects what tools/list shows.
type Exposure struct {
	// Mode is ExposeMeta (the default) or ExposeTop.
	Mode ExposeMode `json:"mode,omitempty"`
	// TopK is the number of tools served in "top" mode.
	TopK int `json:"topK,omitempty"`
	// Query is the fixed query or task ranked in "top" mode.
	Query string `json:"query,omitempty"`
}

// ExposeMode is what tools/list shows.
type ExposeMode string

// The exposure modes.
const (
	// ExposeMeta (also the zero value): find_tool, call_tool and the keep-list.
	ExposeMeta ExposeMode = "meta"
	// ExposeTop: no meta-tools; the TopK tools ranked for Query, plus the keep-list.
	ExposeTop ExposeMode = "top"
)

// duration is a time.Duration as the JSON configuration spells it: a Go
// duration string ("30s") or a number of seconds.
type duration time.Duration

// UnmarshalJSON accepts "1m30s" or 90.
func (d *duration) UnmarshalJSON(b []byte) error {
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
		*d = duration(v)
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("timeout must be a duration string or a number of seconds, got %s", b)
	}
	*d = duration(f * float64(time.Second))
	return nil
}

// UnmarshalJSON reads the JSON configuration (LoadConfig): "timeout" is a Go
// duration string ("1m30s") or a number of seconds, and an unknown key is an
// error.
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	aux := struct {
		*plain
		Timeout *duration `json:"timeout,omitempty"`
	}{plain: (*plain)(c)}
	if err := strictjson.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.Timeout != nil {
		c.Timeout = time.Duration(*aux.Timeout)
	}
	return nil
}

// MarshalJSON writes the JSON configuration, "timeout" as a Go duration
// string.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	aux := struct {
		plain
		Timeout string `json:"timeout,omitempty"`
	}{plain: plain(c)}
	if c.Timeout != 0 {
		aux.Timeout = c.Timeout.String()
	}
	return json.Marshal(aux)
}

// Config configures a Proxy. The zero value is valid (no upstreams, defaults
// everywhere); a nil *Config passed to New means the same.
type Config struct {
	// Upstreams are the MCP servers whose tools are imported.
	Upstreams []Upstream `json:"upstreams"`
	// Separator joins an upstream's name and a tool's name (default "__"):
	// one or more letters, digits, '_', '.' or '-'.
	Separator string `json:"separator,omitempty"`
	// Keep lists namespaced tool names always shown in full in tools/list.
	Keep []string `json:"keep,omitempty"`
	// AllowDestructive makes tools with destructiveHint findable and
	// callable: the older spelling of Destructive "allow".
	AllowDestructive bool `json:"allowDestructive,omitempty"`
	// Destructive says what becomes of a destructive tool (one MCP's
	// annotations do not declare read-only or non-destructive): "deny" (the
	// default, also ""): neither findable nor callable; "ask": findable,
	// and each call runs only after the client's user accepts an MCP
	// elicitation request; "allow": findable and callable.
	Destructive string `json:"destructive,omitempty"`
	// Permissions are per-tool rules, as Claude Code's: "allow", "ask" and
	// "deny" list served tool names (UPSTREAM + separator + TOOL) or
	// path.Match patterns of them ("fs__write_*"). They take precedence
	// over Destructive: deny rules are read first, then ask, then allow,
	// and the first list with a match decides, however specific another
	// list's pattern is. A denied tool is neither findable nor callable,
	// even a read-only one; an asked one is findable and each call asks
	// the client's user (elicitation), even of a read-only tool; an allowed
	// one runs unasked, even a destructive one. A tool no rule names
	// follows Destructive. A pattern path.Match cannot read is a
	// configuration error; one that matches no tool is warned about at
	// start. Rules never serve a held tool (Pins).
	Permissions registry.ToolRules `json:"permissions,omitzero"`
	// Timeout bounds every upstream tools/call (default 30s). Starting and
	// listing an upstream get at least 30s. In JSON, "timeout": a Go duration
	// string ("1m30s") or a number of seconds.
	Timeout time.Duration `json:"-"`
	// Listen is the streamable HTTP address (host:port); empty means stdio.
	// Read by the command line, not by the Proxy.
	Listen string `json:"listen,omitempty"`
	// Expose selects the exposure mode.
	Expose Exposure `json:"expose,omitzero"`
	// Catalogs are catalog files (any format registry.ParseCatalog reads)
	// imported without an upstream: findable and counted, not callable.
	Catalogs []string `json:"catalogs,omitempty"`
	// Pins is a pin file (registry.Pins): each upstream or catalog tool's
	// definition is pinned on first sight, and a tool whose definition later
	// differs is held (not listed, not findable, a call is a tool error)
	// until approved. Empty means no pinning.
	Pins string `json:"pins,omitempty"`
	// State is a Redis store the proxy's replicas share
	// (redis://[user:password@]HOST:PORT/DB, rediss:// for TLS): with it,
	// pinning is on and the pins (held and pending definitions,
	// approvals) live there, under the key prefix "toolselect:", so a
	// change seen by one replica holds the tool on all and an approval
	// through one releases it on all within a second. Not with Pins (the
	// form for one process).
	State string `json:"state,omitempty"`
	// StatePasswordFile holds the State store's password (its first
	// line), kept out of the URL and never printed.
	StatePasswordFile string `json:"statePasswordFile,omitempty"`
	// Feedback is where find_tool learns from what sessions select (a
	// find_tool followed by a successful call of a tool it returned):
	// "off", a JSON Lines file (created 0600; refused when its group or
	// everyone may write it) or a redis:// URL, the log of `toolselect select
	// --feedback`. Empty means the State store's "toolselect:feedback"
	// list with State (every replica learns from every other's
	// selections) and off without. The log holds the users' find_tool
	// queries.
	Feedback string `json:"feedback,omitempty"`
	// StrictDescriptions holds, too, tools whose description (or title, or
	// any schema string) carries invisible or bidirectional control
	// characters or an HTML comment (flagged in stats and the pin file
	// either way), until approved. Needs Pins.
	StrictDescriptions bool `json:"strictDescriptions,omitempty"`
	// PinsNew says what becomes of a tool, prompt or resource first seen
	// after the first pinning: "pin" (the default, also "") pins it and
	// serves it; "review" holds it, as a changed tool is held, until
	// approved. The first pinning is the proxy's start with a pin file that
	// holds nothing yet; with one that holds pins, everything new is held.
	// Names with confusable or mixed-script characters are flagged either
	// way. Needs Pins.
	PinsNew string `json:"pinsNew,omitempty"`
	// Ignored names what LoadConfig left out of an MCP client's file (its
	// own settings, fields of a server the proxy has no use for, servers
	// marked disabled), as JSON paths; a caller may warn with them. Never
	// set for the proxy's own format, where an unknown field is an error.
	Ignored []string `json:"-"`
	// Inputs are the VS Code inputs the servers of a file read by
	// [ImportClientConfig] use: the variable of the proxy's environment
	// each is now read from (${env:VSCODE_INPUT_ID}) -> the input's
	// declaration in the file's "inputs" (one asking for a password when
	// the file declared none). The client's entry for toolselect sets the
	// variable to ${input:ID}, so VS Code still asks.
	Inputs map[string]json.RawMessage `json:"-"`
	// Unset names the variables the references of a file read by
	// [ImportClientConfig] need (having no default) that this process's
	// environment lacks: the proxy does not start until they are set.
	Unset []string `json:"-"`
	// Client is the key that held the servers of an MCP client's file
	// LoadConfig read: "mcpServers" (Claude Desktop, Claude Code, Cursor)
	// or "servers" (VS Code); empty for the proxy's own format.
	Client string `json:"-"`
}

// The [Config.PinsNew] modes.
const (
	pinsNewPin    = "pin"
	pinsNewReview = "review"
)

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
	return c.Timeout
}

// separatorRE is what a separator may hold: the characters of an MCP tool
// name (SEP-986: letters, digits, '_', '.', '-'), all of them unreserved in
// URIs, so that UPSTREAM+separator+TOOL is a valid tool name and a
// namespaced resource URI (scheme://UPSTREAM+separator+rest) still parses.
// ':' would read as a port and '/' would split the authority.
var separatorRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

var upstreamNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// HasValidName reports whether u.Name is a name [Config.Validate] accepts: a
// letter or digit, then up to 63 letters, digits, '_', '.' or '-'.
func (u Upstream) HasValidName() bool { return upstreamNameRE.MatchString(u.Name) }

// Validate reports the first problem in the configuration, naming the field.
func (c *Config) Validate() error {
	sep := c.separator()
	if !separatorRE.MatchString(sep) {
		return fmt.Errorf("separator %q: use only letters, digits, '_', '.' and '-' (it goes into MCP tool and prompt names, which allow no other characters, and into resource URIs)", sep)
	}
	seen := map[string]bool{}
	for i, u := range c.Upstreams {
		where := fmt.Sprintf("upstreams[%d]", i)
		if u.Name == "" {
			return fmt.Errorf("%s: name is required", where)
		}
		where = fmt.Sprintf("upstreams[%d] (%q)", i, u.Name)
		if !u.HasValidName() {
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
		switch t := u.transport(); {
		case t != transportStdio && t != transportHTTP && t != transportSSE:
			return fmt.Errorf("%s: transport %q is not \"stdio\", \"http\" or \"sse\"", where, t)
		case (t == transportStdio) != (u.Command != ""):
			return fmt.Errorf("%s: transport %q needs %s", where, t, map[bool]string{true: "command", false: "url"}[t == transportStdio])
		case len(u.Headers) > 0 && u.URL == "":
			return fmt.Errorf("%s: headers need url (a stdio upstream takes env)", where)
		case len(u.PassEnv) > 0 && u.URL != "":
			return fmt.Errorf("%s: passEnv needs command (an HTTP upstream is not started by the proxy)", where)
		}
		if err := checkPassEnv(u.PassEnv); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if slices.Contains(u.Secrets, "") {
			return fmt.Errorf("%s: secrets must not be empty strings", where)
		}
	}
	if err := checkPrefixes(c.Upstreams, sep); err != nil {
		return err
	}
	if c.Timeout < 0 {
		return errors.New("timeout must not be negative")
	}
	switch c.Destructive {
	case "", destructiveDeny, destructiveAsk, destructiveAllow:
	default:
		return fmt.Errorf("destructive %q is not %q, %q or %q", c.Destructive, destructiveDeny, destructiveAsk, destructiveAllow)
	}
	if err := c.Permissions.Validate(); err != nil {
		return fmt.Errorf("permissions.%w", err)
	}
	if c.Permissions.Unsafe != "" {
		return errors.New("permissions: the mode for destructive tools no rule names is destructive, not a field of permissions")
	}
	if c.AllowDestructive && c.Destructive != "" && c.Destructive != destructiveAllow {
		return fmt.Errorf("allowDestructive (destructive %q) and destructive %q disagree: keep one", destructiveAllow, c.Destructive)
	}
	if c.Pins != "" && c.State != "" {
		return errors.New("pins and state: give one (state keeps the pins the replicas share; pins is a file for one process)")
	}
	if c.StatePasswordFile != "" && c.State == "" {
		return errors.New("statePasswordFile needs state")
	}
	if err := c.checkFeedback(); err != nil {
		return err
	}
	switch c.PinsNew {
	case "", pinsNewPin:
	case pinsNewReview:
		if c.Pins == "" && c.State == "" {
			return errors.New("pinsNew \"review\" needs a pin file (pins) or a shared store (state)")
		}
	default:
		return fmt.Errorf("pinsNew %q is not %q or %q", c.PinsNew, pinsNewPin, pinsNewReview)
	}
	switch c.Expose.Mode {
	case "", ExposeMeta:
	case ExposeTop:
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

// LoadConfig reads a JSON configuration file: one JSON object, nothing but
// white space after it; comments and trailing commas (JSONC, as VS Code
// writes its files) are read as white space. The file is either the
// proxy's own format, where an unknown field is an error so that a misspelt
// option is not silently ignored, or an MCP client's, told apart by its
// shape (see clientconfig.go): "mcpServers" as Claude Desktop, Claude Code
// and Cursor write it, or VS Code's "servers". A client's file holds fields
// the proxy has no use for; they are listed in [Config.Ignored].
//
// Placeholders in an upstream's strings are expanded from the proxy's
// environment: ${env:NAME}, ${env:NAME:-default} and ${userHome} in either
// format, and a client's own spellings in its file (${NAME}); one the proxy
// cannot expand (a VS Code input, an editor variable, an unset variable, a
// TOOLSELECT_* one) is an error, all of them named in one report.
func LoadConfig(path string) (*Config, error) {
	return loadConfig(path, newPlaceholderPass(false))
}

// ImportClientConfig reads an MCP client's file as LoadConfig does, but
// keeps its placeholders as references in the proxy's spelling (${NAME}
// becomes ${env:NAME}) instead of expanding them, so that the
// configuration written from it holds no secret a placeholder stood for: the
// proxy expands them when it starts. A VS Code input (${input:ID}) becomes
// ${env:VSCODE_INPUT_ID}, a variable the client's entry for toolselect is
// to pass ([Config.Inputs]); the variables read that this process lacks
// are in [Config.Unset].
func ImportClientConfig(path string) (*Config, error) {
	pp := newPlaceholderPass(true)
	c, err := loadConfig(path, pp)
	if err != nil {
		return nil, err
	}
	c.Unset = pp.unsetNames()
	for id, v := range pp.inputs {
		if c.Inputs == nil {
			c.Inputs = map[string]json.RawMessage{}
		}
		d := pp.declared[id]
		if d == nil {
			// VS Code prompts only for a declared input: one the file
			// used without declaring gets a password prompt.
			d, _ = json.Marshal(map[string]any{"id": id, "type": "promptString", "description": id, "password": true})
		}
		c.Inputs[v] = d
	}
	return c, nil
}

// loadConfig reads, parses and validates the file at path, its
// placeholders handled by pp.
func loadConfig(path string, pp *placeholderPass) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := parseConfig(data, pp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// parseConfig reads either format from data: JSONC (comments, trailing
// commas) read as JSON, one JSON object, no name given twice at any depth,
// keys matched exactly (strictjson), so that what the proxy runs is what a
// person reading the file sees; placeholders handled by pp.
func parseConfig(data []byte, pp *placeholderPass) (*Config, error) {
	if std, err := hujson.Standardize(bytes.Clone(data)); err == nil {
		// Comments and trailing commas become spaces: byte offsets in
		// errors still point into the file as written.
		data = std
	}
	if err := strictjson.Check(data, nil); err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) == nil {
		if _, own := top["upstreams"]; !own {
			for _, key := range []string{clientServersKey, vscodeServersKey} {
				if _, ok := top[key]; ok {
					pp.client, pp.vscode = true, key == vscodeServersKey
					return parseClientConfig(data, key, pp)
				}
			}
		}
	}
	var c Config
	if err := strictjson.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	for i := range c.Upstreams {
		pp.upstream(fmt.Sprintf("upstreams[%d]", i), &c.Upstreams[i])
	}
	return &c, pp.err()
}
