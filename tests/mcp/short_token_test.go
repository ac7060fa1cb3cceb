package mcp_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// A short bearer token in TOOLSELECT_MCP_AUTH_TOKEN ("secret") is accepted:
// the proxy warns why on stderr and checks it like any other (401 with a
// Bearer challenge without it or with another, 200 with it).
func TestShortTokenIsAcceptedWithAWarning(t *testing.T) {
	catalog := filepath.Join("..", "..", "examples", "catalog.json")
	endpoint, stderr := startHTTPWith(t, []string{"TOOLSELECT_MCP_AUTH_TOKEN=secret"}, "mcp", "--catalog", catalog)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(bearer string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, bearer := range []string{"", "secrets"} {
		if resp := post(bearer); resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("token %q: %d, WWW-Authenticate %q", bearer, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if resp := post("secret"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the right token: %d", resp.StatusCode)
	}
	if !strings.Contains(stderr(), "the bearer token is 6 bytes") {
		t.Errorf("no warning about the short token on stderr:\n%s", stderr())
	}
}
