package mcp_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A client that reaches the HTTP proxy by a name of the machine (not a
// loopback name) is served once that name is allowed with --allowed-host,
// and still refused (403, DNS rebinding protection) under any other name.
// The bearer token is checked either way.
func TestAllowedHostServesRemoteNames(t *testing.T) {
	token := strings.Repeat("k", 32)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Join("..", "..", "examples", "catalog.json")
	endpoint := startHTTP(t, "mcp", "--catalog", catalog, "--auth-token-file", tok, "--allowed-host", "tools.example")
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(host, bearer string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("tools.example:"+u.Port(), token); code != http.StatusOK {
		t.Fatalf("an allowed name: status %d: %s", code, body)
	}
	if code, body := post("other.example:"+u.Port(), token); code != http.StatusForbidden || !strings.Contains(body, "--allowed-host") {
		t.Fatalf("another name: status %d, want 403 naming --allowed-host: %s", code, body)
	}
	if code, _ := post("tools.example:"+u.Port(), ""); code != http.StatusUnauthorized {
		t.Fatalf("an allowed name without the token: status %d, want 401", code)
	}
}
