package main

// "toolselect mcp import-config": from an MCP client's file to the proxy's
// configuration, and the client snippet that puts the proxy in place of the
// servers it fronts.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/toolselect/toolselect/internal/fileperm"
	"github.com/toolselect/toolselect/mcpproxy"
)

// mcpClient is an MCP client whose configuration file the proxy reads and
// into which import-config puts it.
type mcpClient struct {
	name, title string
	// key holds the servers in the client's file; typed adds "type":
	// "stdio" to the proxy's entry, as the client's documentation writes it.
	key   string
	typed bool
	// where the user keeps the file.
	file string
}

// mcpClients are the clients import-config writes a snippet for.
var mcpClients = []mcpClient{
	{name: "claude-desktop", title: "Claude Desktop", key: "mcpServers", file: "claude_desktop_config.json (Settings > Developer > Edit Config)"},
	{name: "claude-code", title: "Claude Code", key: "mcpServers", typed: true, file: ".mcp.json at the project root"},
	{name: "cursor", title: "Cursor", key: "mcpServers", file: "~/.cursor/mcp.json, or .cursor/mcp.json in the project"},
	{name: "vscode", title: "VS Code", key: "servers", typed: true, file: ".vscode/mcp.json in the workspace"},
}

// clientFor is the client named, or the one whose file path looks like, or
// whose shape the file has.
func clientFor(name, path, key string) (mcpClient, error) {
	var names []string
	for _, c := range mcpClients {
		if c.name == name {
			return c, nil
		}
		names = append(names, c.name)
	}
	if name != "" {
		return mcpClient{}, fmt.Errorf("--client %q: use one of %s", name, strings.Join(names, ", "))
	}
	by := func(n string) mcpClient {
		for _, c := range mcpClients {
			if c.name == n {
				return c
			}
		}
		panic("no client " + n)
	}
	slash := filepath.ToSlash(path)
	switch {
	case key == "servers" || strings.Contains(slash, ".vscode/"):
		return by("vscode"), nil
	case strings.Contains(slash, ".cursor/"):
		return by("cursor"), nil
	case filepath.Base(path) == ".mcp.json":
		return by("claude-code"), nil
	}
	return by("claude-desktop"), nil
}

// snippet is the client's entry that starts the proxy (the binary at
// command) on configFile, passing the VS Code inputs the servers used.
// Both paths are absolute: a client such as Claude Desktop starts servers
// without the shell's PATH and from "/".
func (c mcpClient) snippet(command, configFile string, inputs map[string]json.RawMessage) ([]byte, error) {
	entry := struct {
		Type    string            `json:"type,omitempty"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
	}{Command: command, Args: []string{"mcp", "--config", configFile}}
	if c.typed {
		entry.Type = "stdio"
	}
	top := map[string]any{}
	var decls []json.RawMessage
	for _, v := range slices.Sorted(maps.Keys(inputs)) {
		if entry.Env == nil {
			entry.Env = map[string]string{}
		}
		entry.Env[v] = "${input:" + inputID(inputs[v]) + "}"
		decls = append(decls, inputs[v])
	}
	top[c.key] = map[string]any{"toolselect": entry}
	if len(decls) > 0 {
		top["inputs"] = decls
	}
	return json.MarshalIndent(top, "", "  ")
}

// maskSecrets returns a copy of cfg whose env and header values read "***",
// except a value that is a reference and nothing else (${env:NAME}): it
// holds no secret, and says where the value comes from.
func maskSecrets(cfg mcpproxy.Config) mcpproxy.Config {
	ups := make([]mcpproxy.Upstream, len(cfg.Upstreams))
	for i, u := range cfg.Upstreams {
		for _, m := range []*map[string]string{&u.Env, &u.Headers} {
			if len(*m) == 0 {
				continue
			}
			masked := make(map[string]string, len(*m))
			for k, v := range *m {
				masked[k] = "***"
				if onlyReferenceRE.MatchString(v) {
					masked[k] = v
				}
			}
			*m = masked
		}
		// A URL's user info and query, and what Secrets lists (a key in the
		// URL's path, a token expanded into an argument), are printed as ***.
		u.URL = u.Mask(u.URL)
		u.Command = u.Mask(u.Command)
		u.Args = append([]string(nil), u.Args...)
		for j := range u.Args {
			u.Args[j] = u.Mask(u.Args[j])
		}
		if len(u.Secrets) > 0 {
			u.Secrets = slices.Repeat([]string{"***"}, len(u.Secrets))
		}
		ups[i] = u
	}
	cfg.Upstreams = ups
	return cfg
}

// onlyReferenceRE is a value that is one environment reference, nothing
// more.
var onlyReferenceRE = regexp.MustCompile(`^\$\{env:[A-Za-z_][A-Za-z0-9_]*\}$`)

// runMCPImport is "toolselect mcp import-config FILE [--client NAME] [--out FILE]".
func runMCPImport(env *cmdEnv, args []string) int {
	const name = "mcp import-config"
	fs := newFlags(env, name, `FILE [--client claude-desktop|claude-code|cursor|vscode] [--out CONFIG]

Reads an MCP client's configuration FILE ("mcpServers" of Claude Desktop, Claude Code and Cursor,
"servers" of VS Code; comments and trailing commas allowed) and prints the toolselect
configuration it corresponds to, then the entry that replaces the client's servers with
"toolselect mcp --config CONFIG" (both paths absolute). Placeholders stay references
(${NAME} becomes ${env:NAME}, expanded by the proxy when it starts; a VS Code input is passed by
the entry). Values written out in env and headers are printed as "***", and so are a URL's user
info and query string; --out writes the configuration with them, mode 0600 whatever the file had.`)
	client := fs.String("client", "", "the `CLIENT` to write the entry for: claude-desktop, claude-code, cursor or vscode (default: from FILE's name and shape)")
	out := fs.String("out", "", "write the toolselect configuration to `CONFIG` (always mode 0600: a new file renamed over the old; values written out in env and headers included); the entry names it")
	files, code, ok := parseInterleaved(env, fs, args)
	if !ok {
		return code
	}
	if len(files) != 1 {
		return fail(env, name, exitUsage, "give one client configuration FILE (run \"toolselect mcp import-config --help\")")
	}
	cfg, err := mcpproxy.ImportClientConfig(files[0])
	if err != nil {
		return fail(env, name, exitUsage, "%v", err)
	}
	if cfg.Client == "" {
		return fail(env, name, exitUsage, "%s is already toolselect's own configuration: run toolselect mcp --config %s", files[0], files[0])
	}
	c, err := clientFor(*client, files[0], cfg.Client)
	if err != nil {
		return fail(env, name, exitUsage, "%v", err)
	}
	if len(cfg.Inputs) > 0 && c.key != "servers" {
		return fail(env, name, exitUsage, "%s uses VS Code inputs (%s), which only VS Code can pass: use --client vscode", files[0], inputIDs(cfg.Inputs))
	}
	warnIgnored(env, name, files[0], cfg)
	if len(cfg.Unset) > 0 {
		fmt.Fprintf(env.stderr, "toolselect %s: warning: the configuration reads %s from the environment, not set here: the proxy will not start until the client's environment sets them\n", name, strings.Join(cfg.Unset, ", "))
	}
	target := "toolselect-mcp.json"
	if *out != "" {
		target = *out
	}
	if target, err = filepath.Abs(target); err != nil {
		return fail(env, name, exitFailed, "%v", err)
	}
	if *out != "" {
		full, err := json.MarshalIndent(cfg, "", "  ")
		if err != nil {
			return fail(env, name, exitFailed, "%v", err)
		}
		if err := fileperm.WritePrivate(*out, append(full, '\n')); err != nil {
			return fail(env, name, exitFailed, "%v", err)
		}
	}
	shown, err := json.MarshalIndent(maskSecrets(*cfg), "", "  ")
	if err != nil {
		return fail(env, name, exitFailed, "%v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fail(env, name, exitFailed, "the path of this toolselect binary, which the entry names: %v", err)
	}
	snippet, err := c.snippet(self, target, cfg.Inputs)
	if err != nil {
		return fail(env, name, exitFailed, "%v", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# toolselect configuration for %s", target)
	if *out != "" {
		fmt.Fprintf(&b, " (written; env and header values written out shown as ***)\n")
	} else {
		fmt.Fprintf(&b, " (env and header values written out shown as ***: --out %s writes them)\n", target)
	}
	fmt.Fprintf(&b, "%s\n\n", shown)
	fmt.Fprintf(&b, "# %s: in %s, replace the servers toolselect now fronts (%s) with\n", c.title, c.file, upstreamNames(cfg))
	fmt.Fprintf(&b, "%s\n", snippet)
	env.stdout.Write(b.Bytes())
	return exitOK
}

// inputID is the id of a VS Code input's declaration.
func inputID(decl json.RawMessage) string {
	var in struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(decl, &in) // ImportClientConfig read it so
	return in.ID
}

// inputIDs lists the inputs' IDs, sorted.
func inputIDs(inputs map[string]json.RawMessage) string {
	var ids []string
	for _, d := range inputs {
		ids = append(ids, inputID(d))
	}
	sort.Strings(ids)
	return strings.Join(ids, ", ")
}

// upstreamNames lists the upstreams' names, sorted.
func upstreamNames(cfg *mcpproxy.Config) string {
	names := make([]string, len(cfg.Upstreams))
	for i, u := range cfg.Upstreams {
		names[i] = u.Name
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// warnIgnored names, in one warning line, what the proxy left out of an MCP
// client's file (its paths, never a value: env and headers hold secrets).
func warnIgnored(env *cmdEnv, name, file string, cfg *mcpproxy.Config) {
	if len(cfg.Ignored) > 0 {
		fmt.Fprintf(env.stderr, "toolselect %s: warning: %s: ignored, of no use to the proxy: %s\n", name, file, strings.Join(cfg.Ignored, ", "))
	}
}
