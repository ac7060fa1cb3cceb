package main

// The command line's forms of an upstream (--upstream, --upstream-url) and
// of a listen address.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/toolselect/toolselect/mcpproxy"
)

// parseUpstream reads the command-line form of an upstream:
// "[name=]COMMAND ARGS..." where the command may be preceded by environment
// assignments as in a shell ("memory=MEMORY_FILE_PATH=/tmp/m.jsonl
// mcp-server-memory"). Words are split on white space; single and double
// quotes group, and a backslash escapes the next character. A leading
// "KEY=" whose KEY is all upper case is an environment assignment, any
// other valid name is the upstream's name. Without a name, one is derived
// from the command (see deriveName).
func parseUpstream(spec string) (mcpproxy.Upstream, error) {
	var u mcpproxy.Upstream
	words, err := splitWords(spec)
	if err != nil {
		return mcpproxy.Upstream{}, err
	}
	if len(words) > 0 {
		if k, v, ok := strings.Cut(words[0], "="); ok && (mcpproxy.Upstream{Name: k}).HasValidName() && !envKeyRE.MatchString(k) {
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
		return mcpproxy.Upstream{}, fmt.Errorf("upstream %q has no command", spec)
	}
	u.Command, u.Args = words[0], words[1:]
	if u.Name == "" {
		u.Name = deriveName(u.Command, u.Args)
	}
	return u, nil
}

var envKeyRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// deriveName makes an upstream name from a command line: the base name of
// the command (or, for launchers such as npx, node, uvx and python, of the
// first non-flag argument), without "mcp-server-", "server-" or "mcp-"
// prefixes and extensions, reduced to letters, digits, '-' and '_'.
// "mcp-server-memory" and "npx -y @modelcontextprotocol/server-memory" both
// give "memory". A script with a generic name ("node .../dist/index.js")
// takes the name of the package it belongs to (the "name" of the nearest
// package.json above it), else of the nearest directory above it that is
// not a build directory (dist, build, lib, src, ...).
func deriveName(command string, args []string) string {
	base := filepath.Base(command)
	script := ""
	switch strings.TrimSuffix(base, ".exe") {
	case "npx", "node", "uvx", "uv", "python", "python3", "bunx", "bun", "deno", "pipx", "tsx", "ts-node":
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && a != "run" {
				base, script = a, a
				break
			}
		}
	default:
		script = command
	}
	if name := scriptPackage(script); name != "" {
		base = name
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

// genericScripts are script names that say nothing of the server.
var genericScripts = map[string]bool{"index": true, "main": true, "server": true, "cli": true, "app": true, "start": true,
	"run": true, "__main__": true, "bin": true, "stdio": true, "mcp": true}

// buildDirs are directories that hold a package's output, not its name.
var buildDirs = map[string]bool{"dist": true, "build": true, "lib": true, "src": true, "bin": true, "out": true,
	"esm": true, "cjs": true, "target": true, "release": true, "debug": true}

// scriptPackage names the package a script with a generic name belongs to
// ("" when path is not such a script): the "name" of the nearest
// package.json in its directory or above (an npm scope dropped), else the
// nearest directory above it that is not a build directory.
func scriptPackage(path string) string {
	if path == "" || !strings.ContainsAny(path, `/\`) {
		return ""
	}
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if !genericScripts[stem] {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
			var pkg struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(b, &pkg) == nil && pkg.Name != "" {
				return pkg.Name[strings.LastIndexByte(pkg.Name, '/')+1:]
			}
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	for dir := filepath.Dir(abs); filepath.Dir(dir) != dir; dir = filepath.Dir(dir) {
		if b := filepath.Base(dir); !buildDirs[strings.ToLower(b)] && !genericScripts[b] {
			return b
		}
	}
	return ""
}

// upstreamFromURL builds an HTTP upstream; the name is "name=URL"'s name or
// derived from the host.
func upstreamFromURL(spec string) (mcpproxy.Upstream, error) {
	var u mcpproxy.Upstream
	if i := strings.Index(spec, "="); i > 0 && !strings.Contains(spec[:i], ":") {
		u.Name, spec = spec[:i], spec[i+1:]
	}
	if !strings.HasPrefix(spec, "http://") && !strings.HasPrefix(spec, "https://") {
		return mcpproxy.Upstream{}, fmt.Errorf("upstream url %q must start with http:// or https://", spec)
	}
	u.URL = spec
	if u.Name == "" {
		host := strings.TrimPrefix(strings.TrimPrefix(spec, "http://"), "https://")
		if i := strings.IndexAny(host, ":/"); i >= 0 {
			host = host[:i]
		}
		u.Name = deriveName(strings.ReplaceAll(host, ".", "-"), nil)
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
