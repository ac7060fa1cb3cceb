package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Listening beyond loopback without authentication is refused before
// anything starts (exit 2, naming the flags), unless asked for.
func TestMCPRefusesUnauthenticatedNonLoopback(t *testing.T) {
	catalog := filepath.Join("..", "..", "examples", "catalog.json")
	r := execCLI(t, nil, "", "mcp", "--catalog", catalog, "--listen", "0.0.0.0:0")
	if r.code != exitUsage {
		t.Fatalf("exit %d, want %d: %s", r.code, exitUsage, r.stderr)
	}
	for _, want := range []string{"without authentication", "--auth-token-file", "--oauth-issuer", "--allow-unauthenticated", envAuthToken} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not name %q: %s", want, r.stderr)
		}
	}
	// An empty token file is an error (with --listen).
	empty := writeTemp(t, "empty-token", "\n")
	r = execCLI(t, nil, "", "mcp", "--catalog", catalog, "--listen", "0.0.0.0:0", "--auth-token-file", empty)
	if r.code != exitUsage || !strings.Contains(r.stderr, "is empty") {
		t.Fatalf("an empty token file: exit %d: %s", r.code, r.stderr)
	}
	// Both kinds of authentication at once are refused.
	tok := writeTemp(t, "token", strings.Repeat("t", 32)+"\n")
	r = execCLI(t, nil, "", "mcp", "--catalog", catalog, "--listen", "0.0.0.0:0", "--auth-token-file", tok,
		"--oauth-issuer", "https://issuer.test", "--oauth-resource", "https://me.test/mcp")
	if r.code != exitUsage || !strings.Contains(r.stderr, "exclusive") {
		t.Fatalf("token and OAuth: exit %d: %s", r.code, r.stderr)
	}
}

// The token settings only matter with --listen: over stdio a short token in
// the environment, or an empty token file, never fails the start.
func TestMCPStdioIgnoresTokenSettings(t *testing.T) {
	catalog := filepath.Join("..", "..", "examples", "catalog.json")
	r := execCLI(t, map[string]string{envAuthToken: "short"}, "", "mcp", "--catalog", catalog)
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("stdio with a short token in the environment: exit %d: %s", r.code, r.stderr)
	}
	empty := writeTemp(t, "empty-token", "")
	r = execCLI(t, nil, "", "mcp", "--catalog", catalog, "--auth-token-file", empty, "--oauth-issuer", "not a url")
	if r.code != exitOK || !strings.Contains(r.stderr, "--auth-token-file, --oauth-issuer only apply with --listen") {
		t.Fatalf("stdio with HTTP flags: exit %d: %s", r.code, r.stderr)
	}
}

// A token of white space only is a configuration error, not "no
// authentication": with --listen on loopback it would otherwise serve
// everyone without a word.
func TestMCPRefusesBlankToken(t *testing.T) {
	catalog := filepath.Join("..", "..", "examples", "catalog.json")
	for _, listen := range []string{"0.0.0.0:0", "127.0.0.1:0"} {
		r := execCLI(t, map[string]string{envAuthToken: " \t "}, "", "mcp", "--catalog", catalog, "--listen", listen)
		if r.code != exitUsage || !strings.Contains(r.stderr, envAuthToken) || !strings.Contains(r.stderr, "white space") {
			t.Fatalf("a blank $%s, --listen %s: exit %d: %s", envAuthToken, listen, r.code, r.stderr)
		}
	}
}
