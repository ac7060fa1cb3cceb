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
	// All addresses together may have globalIntrospectionBurst tokens
	// checked at once, then one per globalIntrospectionEvery: 300 loopback
	// addresses with 10 junk tokens each cost the issuer 50 requests, not
	// 3,000. A token already found valid (cached) is never refused for it.
	globalIntrospectionBurst = 50
	globalIntrospectionEvery = 100 * time.Millisecond
	// A check admitted for a token and not begun within flightWait is
	// forgotten (the request never reached the verifier).
	flightWait = 10 * time.Second
	// reservedSubjectPrefix is the form of the identity a token without a
	// subject gets (the hash of the token): a subject in that form would
	// join that token's sessions, so it is refused.
	reservedSubjectPrefix = "token-sha256:"
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
	global   allowance
	// flights are the checks admitted or under way, one per token: the
	// requests carrying a token being checked wait for that one check and
	// spend no allowance (20 first uses at once are one introspection).
	flights map[[32]byte]*flight
}

// flight is one check of one token; done is closed when info and err are set.
type flight struct {
	admitted time.Time
	started  bool
	done     chan struct{}
	info     *auth.TokenInfo
	err      error
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
	return &introspector{o: o, log: log, cache: map[[32]byte]cachedToken{}, allow: map[string]*allowance{},
		global: allowance{tokens: globalIntrospectionBurst, last: time.Now()}, flights: map[[32]byte]*flight{}}
}

func (in *introspector) client() *http.Client {
	if in.o.HTTPClient != nil {
		return in.o.HTTPClient
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// admit reports whether r may go on to the token check: its token is
// cached or being checked already, or both its client address and all
// addresses together have allowance left (which it then spends, once per
// token). A request without a bearer token is admitted: it gets its 401 for
// free.
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
	if f := in.flights[key]; f != nil && (f.started || now.Sub(f.admitted) < flightWait) {
		return true // it waits for the check under way
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
	g := &in.global
	g.tokens = min(globalIntrospectionBurst, g.tokens+float64(now.Sub(g.last))/float64(globalIntrospectionEvery))
	g.last = now
	if a.tokens < 1 || g.tokens < 1 {
		return false
	}
	a.tokens--
	g.tokens--
	if len(in.flights) >= maxCachedTokens {
		for k, f := range in.flights {
			if !f.started && now.Sub(f.admitted) >= flightWait {
				delete(in.flights, k)
			}
		}
	}
	in.flights[key] = &flight{admitted: now, done: make(chan struct{})}
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
	if ok && now.Before(c.until) {
		in.mu.Unlock()
		info := c.info
		return &info, nil
	}
	f := in.flights[key]
	if f != nil && f.started {
		in.mu.Unlock()
		select { // the one check of this token under way
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.info == nil {
			return nil, f.err
		}
		info := *f.info
		return &info, nil
	}
	if f == nil {
		f = &flight{admitted: now, done: make(chan struct{})}
		in.flights[key] = f
	}
	f.started = true
	in.mu.Unlock()
	// The check is every waiting request's: the first one leaving does not
	// end it (the HTTP client's timeout does).
	f.info, f.err = in.check(context.WithoutCancel(ctx), token, key, now)
	in.mu.Lock()
	delete(in.flights, key)
	in.mu.Unlock()
	close(f.done)
	if f.info == nil {
		return nil, f.err
	}
	info := *f.info
	return &info, nil
}

// check introspects token (whose hash is key) once, for verify.
func (in *introspector) check(ctx context.Context, token string, key [32]byte, now time.Time) (*auth.TokenInfo, error) {
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
		info.UserID = reservedSubjectPrefix + hex.EncodeToString(key[:16])
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
	if strings.HasPrefix(ir.Sub, reservedSubjectPrefix) {
		return nil, fmt.Errorf("%w: the token's subject %q has the form the proxy gives tokens without one", auth.ErrInvalidToken, ir.Sub)
	}
	info := &auth.TokenInfo{UserID: ir.Sub, Scopes: strings.Fields(ir.Scope)}
	if ir.Exp > 0 {
		info.Expiration = time.Unix(ir.Exp, 0)
	}
	return info, nil
}
