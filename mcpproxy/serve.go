package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves MCP over in and out (newline-delimited JSON-RPC, the
// stdio transport) until in reaches EOF or ctx is done.
//
// The SDK's stdio server cancels in-flight requests and drops their replies
// as soon as its input reaches EOF, so a client that writes a request and
// closes its end (echo '...' | toolselect mcp) would get nothing. ServeStdio
// therefore holds the EOF back until every request read has been answered
// (or drain, the grace period, has passed), then lets the session end.
func (p *Proxy) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, drain time.Duration) error {
	if drain <= 0 {
		drain = p.cfg.timeout() + 5*time.Second
	}
	t := newDrainTransport(in, out, drain)
	ss, err := p.server.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		ss.Close()
		<-done
		err = ctx.Err()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// drainTracker counts JSON-RPC calls read and responses written.
type drainTracker struct {
	mu      sync.Mutex
	pending int
	idle    chan struct{} // closed when pending drops to 0 after EOF
	eof     bool
}

func (d *drainTracker) read(line []byte) {
	msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(line))
	if err != nil {
		return
	}
	if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() {
		d.mu.Lock()
		d.pending++
		d.mu.Unlock()
	}
}

func (d *drainTracker) wrote(line []byte) {
	msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(line))
	if err != nil {
		return
	}
	if _, ok := msg.(*jsonrpc.Response); ok {
		d.mu.Lock()
		if d.pending > 0 {
			d.pending--
		}
		if d.pending == 0 && d.eof && d.idle != nil {
			close(d.idle)
			d.idle = nil
		}
		d.mu.Unlock()
	}
}

// waitIdle blocks until every call read so far is answered, or timeout.
func (d *drainTracker) waitIdle(timeout time.Duration) {
	d.mu.Lock()
	d.eof = true
	if d.pending == 0 {
		d.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	d.idle = ch
	d.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(timeout):
	}
}

// drainReader passes lines through, counting calls, and delays EOF.
type drainReader struct {
	r     *bufio.Reader
	d     *drainTracker
	drain time.Duration
	buf   []byte
}

func (r *drainReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		line, err := r.r.ReadBytes('\n')
		if len(line) > 0 {
			r.d.read(line)
			r.buf = line
		}
		if err != nil && len(line) == 0 {
			if err == io.EOF {
				r.d.waitIdle(r.drain)
			}
			return 0, err
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// drainWriter counts responses; the SDK writes one message per Write.
type drainWriter struct {
	w   io.Writer
	d   *drainTracker
	mu  sync.Mutex
	acc []byte
}

func (w *drainWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.mu.Lock()
	w.acc = append(w.acc, p[:n]...)
	for {
		i := bytes.IndexByte(w.acc, '\n')
		if i < 0 {
			break
		}
		line := w.acc[:i]
		w.acc = w.acc[i+1:]
		w.d.wrote(line)
	}
	w.mu.Unlock()
	return n, err
}

func newDrainTransport(in io.Reader, out io.Writer, drain time.Duration) mcp.Transport {
	d := &drainTracker{}
	return &mcp.IOTransport{
		Reader: io.NopCloser(&drainReader{r: bufio.NewReaderSize(in, 64<<10), d: d, drain: drain}),
		Writer: nopWriteCloser{&drainWriter{w: out, d: d}},
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// HTTPOptions configures HTTPHandler. A nil *HTTPOptions means defaults.
type HTTPOptions struct {
	// AllowedHosts are host names (without port) accepted in Host and Origin
	// headers besides the loopback names (localhost, 127.0.0.1, ::1).
	AllowedHosts []string
	// SessionTimeout closes idle sessions (default 30 minutes; negative
	// keeps them forever).
	SessionTimeout time.Duration
	// Token, when set, is a shared secret every request to /mcp and
	// /metrics must carry as "Authorization: Bearer <Token>" (compared in
	// constant time). Any non-empty token is accepted; ListenAndServe logs
	// a warning for one under 16 bytes, which is quick to guess. A request
	// without it gets 401 with a WWW-Authenticate header and never reaches
	// MCP.
	Token string
	// OAuth, when set, makes the proxy an OAuth 2.1 resource server instead
	// of Token (the two are exclusive).
	OAuth *OAuth
	// AllowUnauthenticated serves a non-loopback address with neither Token
	// nor OAuth; without it ListenAndServe refuses (ErrUnauthenticated),
	// since anyone who reaches the port could call every upstream tool.
	AllowUnauthenticated bool
	// MaxBodyBytes bounds a request body (default DefaultMaxBodyBytes, 4 MiB):
	// a larger one gets 413.
	MaxBodyBytes int64
	// MaxSessions bounds the sessions open at once (default
	// DefaultMaxSessions, 256): the next initialize gets 503. With OAuth,
	// one subject may hold a quarter of them (at least one): its next
	// initialize gets 429.
	MaxSessions int
	// ReadHeaderTimeout cuts off a client that has not sent its headers in
	// time (default DefaultReadHeaderTimeout, 10 s).
	ReadHeaderTimeout time.Duration
	// BodyTimeout cuts off a client that has not sent its whole request
	// body in time after its headers (default DefaultBodyTimeout, 30 s).
	// It bounds the body only: a response streamed afterwards (SSE) may
	// last as long as it needs.
	BodyTimeout time.Duration
	// IdleTimeout closes a kept-alive connection on which no request
	// arrives in time (default DefaultIdleTimeout, 2 minutes).
	IdleTimeout time.Duration
	// Drain is how long ListenAndServe, told to stop, waits for requests
	// in flight after it stops accepting (default the call timeout plus
	// 5 s); /readyz answers 503 "draining" meanwhile.
	Drain time.Duration
	// DrainDelay is how long ListenAndServe, told to stop, keeps accepting
	// and serving with /readyz at 503 and every response closing its
	// connection, before it stops accepting: the time a load balancer's
	// health check needs to take the replica out. Without it, a request
	// the balancer sends on a kept-alive connection the moment the
	// replica closes it gets no response. Zero (the default in Go; the
	// command line's --drain-delay is 2 s) stops accepting at once.
	DrainDelay time.Duration
}

// auth returns the authentication o asks for; nil when none.
func (o *HTTPOptions) auth() *authConf {
	if o == nil || (o.Token == "" && o.OAuth == nil) {
		return nil
	}
	return &authConf{Token: o.Token, OAuth: o.OAuth}
}

// Validate checks the authentication settings (ListenAndServe does too):
// Token and OAuth are exclusive, and OAuth's issuer and resource are
// http(s) URLs. Errors match ErrAuthConfig.
func (o *HTTPOptions) Validate() error { return o.auth().validate() }

// CheckListen is what ListenAndServe checks before it listens on addr:
// Validate, and that a non-loopback addr has Token, OAuth or
// AllowUnauthenticated (ErrUnauthenticated otherwise). A name such as
// "localhost" passes here; ListenAndServe checks again the address it was
// given (CheckBound), since a name may resolve to any address.
func (o *HTTPOptions) CheckListen(addr string) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.auth() == nil && (o == nil || !o.AllowUnauthenticated) && !isLoopback(addr) {
		return fmt.Errorf("%w: %s", ErrUnauthenticated, addr)
	}
	return nil
}

// CheckBound is what ListenAndServe checks once it listens: without Token,
// OAuth or AllowUnauthenticated, the bound address must be a loopback IP,
// whatever name addr gave (ErrUnauthenticated otherwise).
func (o *HTTPOptions) CheckBound(addr string, bound net.Addr) error {
	if o.auth() != nil || (o != nil && o.AllowUnauthenticated) {
		return nil
	}
	if tcp, ok := bound.(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %s is bound to %s, which is not a loopback address", ErrUnauthenticated, addr, bound)
}

// isLoopback reports whether a listen address binds only loopback
// interfaces ("127.0.0.1:8080", "[::1]:0", "localhost:9000"); an empty host
// (":8080", "0.0.0.0") binds every interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// statelessProtocol is the first MCP version served without sessions: its
// requests carry none a server could send a request back on (no
// elicitation mid-call), and it has no ping.
const statelessProtocol = "2026-07-28"

// HTTPHandler serves MCP over streamable HTTP. Clients that initialize with
// a session-based protocol (up to 2025-11-25) get a stateful session; a
// request announcing protocol 2026-07-28 or later in its MCP-Protocol-Version
// header and carrying no session goes to a stateless handler, which the SDK's
// stateful handler would refuse with -32022. Requests whose Host or Origin
// names a host other than a loopback name or an allowed host are refused
// with 403 (DNS-rebinding protection).
func (p *Proxy) HTTPHandler(opts *HTTPOptions) http.Handler {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = 30 * time.Minute
	} else if o.SessionTimeout < 0 {
		o.SessionTimeout = 0
	}
	get := func(*http.Request) *mcp.Server { return p.server }
	// The Host and Origin allowlist below is the DNS rebinding protection,
	// whatever address a request arrived on. The SDK's own (a request that
	// arrived on a loopback address must name a loopback host) is off, so
	// that a name allowed here is served also through a reverse proxy on the
	// same machine.
	stateful := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Logger: p.log, SessionTimeout: o.SessionTimeout,
		DisableLocalhostProtection: true})
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Logger: p.log, Stateless: true, PropagateRequestCancellation: true,
		DisableLocalhostProtection: true})
	return o.checkHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("MCP-Protocol-Version") >= statelessProtocol {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	}))
}

// checkHost refuses with 403 a request whose Host or Origin names a host
// other than a loopback name or one of o.AllowedHosts: the DNS rebinding
// protection of /mcp and /metrics.
func (o *HTTPOptions) checkHost(next http.Handler) http.Handler {
	allowed := map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}
	if o != nil {
		for _, h := range o.AllowedHosts {
			allowed[strings.ToLower(h)] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, allowed) {
			http.Error(w, "Forbidden: Host "+quoteHeader(r.Host)+" is not allowed (DNS rebinding protection; allow a name with HTTPOptions.AllowedHosts, toolselect mcp --allowed-host)", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || !hostAllowed(u.Host, allowed) {
				http.Error(w, "Forbidden: Origin "+quoteHeader(origin)+" is not allowed (DNS rebinding protection)", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func hostAllowed(hostport string, allowed map[string]bool) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if allowed[host] {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	return false
}

func quoteHeader(s string) string {
	if len(s) > 100 {
		s = s[:100]
	}
	return "\"" + strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return '?'
		}
		return r
	}, s) + "\""
}

// listen is net.Listen; tests replace it to bind a name elsewhere.
var listen = net.Listen

// ListenAndServe serves HTTPHandler at path /mcp, and the Prometheus
// metrics at /metrics behind the same Host/Origin check, on addr until ctx
// is done, both behind opts.Token or opts.OAuth when set,
// with a request body limit, a cap on open sessions, header and body read
// timeouts and an idle timeout (HTTPOptions). ready, if not nil, receives the bound address
// (useful with port 0).
func (p *Proxy) ListenAndServe(ctx context.Context, addr string, opts *HTTPOptions, ready func(net.Addr)) error {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if err := o.CheckListen(addr); err != nil {
		return err
	}
	if w := shortTokenWarning(o.Token); w != "" {
		p.log.Warn("mcp: " + w)
	}
	ln, err := listen("tcp", addr)
	if err != nil {
		return err
	}
	if err := o.CheckBound(addr, ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Drain <= 0 {
		o.Drain = p.cfg.timeout() + 5*time.Second
	}
	mux := http.NewServeMux()
	perSubject := 0
	if o.OAuth != nil {
		// A subject (an OAuth user) may hold a quarter of the sessions:
		// with a static token every client is one subject.
		perSubject = max(1, o.MaxSessions/4)
	}
	mux.Handle("/mcp", p.capSessions(o.MaxSessions, perSubject, p.HTTPHandler(&o)))
	mux.Handle("GET /metrics", o.checkHost(p.MetricsHandler()))
	var h http.Handler = mux
	if a := o.auth(); a != nil {
		h = a.middleware(h, p.log)
	}
	// The probes of a load balancer: no authentication, and nothing said
	// beyond ok / not ok and a reason word.
	outer := http.NewServeMux()
	outer.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { probeReply(w, "") })
	outer.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) { probeReply(w, p.notReady()) })
	outer.Handle("/", h)
	srv := &http.Server{Handler: p.closeWhenDraining(p.metrics.countHTTP(limitBody(o.MaxBodyBytes, o.BodyTimeout, outer))), ReadHeaderTimeout: o.ReadHeaderTimeout, IdleTimeout: o.IdleTimeout}
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		// Drain: /readyz says so, no new connection is accepted, and the
		// requests in flight finish (within o.Drain) before the return.
		p.draining.Store(true)
		if o.DrainDelay > 0 {
			p.log.Info("mcp: draining: /readyz 503, still serving while the balancer takes this replica out", "delay", o.DrainDelay)
			select {
			case err := <-errc:
				return err
			case <-time.After(o.DrainDelay):
			}
		}
		p.log.Info("mcp: draining: no new connections; requests in flight finish", "drain", o.Drain)
		sctx, cancel := context.WithTimeout(context.Background(), o.Drain)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			p.log.Warn("mcp: requests still in flight after the drain were cut", "drain", o.Drain)
		}
		srv.Close()
		return nil
	}
}

// closeWhenDraining has every response close its connection once the proxy
// drains: a balancer then holds no kept-alive connection to this replica
// for the moment it stops accepting.
func (p *Proxy) closeWhenDraining(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

// probeReply answers a probe: 200 "ok", or 503 and the reason word.
func probeReply(w http.ResponseWriter, reason string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if reason == "" {
		_, _ = io.WriteString(w, "ok\n")
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = io.WriteString(w, reason+"\n")
}

// notReady is why the proxy should get no new requests ("" when ready):
// "draining" (told to stop), "state" (the shared store away: tools it
// cannot confirm are held), "closed". New returns once the upstreams are
// imported, so a proxy that serves has imported them; a start-up that
// serves before its imports end adds its reason word here.
func (p *Proxy) notReady() string {
	switch {
	case p.draining.Load():
		return "draining"
	case p.stateDown():
		return "state"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return "closed"
	}
	return ""
}

// stateDown reports whether the shared store failed its last read.
func (p *Proxy) stateDown() bool {
	if p.state == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pinsErr != ""
}
