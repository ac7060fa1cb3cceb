package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveHTTP starts ListenAndServe with opts on a free loopback port.
func serveHTTP(t *testing.T, p *Proxy, opts *HTTPOptions) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- p.ListenAndServe(ctx, "127.0.0.1:0", opts, func(a net.Addr) { addr <- a }) }()
	select {
	case a := <-addr:
		return "http://" + a.String()
	case err := <-errc:
		t.Fatalf("ListenAndServe: %v", err)
	}
	return ""
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP connects an SDK client with token ("" for none), over a
// session-based protocol version.
func connectHTTP(ctx context.Context, url, token string) (*mcp.ClientSession, error) {
	tr := &mcp.StreamableClientTransport{Endpoint: url}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearer{token}}
	}
	return mcp.NewClient(&mcp.Implementation{Name: "auth-test", Version: "1"}, nil).Connect(ctx, tr,
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

func post(t *testing.T, url, token, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

func TestBearerToken(t *testing.T) {
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}, Keep: []string{"t__count"}})
	const token = "s3cret-token-0123456789abcdef"
	base := serveHTTP(t, p, &HTTPOptions{Token: token})
	for _, c := range []struct{ name, token string }{{"no token", ""}, {"wrong token", "s3cret-token-0123456789abcdeX"}} {
		for _, path := range []string{"/mcp", "/metrics"} {
			var resp *http.Response
			if path == "/metrics" {
				req, _ := http.NewRequest(http.MethodGet, base+path, nil)
				if c.token != "" {
					req.Header.Set("Authorization", "Bearer "+c.token)
				}
				var err error
				if resp, err = http.DefaultClient.Do(req); err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			} else {
				resp = post(t, base+path, c.token, initBody)
			}
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s: %s, WWW-Authenticate %q; want 401 with a Bearer challenge", c.name, path, resp.Status, resp.Header.Get("WWW-Authenticate"))
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := connectHTTP(ctx, base+"/mcp", ""); err == nil {
		t.Fatal("an MCP client without the token connected")
	}
	cs, err := connectHTTP(ctx, base+"/mcp", token)
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	defer cs.Close()
	if got := listNames(t, cs); !slices.Contains(got, "t__count") {
		t.Fatalf("tools/list with the token: %v", got)
	}
}

func TestHTTPLimits(t *testing.T) {
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	base := serveHTTP(t, p, &HTTPOptions{MaxBodyBytes: 1024, ReadHeaderTimeout: 300 * time.Millisecond, MaxSessions: 1})

	// An oversized body gets 413, declared or not.
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 4096) + `"}}`
	if resp := post(t, base+"/mcp", "", big); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %s, want 413", resp.Status)
	}

	// A client that never finishes its headers is cut off.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	b, err := io.ReadAll(conn)
	if time.Since(start) > 4*time.Second {
		t.Errorf("a slow-header client was not cut off (read %q, %v)", b, err)
	}

	// The session cap: one session open, the next initialize gets 503.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := connectHTTP(ctx, base+"/mcp", "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if resp := post(t, base+"/mcp", "", initBody); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("initialize past the session cap: %s, want 503", resp.Status)
	}
}

// The OAuth resource-server mode against a local issuer the test starts:
// metadata (RFC 8414), token introspection (RFC 7662), audience (RFC 8707),
// the proxy's Protected Resource Metadata (RFC 9728).
func TestOAuthResourceServer(t *testing.T) {
	var issuer *httptest.Server
	const resource = "https://tools.example.test/mcp"
	issuer = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]any{"issuer": issuer.URL, "authorization_endpoint": issuer.URL + "/authorize",
				"token_endpoint": issuer.URL + "/token", "introspection_endpoint": issuer.URL + "/introspect",
				"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}})
		case "/introspect":
			if id, secret, ok := r.BasicAuth(); !ok || id != "proxy" || secret != "proxy-secret" {
				http.Error(w, "client authentication failed", http.StatusUnauthorized)
				return
			}
			_ = r.ParseForm()
			exp := time.Now().Add(time.Hour).Unix()
			switch r.Form.Get("token") {
			case "good":
				json.NewEncoder(w).Encode(map[string]any{"active": true, "iss": issuer.URL, "aud": resource, "exp": exp, "scope": "mcp:tools", "sub": "alice"})
			case "other-audience":
				json.NewEncoder(w).Encode(map[string]any{"active": true, "iss": issuer.URL, "aud": "https://elsewhere.test/mcp", "exp": exp, "scope": "mcp:tools"})
			case "no-scope":
				json.NewEncoder(w).Encode(map[string]any{"active": true, "iss": issuer.URL, "aud": []string{resource}, "exp": exp, "scope": "other"})
			default:
				json.NewEncoder(w).Encode(map[string]any{"active": false})
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer issuer.Close()
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}, Keep: []string{"t__count"}})
	base := serveHTTP(t, p, &HTTPOptions{OAuth: &OAuth{Issuer: issuer.URL, Resource: resource,
		Scopes: []string{"mcp:tools"}, ClientID: "proxy", ClientSecret: "proxy-secret"}})

	resp := post(t, base+"/mcp", "", initBody)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("no token: %s %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	mr, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var prm map[string]any
	json.NewDecoder(mr.Body).Decode(&prm)
	mr.Body.Close()
	if prm["resource"] != resource || fmt.Sprint(prm["authorization_servers"]) != "["+issuer.URL+"]" {
		t.Fatalf("protected resource metadata: %v", prm)
	}
	for token, want := range map[string]int{"unknown": 401, "other-audience": 401, "no-scope": 403} {
		if resp := post(t, base+"/mcp", token, initBody); resp.StatusCode != want {
			t.Errorf("token %q: %s, want %d", token, resp.Status, want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := connectHTTP(ctx, base+"/mcp", "good")
	if err != nil {
		t.Fatalf("a token for this resource: %v", err)
	}
	defer cs.Close()
	if got := listNames(t, cs); !slices.Contains(got, "t__count") {
		t.Fatalf("tools/list: %v", got)
	}
}

func TestAuthValidate(t *testing.T) {
	for _, o := range []*HTTPOptions{{Token: strings.Repeat("x", 20), OAuth: &OAuth{}},
		{OAuth: &OAuth{Issuer: "not a url", Resource: "https://x/mcp"}}} {
		if err := o.Validate(); !errors.Is(err, ErrAuthConfig) {
			t.Errorf("%+v: %v, want an ErrAuthConfig", o, err)
		}
	}
	// Any non-empty token is accepted: its strength is the operator's to choose.
	for _, o := range []*HTTPOptions{nil, {}, {Token: strings.Repeat("x", 20)}, {Token: "secret"}, {Token: "k"},
		{OAuth: &OAuth{Issuer: "https://issuer.example", Resource: "https://x/mcp"}}} {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// The Go front door applies the same rule as the command line: serving a
// non-loopback address needs a token, OAuth or AllowUnauthenticated, and
// ListenAndServe refuses before it listens.
func TestListenRefusesUnauthenticatedNonLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "[::1]:0": true, "localhost:9": true,
		"0.0.0.0:8080": false, ":8080": false, "10.1.2.3:80": false} {
		if isLoopback(addr) != want {
			t.Errorf("isLoopback(%q) = %v", addr, !want)
		}
	}
	var nilOpts *HTTPOptions
	if err := nilOpts.CheckListen("0.0.0.0:0"); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("nil options on 0.0.0.0: %v", err)
	}
	for _, o := range []*HTTPOptions{nil, {}} {
		if err := o.CheckListen("127.0.0.1:0"); err != nil {
			t.Errorf("loopback without auth: %v", err)
		}
	}
	for _, o := range []*HTTPOptions{{Token: strings.Repeat("k", 32)}, {AllowUnauthenticated: true}} {
		if err := o.CheckListen("0.0.0.0:0"); err != nil {
			t.Errorf("%+v on 0.0.0.0: %v", o, err)
		}
	}
	p := startProxy(t, &Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	listened := false
	err := p.ListenAndServe(ctx, "0.0.0.0:0", &HTTPOptions{}, func(net.Addr) { listened = true })
	if !errors.Is(err, ErrUnauthenticated) || listened {
		t.Fatalf("ListenAndServe on 0.0.0.0 without auth: %v (listened %v)", err, listened)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A short token ("secret") is accepted, with a warning saying why it is
// risky, and checked like any other.
func TestShortBearerTokenServesWithAWarning(t *testing.T) {
	var logs syncBuffer
	p := startProxyWith(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}}, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	base := serveHTTP(t, p, &HTTPOptions{Token: "secret"})
	if !strings.Contains(logs.String(), "the bearer token is 6 bytes") || !strings.Contains(logs.String(), "quick to guess") {
		t.Errorf("no warning about the short token: %s", logs.String())
	}
	for _, tok := range []string{"", "secreT", "secret-but-longer"} {
		if resp := post(t, base+"/mcp", tok, initBody); resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("token %q: %s, WWW-Authenticate %q", tok, resp.Status, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if resp := post(t, base+"/mcp", "secret", initBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("the right short token: %s", resp.Status)
	}
	if w := shortTokenWarning(strings.Repeat("k", 16)); w != "" {
		t.Errorf("a 16-byte token is warned about: %s", w)
	}
}
