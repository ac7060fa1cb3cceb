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
	// A token that is too short is refused too.
	r = execCLI(t, map[string]string{envAuthToken: "short"}, "", "mcp", "--catalog", catalog, "--listen", "0.0.0.0:0")
	if r.code != exitUsage || !strings.Contains(r.stderr, "at least 16") {
		t.Fatalf("a short token: exit %d: %s", r.code, r.stderr)
	}
	// Both kinds of authentication at once are refused.
	tok := writeTemp(t, "token", strings.Repeat("t", 32)+"\n")
	r = execCLI(t, nil, "", "mcp", "--catalog", catalog, "--listen", "0.0.0.0:0", "--auth-token-file", tok,
		"--oauth-issuer", "https://issuer.test", "--oauth-resource", "https://me.test/mcp")
	if r.code != exitUsage || !strings.Contains(r.stderr, "exclusive") {
		t.Fatalf("token and OAuth: exit %d: %s", r.code, r.stderr)
	}
}
