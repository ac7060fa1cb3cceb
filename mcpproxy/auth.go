package mcpproxy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authConf is who may use the HTTP front door ([HTTPOptions.Token] or
// [HTTPOptions.OAuth]): a request that does not pass gets 401 with a
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
	DefaultBodyTimeout       = 30 * time.Second // a request body not sent in full by then is cut off
	DefaultIdleTimeout       = 2 * time.Minute  // a kept-alive connection without a request is closed
)

// Errors of the HTTP front door's settings.
var (
	// ErrAuthConfig is matched by every error about an authentication
	// setting ([HTTPOptions.Token], [HTTPOptions.OAuth]).
	ErrAuthConfig = errors.New("invalid authentication setting")
	// ErrUnauthenticated: ListenAndServe ([HTTPOptions.CheckListen]) refuses
	// a non-loopback address with neither Token nor OAuth, unless
	// [HTTPOptions.AllowUnauthenticated].
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

// tokenVerifier is the bearer-token check (Token mode).
func (a *authConf) tokenVerifier() auth.TokenVerifier {
	want := sha256.Sum256([]byte(a.Token))
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		got := sha256.Sum256([]byte(token)) // equal lengths: the comparison leaks nothing of the token's length
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			return nil, fmt.Errorf("%w: wrong bearer token", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{UserID: "token"}, nil
	}
}

// middleware wraps next with the authentication, and serves the Protected
// Resource Metadata in OAuth mode. A 401 or 429 closes the connection, so
// a client refused cannot keep it open. In OAuth mode a token not already
// checked is introspected only within the client address's allowance
// (429 beyond it), and log gets the reasons introspection failed, which
// the caller, not yet authenticated, never sees.
func (a *authConf) middleware(next http.Handler, log *slog.Logger) http.Handler {
	opts := &auth.RequireBearerTokenOptions{AllowMissingExpiration: a.OAuth == nil, ClockSkew: clockSkew}
	var prm http.Handler
	var in *introspector
	verifier := a.tokenVerifier()
	if a.OAuth != nil {
		opts.Scopes = a.OAuth.Scopes
		opts.ResourceMetadataURL = prmURL(a.OAuth.Resource)
		prm = auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: a.OAuth.Resource, AuthorizationServers: []string{a.OAuth.Issuer},
			ScopesSupported: a.OAuth.Scopes, BearerMethodsSupported: []string{"header"}, ResourceName: "toolselect MCP proxy"})
		in = newIntrospector(a.OAuth, log)
		verifier = in.verify
	}
	guarded := auth.RequireBearerToken(verifier, opts)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if prm != nil && strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			prm.ServeHTTP(w, r)
			return
		}
		w = closeOnRefusal{w, a.OAuth == nil}
		if in != nil && !in.admit(r) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "Too Many Requests: too many tokens to check from this address; try again later", http.StatusTooManyRequests)
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

// clockSkew is the tolerance on a token's exp and nbf.
const clockSkew = 30 * time.Second

// closeOnRefusal closes the connection after a 401 or 429, and in bearer-token
// mode adds the Bearer challenge that the SDK writes only when it has
// parameters: every 401 names the scheme.
type closeOnRefusal struct {
	http.ResponseWriter
	challenge bool
}

func (c closeOnRefusal) WriteHeader(code int) {
	if code == http.StatusUnauthorized || code == http.StatusTooManyRequests {
		c.Header().Set("Connection", "close")
	}
	if c.challenge && code == http.StatusUnauthorized && c.Header().Get("WWW-Authenticate") == "" {
		c.Header().Set("WWW-Authenticate", `Bearer realm="toolselect"`)
	}
	c.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the writer underneath (flushing, for streams).
func (c closeOnRefusal) Unwrap() http.ResponseWriter { return c.ResponseWriter }

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

// limitBody answers 413 to a body over max bytes (a declared Content-Length
// at once; an undeclared one when reading passes the limit), and gives the
// client timeout to send the body: the connection's read deadline, lifted
// once the whole body has been read so that a streamed response is not cut.
func limitBody(max int64, timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			http.Error(w, fmt.Sprintf("Request Entity Too Large: the body is %d bytes, over the limit of %d", r.ContentLength, max), http.StatusRequestEntityTooLarge)
			return
		}
		body := http.MaxBytesReader(w, r.Body, max)
		if r.ContentLength != 0 && timeout > 0 {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
				body = &deadlineBody{ReadCloser: body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
			}
		}
		r.Body = body
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline once the whole body has been read.
// Only then: after a timeout or another error the server discards what is
// left of the body, and that must stay bounded too.
type deadlineBody struct {
	io.ReadCloser
	lift func()
	once sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.lift)
	}
	return n, err
}

// capSessions answers 503 to a request that would open a session (no
// Mcp-Session-Id) while max are open, and, with perSubject > 0 (OAuth), 429
// to one whose authenticated subject already holds perSubject of them: one
// client cannot hold every slot for the idle timeout.
func (p *Proxy) capSessions(max, perSubject int, next http.Handler) http.Handler {
	var mu sync.Mutex
	owners := map[string]string{} // session id -> subject
	opening := map[string]int{}   // subject -> initializes under way
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("MCP-Protocol-Version") < statelessProtocol {
			n := 0
			alive := map[string]bool{}
			for ss := range p.server.Sessions() {
				n++
				alive[ss.ID()] = true
			}
			if n >= max {
				w.Header().Set("Retry-After", "30")
				http.Error(w, fmt.Sprintf("Service Unavailable: %d sessions are open, the limit (--max-sessions)", n), http.StatusServiceUnavailable)
				return
			}
			var subject string
			if info := auth.TokenInfoFromContext(r.Context()); info != nil {
				subject = info.UserID
			}
			if perSubject > 0 && subject != "" {
				mu.Lock()
				held := opening[subject]
				for sid, s := range owners {
					switch {
					case !alive[sid]:
						delete(owners, sid)
					case s == subject:
						held++
					}
				}
				if held >= perSubject {
					mu.Unlock()
					w.Header().Set("Retry-After", "30")
					http.Error(w, fmt.Sprintf("Too Many Requests: this subject holds %d sessions, the limit for one subject (a quarter of --max-sessions); close one first", held), http.StatusTooManyRequests)
					return
				}
				opening[subject]++
				mu.Unlock()
				// The initialize under way counts until the session it opens
				// is recorded, and from then on the session counts instead:
				// the client may read the response, and open its next
				// session, before this handler returns.
				pending := true
				release := func() {
					if pending {
						pending = false
						if opening[subject]--; opening[subject] <= 0 {
							delete(opening, subject)
						}
					}
				}
				defer func() {
					mu.Lock()
					release()
					mu.Unlock()
				}()
				w = &sessionRecorder{ResponseWriter: w, record: func(sid string) {
					mu.Lock()
					owners[sid] = subject
					release()
					mu.Unlock()
				}}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// sessionRecorder tells record the session id a response opens.
type sessionRecorder struct {
	http.ResponseWriter
	record func(sid string)
	done   bool
}

func (s *sessionRecorder) WriteHeader(code int) {
	if !s.done {
		s.done = true
		if sid := s.Header().Get("Mcp-Session-Id"); sid != "" && code < 300 {
			s.record(sid)
		}
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *sessionRecorder) Write(b []byte) (int, error) {
	if !s.done {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the writer underneath (flushing, for streams).
func (s *sessionRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
