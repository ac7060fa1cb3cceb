package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/executor"
)

// minReconnectGap bounds how often a down upstream is restarted.
const minReconnectGap = time.Second

// minConnectTimeout is the least time given to start and initialise an upstream.
const minConnectTimeout = 30 * time.Second

// upstream is one connected (or connectable) MCP server.
type upstream struct {
	cfg Upstream
	p   *Proxy

	connMu sync.Mutex // serialises connect attempts

	mu        sync.Mutex
	sess      *mcp.ClientSession
	state     string
	lastErr   string
	lastTry   time.Time
	connects  int
	crashes   int
	calls     int      // calls forwarded to the upstream
	names     []string // namespaced tools currently registered
	checked   []string // namespaced tools of the last listing checked against their pins (held ones too)
	resources []string // proxy URIs of its resources served
	templates []string // proxy URI templates of its resource templates served
	prompts   []string // namespaced prompts served
	listed    int
	refused   []refusal
	stderr    *tailWriter
	serverNfo string
	// firstDone closes when the first connect (Start, Launch) has ended.
	firstDone chan struct{}
}

// refusal is an upstream tool the registry refused, with the reason.
type refusal struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

func newUpstream(p *Proxy, cfg Upstream) *upstream {
	return &upstream{cfg: cfg, p: p, state: StateDown, stderr: &tailWriter{max: 4096}, firstDone: make(chan struct{})}
}

// session returns a live session, (re)connecting if the upstream is down.
// A reconnect re-imports the upstream's tools.
func (u *upstream) session(ctx context.Context) (*mcp.ClientSession, error) {
	u.mu.Lock()
	if u.sess != nil {
		s := u.sess
		u.mu.Unlock()
		return s, nil
	}
	u.mu.Unlock()

	u.connMu.Lock()
	defer u.connMu.Unlock()
	u.mu.Lock()
	if u.sess != nil { // someone else connected meanwhile
		s := u.sess
		u.mu.Unlock()
		return s, nil
	}
	if !u.lastTry.IsZero() && time.Since(u.lastTry) < minReconnectGap {
		err := fmt.Errorf("upstream %q is down (%s); next restart attempt in under %v", u.cfg.Name, u.lastErr, minReconnectGap)
		u.mu.Unlock()
		return nil, err
	}
	u.mu.Unlock()
	// A restart is bounded by the connect timeout, not by the (maybe
	// shorter) per-call deadline of the call that needs it.
	if err := u.connect(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.sess == nil {
		return nil, fmt.Errorf("upstream %q is down (%s)", u.cfg.Name, u.lastErr)
	}
	return u.sess, nil
}

// connect starts or dials the upstream, initialises the session and imports
// its tools. The caller holds connMu.
func (u *upstream) connect(ctx context.Context) error {
	// Starting a server (npx, a cold Node) can take longer than a short
	// per-call timeout, so connecting gets at least minConnectTimeout.
	ctx, cancel := context.WithTimeout(ctx, max(u.p.cfg.timeout(), minConnectTimeout))
	defer cancel()
	u.mu.Lock()
	u.lastTry = time.Now()
	u.connects++
	u.mu.Unlock()

	var t mcp.Transport
	if u.cfg.URL != "" {
		hc := u.httpClient()
		if u.cfg.transport() == transportSSE {
			t = streamLife{&mcp.SSEClientTransport{Endpoint: u.cfg.URL, HTTPClient: hc}, u.p.life}
		} else {
			t = &mcp.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: hc}
		}
	} else {
		cmd := exec.Command(u.cfg.Command, u.cfg.Args...)
		if path, ok, err := commandPath(u.cfg.Command, u.cfg.Env); ok {
			// Found as the entry's client finds it (commandPath), not in
			// the proxy's own PATH.
			cmd.Path, cmd.Err = path, err
		}
		cmd.Dir = u.cfg.Dir
		// Never nil: a nil Env would hand the child the proxy's whole
		// environment.
		cmd.Env = upstreamEnv(os.Environ(), u.cfg)
		u.stderr.reset()
		cmd.Stderr = u.stderr
		t = idTransport{&mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolselect-mcp-proxy", Version: version}, &mcp.ClientOptions{
		// Declare nothing: the proxy cannot answer roots, sampling or
		// elicitation on behalf of its own clients, and declaring roots would
		// make servers such as server-filesystem ignore their command line.
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			go u.refresh()
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			go u.refreshResources()
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			go u.refreshPrompts()
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			u.p.resourceUpdated(ctx, u, req.Params)
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			u.p.relay.progress(req.Params)
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			u.p.relay.log(u, req.Params, u.p.server)
		},
	})
	sess, err := client.Connect(ctx, t, nil)
	if err != nil {
		return u.fail(fmt.Errorf("connecting: %w", err))
	}
	if r := sess.InitializeResult(); r != nil && r.ServerInfo != nil {
		u.mu.Lock()
		u.serverNfo = r.ServerInfo.Name + " " + r.ServerInfo.Version
		u.mu.Unlock()
	}
	// Ask only for what the server offers: a server without the tools
	// capability (prompts or resources only) is served for those, not
	// marked down because tools/list is not a method it has.
	var tools []*mcp.Tool
	if caps := sessCaps(sess); caps != nil && caps.Tools != nil {
		if tools, err = listAll(ctx, sess); err != nil {
			sess.Close()
			return u.fail(fmt.Errorf("listing tools: %w", err))
		}
	}
	u.mu.Lock()
	u.sess = sess
	u.state = StateReady
	u.lastErr = ""
	u.mu.Unlock()
	u.p.importTools(u, tools)
	u.p.importResources(ctx, u, sess, false)
	u.p.importPrompts(ctx, u, sess, false)
	u.p.resubscribe(ctx, u, sess)
	go u.watch(sess)
	return nil
}

// fail marks the upstream down for err. What clients and the model can
// read (the error, the stats' lastError) is public: no URL query string or
// user info, no stderr; the log has the upstream's last stderr line too.
// The first start's failure is logged at Info, not Warn: Start reports it
// through Health and Stats, and a caller that reports it too (the command
// line names each upstream that could not start) would otherwise say it
// twice; a failed restart, which only the log tells, is a warning.
func (u *upstream) fail(err error) error {
	err = u.publicError(fmt.Errorf("upstream %q: %w", u.cfg.Name, err))
	// A first start's failure is the caller's to report (Start's, or
	// WaitReady's until it returns), so it is logged below the default
	// level; one after WaitReady returned is the proxy's to report.
	u.p.startMu.Lock()
	u.mu.Lock()
	u.state = StateDown
	u.lastErr = strings.TrimPrefix(err.Error(), fmt.Sprintf("upstream %q: ", u.cfg.Name))
	first := u.connects == 1
	u.mu.Unlock()
	late := u.p.reportLate
	u.p.startMu.Unlock()
	level := slog.LevelWarn
	if first && !late {
		level = slog.LevelInfo
	}
	u.p.log.Log(context.Background(), level, "mcp upstream unavailable", "upstream", u.cfg.Name, "error", err, "stderr", u.cfg.Mask(u.stderr.last()))
	return err
}

// watch marks the upstream down when its session ends (process exit,
// connection loss). The next call restarts it.
func (u *upstream) watch(sess *mcp.ClientSession) {
	err := sess.Wait()
	u.mu.Lock()
	if u.sess != sess { // closed on purpose, or already replaced
		u.mu.Unlock()
		return
	}
	u.sess = nil
	u.state = StateDown
	u.crashes++
	msg := "the connection closed"
	if err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		msg = "the connection closed: " + u.cfg.Mask(err.Error())
	}
	u.lastErr = msg
	u.lastTry = time.Time{} // restart right away on next use
	u.mu.Unlock()
	u.p.log.Warn("mcp upstream went down; it restarts on next use", "upstream", u.cfg.Name, "error", msg, "stderr", u.cfg.Mask(u.stderr.last()))
}

// drop closes a session believed to be hung, so the next use restarts it.
func (u *upstream) drop(sess *mcp.ClientSession, why string) {
	u.mu.Lock()
	if u.sess != sess {
		u.mu.Unlock()
		return
	}
	u.sess = nil
	u.state = StateDown
	u.lastErr = why
	u.lastTry = time.Time{}
	u.mu.Unlock()
	u.p.log.Warn("mcp upstream dropped; it restarts on next use", "upstream", u.cfg.Name, "reason", why)
	u.p.bg.Go(func() { sess.Close() })
}

// refresh re-lists the upstream's tools after a tools/list_changed.
func (u *upstream) refresh() {
	u.mu.Lock()
	sess := u.sess
	u.mu.Unlock()
	if sess == nil {
		return
	}
	ctx, cancel := context.WithTimeout(u.p.life, u.p.cfg.timeout())
	defer cancel()
	tools, err := listAll(ctx, sess)
	if err != nil {
		u.p.log.Warn("mcp upstream: refreshing tools failed", "upstream", u.cfg.Name, "error", err)
		return
	}
	u.p.importTools(u, tools)
}

// handler is the executor handler of one upstream tool. An upstream result
// with isError is returned as the value of a tool error, so the executor
// counts a tool_error and the proxy still relays the upstream's content.
func (u *upstream) handler(tool string) executor.Handler {
	return func(ctx context.Context, args json.RawMessage) (any, error) {
		res, err := u.call(ctx, tool, args)
		if err != nil {
			return nil, err
		}
		u.p.mapContent(u, res.Content)
		if res.IsError {
			return res, upstreamToolError{res}
		}
		return res, nil
	}
}

// upstreamToolError is an upstream's own isError result.
type upstreamToolError struct{ res *mcp.CallToolResult }

func (e upstreamToolError) Error() string {
	var parts []string
	for _, c := range e.res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		return "the upstream tool reported an error"
	}
	return strings.Join(parts, "\n")
}

// call forwards one tools/call. ctx carries the executor's per-call timeout
// and, when the call comes from an MCP client, its origin: the client's
// progress token is replaced by one of the proxy's own (mapped back when the
// upstream reports progress), log messages of the upstream go to the calling
// client meanwhile, and the client's cancellation cancels ctx, which the SDK
// turns into notifications/cancelled to the upstream. A timeout checks the
// upstream with a ping and drops it when the ping fails too, so a hung
// server is restarted on next use.
func (u *upstream) call(ctx context.Context, tool string, args []byte) (*mcp.CallToolResult, error) {
	params := &mcp.CallToolParams{Name: tool, Arguments: rawArgs(args)}
	ctx, span := traceUpstream(ctx, u.cfg.Name, relayed{method: "tools/call", target: target{tool: tool}, params: params})
	defer span.End()
	sess, err := u.session(ctx)
	if err != nil {
		failUpstream(ctx, span, err)
		return nil, err
	}
	traceSession(span, sess)
	settle := func() {}
	if o := originOf(ctx); o != nil {
		tok := u.p.relay.begin(u, o)
		defer u.p.relay.end(u, o, tok)
		if o.token != nil {
			params.SetProgressToken(tok)
			settle = func() { u.p.relay.settle(tok) }
		}
	}
	u.mu.Lock()
	u.calls++
	u.mu.Unlock()
	res, err := sess.CallTool(ctx, params)
	if err == nil {
		if res != nil && res.IsError {
			toolErrorUpstream(span)
		}
		settle()
		return res, nil
	}
	failUpstream(ctx, span, err)
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		// Tracked by bg, so that Close waits for it: its drop may start a
		// background close, which must not race Close's Wait.
		u.p.bg.Go(func() { u.checkAlive(sess) })
		return nil, fmt.Errorf("upstream %q did not answer %q in time (timeout)", u.cfg.Name, tool)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case connectionLost(err) || sess != u.current():
		u.awaitEnd(ctx, sess) // so that its last stderr line is in the log
		u.p.log.Warn("mcp upstream went down during a call", "upstream", u.cfg.Name, "tool", tool, "stderr", u.stderr.last())
		return nil, u.publicError(fmt.Errorf("upstream %q went down during the call to %q: %w; it restarts on next use", u.cfg.Name, tool, err))
	}
	return nil, u.publicError(fmt.Errorf("upstream %q refused the call to %q: %w", u.cfg.Name, tool, err))
}

// connectionLost reports whether err says the upstream's connection is
// gone: the SDK's ErrConnectionClosed, or what a crashed stdio server leaves
// (EOF on its stdout, a closed or broken pipe to its stdin) and a dropped
// HTTP connection. A call that gets one of these was not refused by the
// upstream: the upstream went down.
func connectionLost(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// awaitEnd waits, briefly, for a session whose connection was lost to end:
// for a stdio server that means its process was reaped and its stderr read
// to the end, so the error can quote its last line (a crash's reason is
// usually there, written just before it exited).
func (u *upstream) awaitEnd(ctx context.Context, sess *mcp.ClientSession) {
	if u.cfg.URL != "" {
		return // no process, no stderr
	}
	done := make(chan struct{})
	go func() { _ = sess.Wait(); close(done) }()
	t := time.NewTimer(endWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// endWait bounds awaitEnd: the SDK gives a child that does not exit after
// its stdin closed 2 s before it signals it.
const endWait = 3 * time.Second

func (u *upstream) checkAlive(sess *mcp.ClientSession) {
	ctx, cancel := context.WithTimeout(u.p.life, 2*time.Second)
	defer cancel()
	if u.cfg.URL != "" {
		if ir := sess.InitializeResult(); ir != nil && ir.ProtocolVersion >= statelessProtocol {
			// No ping in this protocol: what the SDK's Ping sends is
			// refused, which would drop a healthy upstream. Whether its
			// server answers at all is what can be asked.
			if err := u.reachable(ctx); err != nil {
				u.drop(sess, "it stopped answering (a call timed out and its server did not answer)")
			}
			return
		}
	}
	if err := sess.Ping(ctx, nil); err != nil {
		u.drop(sess, "it stopped answering (a call timed out and a ping failed)")
	}
}

// reachable reports whether an HTTP upstream's server answers at all: a
// HEAD request to its URL, any HTTP status meaning yes (405 included), a
// refused or cut connection or a timeout no. Not an MCP ping: protocol
// 2026-07-28 has none, and what the SDK's Ping sends such a server is
// refused before it is read.
func (u *upstream) reachable(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u.cfg.URL, nil)
	if err != nil {
		return err
	}
	resp, err := u.httpClient().Do(req)
	if err != nil {
		// The cause without the URL, which may carry a key.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			return ue.Err
		}
		return err
	}
	resp.Body.Close()
	return nil
}

// httpClient is the client an HTTP upstream is reached with: its headers
// on every request.
func (u *upstream) httpClient() *http.Client {
	if len(u.cfg.Headers) == 0 {
		return http.DefaultClient
	}
	return &http.Client{Transport: headerTransport{headers: u.cfg.Headers, base: http.DefaultTransport}}
}

func (u *upstream) current() *mcp.ClientSession {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.sess
}

func (u *upstream) close() {
	u.mu.Lock()
	sess := u.sess
	u.sess = nil
	u.state = StateDown
	u.lastErr = "closed"
	u.mu.Unlock()
	if sess != nil {
		sess.Close()
	}
}

func listAll(ctx context.Context, sess *mcp.ClientSession) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// rawArgs passes arguments through unchanged.
type rawArgs []byte

func (r rawArgs) MarshalJSON() ([]byte, error) {
	if len(bytes.TrimSpace(r)) == 0 {
		return []byte("{}"), nil
	}
	return r, nil
}

// tailWriter keeps the last bytes a child wrote to stderr, for error messages.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > w.max {
		w.buf = append([]byte(nil), w.buf[len(w.buf)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailWriter) reset() {
	w.mu.Lock()
	w.buf = nil
	w.mu.Unlock()
}

// last returns the last line the child wrote to stderr, for the log only:
// it is the upstream's own text, which may hold anything (secrets it
// printed, words chosen to steer a model), so it never goes into an error a
// client or the model reads. URL query strings and user info are redacted
// (publicText) and the line is cut at 300 bytes.
func (w *tailWriter) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := strings.TrimSpace(string(w.buf))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return publicText(strings.TrimSpace(s))
}

// urlSecrets matches a URL's user info, query string and fragment.
var urlSecrets = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)([^/\s"'@<>]*@)?([^\s"'?#<>]*)([?#][^\s"'<>]*)?`)

// publicText removes from s what a client or the model must not read of an
// upstream's address: a URL's query string and fragment (tokens and API
// keys travel there) and its user info, leaving "?..." where a query was.
func publicText(s string) string {
	return urlSecrets.ReplaceAllStringFunc(s, func(m string) string {
		sub := urlSecrets.FindStringSubmatch(m)
		out := sub[1] + sub[3]
		if sub[4] != "" {
			out += "?..."
		}
		return out
	})
}

// publicError is err with its text made public (Upstream.mask: the
// upstream's secrets and URL secrets cut); errors.Is and errors.As still
// see err.
func (u *upstream) publicError(err error) error {
	return &redacted{msg: u.cfg.Mask(err.Error()), err: err}
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }

// headerTransport sends an upstream's configured headers ([Upstream.Headers])
// with every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// streamLife connects a transport whose stream lives in the context it is
// connected with (SSE: the GET that carries every reply) under the proxy's
// lifetime instead: the connect context ends when connecting does. The
// connect context still bounds connecting, and closing the connection ends
// the stream.
type streamLife struct {
	mcp.Transport
	life context.Context
}

func (t streamLife) Connect(ctx context.Context) (mcp.Connection, error) {
	sctx, cancel := context.WithCancel(t.life)
	stop := context.AfterFunc(ctx, cancel)
	c, err := t.Transport.Connect(sctx)
	if !stop() || err != nil { // connecting outlasted ctx, or failed
		cancel()
		if err == nil {
			c.Close()
			err = ctx.Err()
		}
		return nil, err
	}
	return streamConn{c, cancel}, nil
}

// streamConn ends its stream's context when closed.
type streamConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c streamConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}
