package mcpproxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Bounds of OAuth token introspection.
const (
	// A token found valid is not introspected again until it expires, or
	// for at most introspectionCacheTTL (so a revocation counts within it).
	introspectionCacheTTL = 5 * time.Minute
	// maxCachedTokens bounds the cache; a full cache drops expired entries,
	// then any one.
	maxCachedTokens = 1024
	// Each client address may have introspectionBurst tokens checked at
	// once, then one per introspectionEvery: 100 junk tokens from one
	// address cost the issuer 10 requests, not 100.
	introspectionBurst = 10
	introspectionEvery = time.Second
	// maxTrackedAddresses bounds the allowances kept; a full table drops
	// the addresses whose allowance is whole again.
	maxTrackedAddresses = 4096
)

// errCheckFailed is what an unauthenticated caller reads when a token could
// not be checked (the issuer down, its answer unreadable): the reason, which
// names the issuer's endpoints and internal errors, goes to the log only.
var errCheckFailed = errors.New("the token could not be checked; try again later")

// introspector checks tokens with the issuer's introspection endpoint
// (RFC 7662), caching the tokens it found valid and limiting how many
// tokens each client address may have checked.
type introspector struct {
	o   *OAuth
	log *slog.Logger

	mu       sync.Mutex
	endpoint string
	cache    map[[32]byte]cachedToken
	allow    map[string]*allowance
}

type cachedToken struct {
	info  auth.TokenInfo
	until time.Time
}

// allowance is a token bucket: tokens left at the time last.
type allowance struct {
	tokens float64
	last   time.Time
}

func newIntrospector(o *OAuth, log *slog.Logger) *introspector {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &introspector{o: o, log: log, cache: map[[32]byte]cachedToken{}, allow: map[string]*allowance{}}
}

func (in *introspector) client() *http.Client {
	if in.o.HTTPClient != nil {
		return in.o.HTTPClient
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// admit reports whether r may go on to the token check: its token is
// cached, or its client address has allowance left (which it then spends).
// A request without a bearer token is admitted: it gets its 401 for free.
func (in *introspector) admit(r *http.Request) bool {
	token, ok := bearerToken(r)
	if !ok {
		return true
	}
	key := sha256.Sum256([]byte(token))
	now := time.Now()
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.cache[key]; ok && now.Before(c.until) {
		return true
	}
	addr := clientAddr(r)
	a := in.allow[addr]
	if a == nil {
		if len(in.allow) >= maxTrackedAddresses {
			in.forgetWholeLocked(now)
		}
		a = &allowance{tokens: introspectionBurst, last: now}
		in.allow[addr] = a
	}
	a.tokens = min(introspectionBurst, a.tokens+float64(now.Sub(a.last))/float64(introspectionEvery))
	a.last = now
	if a.tokens < 1 {
		return false
	}
	a.tokens--
	return true
}

// forgetWholeLocked drops the addresses whose allowance has refilled, and
// when none has, every address (the table stays bounded either way).
func (in *introspector) forgetWholeLocked(now time.Time) {
	for k, a := range in.allow {
		if a.tokens+float64(now.Sub(a.last))/float64(introspectionEvery) >= introspectionBurst {
			delete(in.allow, k)
		}
	}
	if len(in.allow) >= maxTrackedAddresses {
		clear(in.allow)
	}
}

func bearerToken(r *http.Request) (string, bool) {
	f := strings.Fields(r.Header.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
		return "", false
	}
	return f[1], true
}

// clientAddr is the IP r came from (the whole RemoteAddr if it has no port).
func clientAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// endpointURL reads the introspection endpoint from the issuer's metadata, once.
func (in *introspector) endpointURL(ctx context.Context) (string, error) {
	in.mu.Lock()
	ep := in.endpoint
	in.mu.Unlock()
	if ep != "" {
		return ep, nil
	}
	meta, err := auth.GetAuthServerMetadata(ctx, in.o.Issuer, in.client())
	if err != nil {
		return "", fmt.Errorf("reading the issuer's metadata: %w", err)
	}
	if meta == nil || meta.IntrospectionEndpoint == "" {
		return "", fmt.Errorf("the issuer %s publishes no introspection_endpoint", in.o.Issuer)
	}
	in.mu.Lock()
	in.endpoint = meta.IntrospectionEndpoint
	in.mu.Unlock()
	return meta.IntrospectionEndpoint, nil
}

// verify is the OAuth TokenVerifier: the token must be active, a bearer
// access token, issued by the issuer, for this resource (audience), already
// valid (nbf) and not expired. A token found valid is cached; a failure to
// check it is logged and answered with errCheckFailed.
func (in *introspector) verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	key := sha256.Sum256([]byte(token))
	now := time.Now()
	in.mu.Lock()
	c, ok := in.cache[key]
	in.mu.Unlock()
	if ok && now.Before(c.until) {
		info := c.info
		return &info, nil
	}
	info, err := in.introspect(ctx, token)
	if err != nil {
		if errors.Is(err, auth.ErrInvalidToken) {
			return nil, err
		}
		in.log.Warn("mcp: token introspection failed", "error", err)
		return nil, errCheckFailed
	}
	if info.UserID == "" {
		// Without a subject the token is the identity: a session it opened
		// is its own, not every subject-less token's.
		info.UserID = "token-sha256:" + hex.EncodeToString(key[:16])
	}
	if !info.Expiration.IsZero() {
		in.store(key, *info, now)
	}
	return info, nil
}

func (in *introspector) store(key [32]byte, info auth.TokenInfo, now time.Time) {
	until := now.Add(introspectionCacheTTL)
	if info.Expiration.Before(until) {
		until = info.Expiration
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.cache) >= maxCachedTokens {
		for k, c := range in.cache {
			if !now.Before(c.until) {
				delete(in.cache, k)
			}
		}
		for k := range in.cache {
			if len(in.cache) < maxCachedTokens {
				break
			}
			delete(in.cache, k)
		}
	}
	in.cache[key] = cachedToken{info: info, until: until}
}

// introspect asks the issuer about token and checks its answer.
func (in *introspector) introspect(ctx context.Context, token string) (*auth.TokenInfo, error) {
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
		Active    bool            `json:"active"`
		Scope     string          `json:"scope"`
		Exp       int64           `json:"exp"`
		Nbf       int64           `json:"nbf"`
		Sub       string          `json:"sub"`
		Iss       string          `json:"iss"`
		Aud       json.RawMessage `json:"aud"`
		TokenType string          `json:"token_type"`
	}
	if err := json.Unmarshal(body, &ir); err != nil {
		return nil, fmt.Errorf("token introspection: not JSON: %w", err)
	}
	if !ir.Active {
		return nil, fmt.Errorf("%w: the token is not active", auth.ErrInvalidToken)
	}
	if ir.TokenType != "" && !strings.EqualFold(ir.TokenType, "bearer") {
		// A refresh token, or one bound to a key (DPoP), is not a bearer access token.
		return nil, fmt.Errorf("%w: the token's type is %q, not a bearer access token", auth.ErrInvalidToken, ir.TokenType)
	}
	if ir.Nbf > 0 && time.Unix(ir.Nbf, 0).After(time.Now().Add(clockSkew)) {
		return nil, fmt.Errorf("%w: the token is not valid before %s", auth.ErrInvalidToken, time.Unix(ir.Nbf, 0).UTC().Format(time.RFC3339))
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
