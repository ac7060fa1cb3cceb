package mcpproxy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authConf is who may use the HTTP front door (HTTPOptions.Token or
// HTTPOptions.OAuth): a request that does not pass gets 401 with a
// WWW-Authenticate header and never reaches MCP (nor /metrics).
type authConf struct {
	Token string
	OAuth *OAuth
}

// OAuth configures the resource-server mode: bearer tokens issued by Issuer
// for this server (audience Resource, RFC 8707), checked by the issuer's
// token introspection (RFC 7662; its endpoint read from the issuer's
// metadata, RFC 8414). The proxy serves its Protected Resource Metadata
// (RFC 9728) at /.well-known/oauth-protected-resource, which the 401's
// WWW-Authenticate header points to, so MCP clients can find the issuer.
type OAuth struct {
	// Issuer is the authorization server's issuer URL.
	Issuer string
	// Resource is this server's canonical URL, e.g. https://tools.example.com/mcp;
	// a token must name it in its audience.
	Resource string
	// Scopes a token must hold (all of them); none by default.
	Scopes []string
	// ClientID and ClientSecret authenticate the proxy to the introspection endpoint.
	ClientID, ClientSecret string
	// HTTPClient talks to the issuer; nil means one with a 10 s timeout.
	HTTPClient *http.Client
}

// shortTokenBytes: a bearer token shorter than this is accepted with a
// warning (any non-empty token works; a short one is easier to guess).
const shortTokenBytes = 16

// shortTokenWarning says why a short bearer token is risky; "" when it is not short.
func shortTokenWarning(token string) string {
	if token == "" || len(token) >= shortTokenBytes {
		return ""
	}
	return fmt.Sprintf("the bearer token is %d bytes: anyone who can reach the port can try to guess it, and a token under %d bytes is quick to guess; use a random one (e.g. openssl rand -hex 32)",
		len(token), shortTokenBytes)
}

// Defaults of the HTTP server's limits (HTTPOptions).
const (
	DefaultMaxBodyBytes      = 4 << 20 // a request body over this gets 413
	DefaultMaxSessions       = 256     // sessions open at once; the next initialize gets 503
	DefaultReadHeaderTimeout = 10 * time.Second
)

// Errors of the HTTP front door's settings.
var (
	// ErrAuthConfig is matched by every error about an authentication
	// setting (HTTPOptions.Token, HTTPOptions.OAuth).
	ErrAuthConfig = errors.New("invalid authentication setting")
	// ErrUnauthenticated: ListenAndServe (HTTPOptions.CheckListen) refuses
	// a non-loopback address with neither Token nor OAuth, unless
	// HTTPOptions.AllowUnauthenticated.
	ErrUnauthenticated = errors.New("refusing to serve a non-loopback address without authentication")
)

// validate checks a's settings.
func (a *authConf) validate() error {
	if a == nil {
		return nil
	}
	switch {
	case a.Token != "" && a.OAuth != nil:
		return fmt.Errorf("%w: a bearer token and OAuth are exclusive", ErrAuthConfig)
	case a.Token == "" && a.OAuth == nil:
		return fmt.Errorf("%w: neither a bearer token nor OAuth", ErrAuthConfig)
	case a.Token != "" && strings.TrimSpace(a.Token) == "":
		return fmt.Errorf("%w: the bearer token is only white space", ErrAuthConfig)
	case a.OAuth != nil:
		for name, v := range map[string]string{"issuer": a.OAuth.Issuer, "resource": a.OAuth.Resource} {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return fmt.Errorf("%w: OAuth %s %q is not an http(s) URL", ErrAuthConfig, name, v)
			}
		}
	}
	return nil
}

// verifier returns the token check of a.
func (a *authConf) verifier() auth.TokenVerifier {
	if a.OAuth == nil {
		want := sha256.Sum256([]byte(a.Token))
		return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
			got := sha256.Sum256([]byte(token)) // equal lengths: the comparison leaks nothing of the token's length
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				return nil, fmt.Errorf("%w: wrong bearer token", auth.ErrInvalidToken)
			}
			return &auth.TokenInfo{UserID: "token"}, nil
		}
	}
	in := &introspector{o: a.OAuth}
	return in.verify
}

// middleware wraps next with the authentication, and serves the Protected
// Resource Metadata in OAuth mode.
func (a *authConf) middleware(next http.Handler) http.Handler {
	opts := &auth.RequireBearerTokenOptions{AllowMissingExpiration: a.OAuth == nil, ClockSkew: 30 * time.Second}
	var prm http.Handler
	if a.OAuth != nil {
		opts.Scopes = a.OAuth.Scopes
		opts.ResourceMetadataURL = prmURL(a.OAuth.Resource)
		prm = auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: a.OAuth.Resource, AuthorizationServers: []string{a.OAuth.Issuer},
			ScopesSupported: a.OAuth.Scopes, BearerMethodsSupported: []string{"header"}, ResourceName: "toolselect MCP proxy"})
	}
	guarded := auth.RequireBearerToken(a.verifier(), opts)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if prm != nil && strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			prm.ServeHTTP(w, r)
			return
		}
		if a.OAuth == nil {
			// The SDK writes WWW-Authenticate only when it has parameters:
			// every 401 names the scheme.
			w = challengeOn401{w}
		}
		guarded.ServeHTTP(w, r)
	})
}

// challengeOn401 adds a Bearer challenge to a 401 that has none.
type challengeOn401 struct{ http.ResponseWriter }

func (c challengeOn401) WriteHeader(code int) {
	if code == http.StatusUnauthorized && c.Header().Get("WWW-Authenticate") == "" {
		c.Header().Set("WWW-Authenticate", `Bearer realm="toolselect"`)
	}
	c.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the writer underneath (flushing, for streams).
func (c challengeOn401) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// prmURL is where the Protected Resource Metadata of resource is served
// (RFC 9728 §3: the well-known path inserted before the resource's path).
func prmURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	u.Path = "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// introspector checks tokens with the issuer's introspection endpoint.
type introspector struct {
	o        *OAuth
	mu       sync.Mutex
	endpoint string
}

func (in *introspector) client() *http.Client {
	if in.o.HTTPClient != nil {
		return in.o.HTTPClient
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// endpointURL reads the introspection endpoint from the issuer's metadata, once.
func (in *introspector) endpointURL(ctx context.Context) (string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.endpoint != "" {
		return in.endpoint, nil
	}
	meta, err := auth.GetAuthServerMetadata(ctx, in.o.Issuer, in.client())
	if err != nil {
		return "", fmt.Errorf("reading the issuer's metadata: %w", err)
	}
	if meta == nil || meta.IntrospectionEndpoint == "" {
		return "", fmt.Errorf("the issuer %s publishes no introspection_endpoint", in.o.Issuer)
	}
	in.endpoint = meta.IntrospectionEndpoint
	return in.endpoint, nil
}

// verify is the OAuth TokenVerifier: the token must be active, issued by the
// issuer, for this resource (audience), and not expired.
func (in *introspector) verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	ep, err := in.endpointURL(ctx)
	if err != nil {
		return nil, err
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if in.o.ClientID != "" {
		req.SetBasicAuth(url.QueryEscape(in.o.ClientID), url.QueryEscape(in.o.ClientSecret))
	}
	resp, err := in.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("token introspection: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("token introspection: HTTP %d", resp.StatusCode)
	}
	var ir struct {
		Active bool            `json:"active"`
		Scope  string          `json:"scope"`
		Exp    int64           `json:"exp"`
		Sub    string          `json:"sub"`
		Iss    string          `json:"iss"`
		Aud    json.RawMessage `json:"aud"`
	}
	if err := json.Unmarshal(body, &ir); err != nil {
		return nil, fmt.Errorf("token introspection: not JSON: %w", err)
	}
	if !ir.Active {
		return nil, fmt.Errorf("%w: the token is not active", auth.ErrInvalidToken)
	}
	if ir.Iss != "" && strings.TrimSuffix(ir.Iss, "/") != strings.TrimSuffix(in.o.Issuer, "/") {
		return nil, fmt.Errorf("%w: issued by %q, not %q", auth.ErrInvalidToken, ir.Iss, in.o.Issuer)
	}
	var aud []string
	if len(ir.Aud) > 0 && ir.Aud[0] == '"' {
		var one string
		_ = json.Unmarshal(ir.Aud, &one)
		aud = []string{one}
	} else {
		_ = json.Unmarshal(ir.Aud, &aud)
	}
	if !oauthex.MatchesResource(aud, in.o.Resource) {
		return nil, fmt.Errorf("%w: the token's audience %v does not name this server (%s)", auth.ErrInvalidToken, aud, in.o.Resource)
	}
	info := &auth.TokenInfo{UserID: ir.Sub, Scopes: strings.Fields(ir.Scope)}
	if ir.Exp > 0 {
		info.Expiration = time.Unix(ir.Exp, 0)
	}
	return info, nil
}

// limitBody answers 413 to a body over max bytes (a declared Content-Length
// at once; an undeclared one when reading passes the limit).
func limitBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			http.Error(w, fmt.Sprintf("Request Entity Too Large: the body is %d bytes, over the limit of %d", r.ContentLength, max), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}

// capSessions answers 503 to a request that would open a session (no
// Mcp-Session-Id) while max are open.
func (p *Proxy) capSessions(max int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("MCP-Protocol-Version") < statelessProtocol {
			n := 0
			for range p.server.Sessions() {
				n++
			}
			if n >= max {
				w.Header().Set("Retry-After", "30")
				http.Error(w, fmt.Sprintf("Service Unavailable: %d sessions are open, the limit (--max-sessions)", n), http.StatusServiceUnavailable)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
