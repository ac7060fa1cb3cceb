package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/registry"
)

// What the proxy relays besides tools: upstream resources, resource
// templates and prompts, namespaced like tools and served by the proxy's own
// SDK server (so list_changed reaches every client); reads, prompt gets,
// completions and subscriptions routed to the owning upstream; progress and
// log messages of upstream calls sent to the client that made the call.

// Resource URIs keep their scheme; the upstream's name and the separator go
// right after "scheme:" (and "//" when present):
//
//	demo://resource/static/document/a.md  ->  demo://everything__resource/static/document/a.md
//	file:///srv/notes/a.txt               ->  file://fs__/srv/notes/a.txt
//	urn:isbn:123                          ->  urn:books__isbn:123
//
// The mapping is reversible (names.go: served and owner).
var uriScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

func splitURI(uri string) (head, rest string, ok bool) {
	m := uriScheme.FindString(uri)
	if m == "" {
		return "", "", false
	}
	head, rest = m, uri[len(m):]
	if strings.HasPrefix(rest, "//") {
		head, rest = head+"//", rest[2:]
	}
	return head, rest, true
}

// proxyURI maps an upstream's URI (or URI template) to the proxy's.
func (p *Proxy) proxyURI(u *upstream, uri string) (string, bool) {
	head, rest, ok := splitURI(uri)
	if !ok {
		return "", false
	}
	return head + p.served(u, rest), true
}

// mapContent rewrites the resource URIs in an upstream's content (resource
// links, embedded resources) to proxy URIs, so that a client can read them
// through the proxy.
func (p *Proxy) mapContent(u *upstream, content []mcp.Content) {
	for _, c := range content {
		switch c := c.(type) {
		case *mcp.ResourceLink:
			if m, ok := p.proxyURI(u, c.URI); ok {
				c.URI = m
			}
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				if m, ok := p.proxyURI(u, c.Resource.URI); ok {
					c.Resource.URI = m
				}
			}
		}
	}
}

// upstreamURI maps a proxy URI back to its upstream and the upstream's URI.
func (p *Proxy) upstreamURI(uri string) (*upstream, string, bool) {
	head, rest, ok := splitURI(uri)
	if !ok {
		return nil, "", false
	}
	u, orig, ok := p.owner(rest)
	if !ok {
		return nil, "", false
	}
	return u, head + orig, true
}

// upstreamPrompt maps a namespaced prompt name to its upstream and name.
func (p *Proxy) upstreamPrompt(name string) (*upstream, string, bool) {
	return p.owner(name)
}

// importResources lists the upstream's resources and resource templates (if
// it declares resources) and serves them under proxy URIs, removing the ones
// it no longer lists. A listing that fails changes nothing: what was served
// stays served (as a failed tools refresh keeps the tools).
// force lists even when the upstream did not declare resources (it sent
// resources/list_changed, so it has them now).
func (p *Proxy) importResources(ctx context.Context, u *upstream, sess *mcp.ClientSession, force bool) {
	var resources []*mcp.Resource
	var templates []*mcp.ResourceTemplate
	if caps := sessCaps(sess); force || caps != nil && caps.Resources != nil {
		for r, err := range sess.Resources(ctx, nil) {
			if err != nil {
				p.log.Warn("mcp upstream: listing resources failed; keeping the ones served", "upstream", u.cfg.Name, "error", err)
				return
			}
			resources = append(resources, r)
		}
		for t, err := range sess.ResourceTemplates(ctx, nil) {
			if err != nil {
				p.log.Warn("mcp upstream: listing resource templates failed; keeping the ones served", "upstream", u.cfg.Name, "error", err)
				return
			}
			templates = append(templates, t)
		}
	}
	held := p.holdOthers(otherSource{u, registry.PinResource}, p.resourcePinDefs(u, resources, templates))
	var uris, tmpls []string
	for _, r := range resources {
		c := *r
		uri, ok := p.proxyURI(u, r.URI)
		if ok && held[pinKey(registry.PinResource, uri)] {
			continue // held by its pin until approved
		}
		if !ok {
			p.log.Warn("mcp upstream resource left out: its URI has no scheme to namespace it under", "upstream", u.cfg.Name, "uri", r.URI)
			continue
		}
		if _, err := url.Parse(uri); err != nil {
			p.log.Warn("mcp upstream resource left out: its namespaced URI does not parse", "upstream", u.cfg.Name, "uri", r.URI, "proxyURI", uri, "error", err)
			continue
		}
		c.URI = uri
		p.server.AddResource(&c, p.readResource)
		uris = append(uris, uri)
	}
	for _, t := range templates {
		c := *t
		tmpl, ok := p.proxyURI(u, t.URITemplate)
		if ok && held[pinKey(registry.PinResourceTemplate, tmpl)] {
			continue // held by its pin until approved
		}
		if !ok {
			p.log.Warn("mcp upstream resource template left out: it has no scheme to namespace it under", "upstream", u.cfg.Name, "uriTemplate", t.URITemplate)
			continue
		}
		if !addTemplate(p.server, &c, tmpl, p.readResource) {
			p.log.Warn("mcp upstream resource template left out: its namespaced template does not parse", "upstream", u.cfg.Name, "uriTemplate", t.URITemplate, "proxyTemplate", tmpl)
			continue
		}
		tmpls = append(tmpls, tmpl)
	}
	u.mu.Lock()
	oldURIs, oldTmpls := u.resources, u.templates
	u.resources, u.templates = uris, tmpls
	u.mu.Unlock()
	if gone := missing(oldURIs, uris); len(gone) > 0 {
		p.server.RemoveResources(gone...)
	}
	if gone := missing(oldTmpls, tmpls); len(gone) > 0 {
		p.server.RemoveResourceTemplates(gone...)
	}
}

// addTemplate serves a template under the proxy's URI template; the SDK
// panics on a template it cannot parse, which is reported as false.
func addTemplate(s *mcp.Server, t *mcp.ResourceTemplate, tmpl string, h mcp.ResourceHandler) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	t.URITemplate = tmpl
	s.AddResourceTemplate(t, h)
	return true
}

// importPrompts lists the upstream's prompts (if it declares prompts) and
// serves them as UPSTREAM__NAME (force, and a failed listing: as for
// importResources).
func (p *Proxy) importPrompts(ctx context.Context, u *upstream, sess *mcp.ClientSession, force bool) {
	var prompts []*mcp.Prompt
	if caps := sessCaps(sess); force || caps != nil && caps.Prompts != nil {
		for pr, err := range sess.Prompts(ctx, nil) {
			if err != nil {
				p.log.Warn("mcp upstream: listing prompts failed; keeping the ones served", "upstream", u.cfg.Name, "error", err)
				return
			}
			prompts = append(prompts, pr)
		}
	}
	held := p.holdOthers(otherSource{u, registry.PinPrompt}, p.promptPinDefs(u, prompts))
	var names []string
	for _, pr := range prompts {
		c := *pr
		c.Name = p.served(u, pr.Name)
		if held[pinKey(registry.PinPrompt, c.Name)] {
			continue // held by its pin until approved
		}
		p.server.AddPrompt(&c, p.getPrompt)
		names = append(names, c.Name)
	}
	u.mu.Lock()
	old := u.prompts
	u.prompts = names
	u.mu.Unlock()
	if gone := missing(old, names); len(gone) > 0 {
		p.server.RemovePrompts(gone...)
	}
}

func sessCaps(sess *mcp.ClientSession) *mcp.ServerCapabilities {
	if r := sess.InitializeResult(); r != nil {
		return r.Capabilities
	}
	return nil
}

// missing returns the elements of old not in cur.
func missing(old, cur []string) []string {
	var out []string
	for _, s := range old {
		if !slices.Contains(cur, s) {
			out = append(out, s)
		}
	}
	return out
}

// refreshResources and refreshPrompts follow an upstream's list_changed; the
// SDK then sends list_changed to the proxy's clients.
func (u *upstream) refreshResources() {
	if sess := u.current(); sess != nil {
		ctx, cancel := context.WithTimeout(u.p.life, u.p.cfg.timeout())
		defer cancel()
		u.p.importResources(ctx, u, sess, true)
	}
}

func (u *upstream) refreshPrompts() {
	if sess := u.current(); sess != nil {
		ctx, cancel := context.WithTimeout(u.p.life, u.p.cfg.timeout())
		defer cancel()
		u.p.importPrompts(ctx, u, sess, true)
	}
}

// resourceNotFound is the spec's error for a URI no upstream serves: -32602
// with the URI in data since SEP-2164 (what the SDK's ResourceNotFoundError
// returns), with a message that says why.
func resourceNotFound(uri, why string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found: " + why, Data: data}
}

// readResource reads a proxy URI from its upstream; the contents' URIs are
// mapped back to proxy URIs.
func (p *Proxy) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	u, orig, ok := p.upstreamURI(req.Params.URI)
	if !ok {
		return nil, resourceNotFound(req.Params.URI, "the URI names no upstream (resources are listed as scheme://UPSTREAM"+p.cfg.separator()+"...)")
	}
	params := *req.Params
	params.URI = orig
	res, err := onUpstream(ctx, p, u, relayed{method: "resources/read", target: target{uri: orig}, params: &params}, func(ctx context.Context, sess *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		return sess.ReadResource(ctx, &params)
	})
	if err != nil {
		return nil, err
	}
	for _, c := range res.Contents {
		if c != nil {
			if m, ok := p.proxyURI(u, c.URI); ok {
				c.URI = m
			}
		}
	}
	return res, nil
}

// onUpstream sends one request to u's session under the proxy's timeout, in
// a client span whose trace context goes in r.params' _meta (telemetry.go);
// an upstream's JSON-RPC error keeps its code and names the upstream.
func onUpstream[R any](ctx context.Context, p *Proxy, u *upstream, r relayed, call func(context.Context, *mcp.ClientSession) (R, error)) (R, error) {
	var zero R
	ctx, span := traceUpstream(ctx, u.cfg.Name, r)
	defer span.End()
	sess, err := u.session(ctx)
	if err != nil {
		failUpstream(ctx, span, err)
		return zero, err
	}
	traceSession(span, sess)
	ctx, cancel := context.WithTimeout(ctx, p.cfg.timeout())
	defer cancel()
	res, err := call(ctx, sess)
	if err != nil {
		failUpstream(ctx, span, err)
		if ctx.Err() == nil && connectionLost(err) {
			u.awaitEnd(ctx, sess) // so that its last stderr line is in
			u.p.log.Warn("mcp upstream went down during a request", "upstream", u.cfg.Name, "method", r.method, "stderr", u.stderr.last())
			return zero, u.publicError(fmt.Errorf("upstream %q went down during %s: %w; it restarts on next use", u.cfg.Name, r.method, err))
		}
		return zero, upstreamErr(u, err)
	}
	return res, nil
}

// upstreamErr passes an upstream's JSON-RPC error on with its code, naming
// the upstream; other failures (transport) become internal errors.
func upstreamErr(u *upstream, err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return &jsonrpc.Error{Code: je.Code, Message: "upstream " + strconv.Quote(u.cfg.Name) + ": " + je.Message, Data: je.Data}
	}
	return u.publicError(fmt.Errorf("upstream %q: %w", u.cfg.Name, err))
}

// getPrompt gets a namespaced prompt from its upstream.
func (p *Proxy) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	u, orig, ok := p.upstreamPrompt(req.Params.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", req.Params.Name)}
	}
	params := *req.Params
	params.Name = orig
	res, err := onUpstream(ctx, p, u, relayed{method: "prompts/get", target: target{prompt: orig}, params: &params}, func(ctx context.Context, sess *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		return sess.GetPrompt(ctx, &params)
	})
	if err != nil {
		return nil, err
	}
	for _, m := range res.Messages {
		if m != nil {
			p.mapContent(u, []mcp.Content{m.Content})
		}
	}
	if err := p.checkPromptText(req.Params.Name, res); err != nil {
		return nil, err
	}
	return res, nil
}

// complete routes completion/complete by its reference: a namespaced prompt
// or a proxy resource template.
func (p *Proxy) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	if req.Params == nil || req.Params.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion: no ref"}
	}
	asked := *req.Params.Ref // as the client named it, for the error
	ref := asked
	var u *upstream
	var ok bool
	var why string
	switch ref.Type {
	case "ref/prompt":
		u, ref.Name, ok = p.upstreamPrompt(asked.Name)
		why = fmt.Sprintf("completion: prompt %q names no upstream (prompts are listed as UPSTREAM%sNAME)", asked.Name, p.cfg.separator())
	case "ref/resource":
		u, ref.URI, ok = p.upstreamURI(asked.URI)
		why = fmt.Sprintf("completion: resource template %q names no upstream (templates are listed as scheme://UPSTREAM%s...)", asked.URI, p.cfg.separator())
	default:
		why = fmt.Sprintf("completion: ref type %q is not ref/prompt or ref/resource", asked.Type)
	}
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: why}
	}
	params := *req.Params
	params.Ref = &ref
	var t target
	if ref.Type == "ref/prompt" {
		t.prompt = ref.Name
	}
	return onUpstream(ctx, p, u, relayed{method: "completion/complete", target: t, params: &params}, func(ctx context.Context, sess *mcp.ClientSession) (*mcp.CompleteResult, error) {
		return sess.Complete(ctx, &params)
	})
}

// Subscriptions. A proxy URI subscribes at its upstream. A URI that names no
// upstream (the client may have it from elsewhere) subscribes at every
// upstream that supports subscriptions, and their updates of that URI are
// relayed under it; with none, the subscription is refused. An upstream is
// subscribed once per URI, whatever the number of client sessions, and
// re-subscribed after a restart.

type subKey struct {
	up  *upstream
	uri string // the upstream's URI
}

func (p *Proxy) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	return p.changeSubscription(ctx, req.Session, req.Params.URI, true)
}

func (p *Proxy) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	return p.changeSubscription(ctx, req.Session, req.Params.URI, false)
}

func (p *Proxy) changeSubscription(ctx context.Context, ss *mcp.ServerSession, uri string, on bool) error {
	var keys []subKey
	if u, orig, ok := p.upstreamURI(uri); ok {
		keys = append(keys, subKey{u, orig})
	} else {
		for _, u := range p.ups {
			if sess := u.current(); sess != nil {
				if caps := sessCaps(sess); caps != nil && caps.Resources != nil && caps.Resources.Subscribe {
					keys = append(keys, subKey{u, uri})
				}
			}
		}
		if len(keys) == 0 && on {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("cannot subscribe to %q: it names no upstream and no upstream supports subscriptions", uri)}
		}
	}
	var errs []error
	done := 0
	for _, k := range keys {
		if err := p.relay.subscription(ctx, k, ss, on); err != nil {
			errs = append(errs, err)
			continue
		}
		done++
	}
	if done == 0 && len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

// resubscribe renews an upstream's subscriptions on a new session.
func (p *Proxy) resubscribe(ctx context.Context, u *upstream, sess *mcp.ClientSession) {
	for _, uri := range p.relay.subscribed(u) {
		if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			p.log.Warn("mcp upstream: renewing a subscription failed", "upstream", u.cfg.Name, "uri", uri, "error", err)
		}
	}
}

// resourceUpdated relays an upstream's notifications/resources/updated under
// the proxy URI and, for clients that subscribed to the upstream's own URI,
// under that one. The SDK sends each only to the sessions subscribed to it.
func (p *Proxy) resourceUpdated(ctx context.Context, u *upstream, params *mcp.ResourceUpdatedNotificationParams) {
	if params == nil {
		return
	}
	if uri, ok := p.proxyURI(u, params.URI); ok {
		_ = p.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri, Meta: params.Meta})
	}
	_ = p.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: params.URI, Meta: params.Meta})
}

// send delivers a notification for o: with the client request's context
// while the request is open (so that, over streamable HTTP, it travels on the
// request's stream), and once the request has been answered (or is answered
// while sending) with a background context, which sends it on the session's
// general stream.
func (o *origin) send(f func(context.Context) error) {
	if o.ctx.Err() == nil && f(o.ctx) == nil {
		return
	}
	if o.ctx.Err() != nil {
		_ = f(context.Background())
	}
}

// relay holds the state of what flows back from upstreams: subscriptions,
// progress tokens and calls in flight.
type relay struct {
	mu       sync.Mutex
	next     uint64
	subs     map[subKey]map[*mcp.ServerSession]bool
	tokens   map[string]*origin            // the proxy's progress token -> the client's call
	final    map[string]chan struct{}      // closed when a token's progress reaches its total
	inflight map[*upstream]map[*origin]int // calls in flight per upstream
}

func newRelay() *relay {
	return &relay{subs: map[subKey]map[*mcp.ServerSession]bool{}, tokens: map[string]*origin{},
		final: map[string]chan struct{}{}, inflight: map[*upstream]map[*origin]int{}}
}

// subscription adds or removes a session's subscription, subscribing or
// unsubscribing the upstream when the first session comes or the last goes.
func (r *relay) subscription(ctx context.Context, k subKey, ss *mcp.ServerSession, on bool) error {
	r.mu.Lock()
	sessions := r.subs[k]
	first := on && len(sessions) == 0
	last := !on && len(sessions) == 1 && sessions[ss]
	r.mu.Unlock()
	if first || last {
		var err error
		if first {
			params := &mcp.SubscribeParams{URI: k.uri}
			_, err = onUpstream(ctx, k.up.p, k.up, relayed{method: "resources/subscribe", target: target{uri: k.uri}, params: params},
				func(ctx context.Context, sess *mcp.ClientSession) (struct{}, error) {
					return struct{}{}, sess.Subscribe(ctx, params)
				})
		} else {
			params := &mcp.UnsubscribeParams{URI: k.uri}
			_, err = onUpstream(ctx, k.up.p, k.up, relayed{method: "resources/unsubscribe", target: target{uri: k.uri}, params: params},
				func(ctx context.Context, sess *mcp.ClientSession) (struct{}, error) {
					return struct{}{}, sess.Unsubscribe(ctx, params)
				})
		}
		if err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		if r.subs[k] == nil {
			r.subs[k] = map[*mcp.ServerSession]bool{}
		}
		r.subs[k][ss] = true
	} else if r.subs[k] != nil {
		delete(r.subs[k], ss)
		if len(r.subs[k]) == 0 {
			delete(r.subs, k)
		}
	}
	return nil
}

func (r *relay) subscribed(u *upstream) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k := range r.subs {
		if k.up == u {
			out = append(out, k.uri)
		}
	}
	return out
}

// begin registers a call in flight for o at u and returns the progress token
// the upstream gets instead of the client's.
func (r *relay) begin(u *upstream, o *origin) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	tok := "toolselect-" + strconv.FormatUint(r.next, 10)
	if o.token != nil {
		r.tokens[tok] = o
		r.final[tok] = make(chan struct{})
	}
	if r.inflight[u] == nil {
		r.inflight[u] = map[*origin]int{}
	}
	r.inflight[u][o]++
	return tok
}

// The SDK hands an upstream's notifications to a queue but its reply
// straight to the caller, so the last progress notification the upstream
// sent before its reply can be handled just after the reply. So that it
// reaches the client before the proxy's own reply, a call with a progress
// token waits, after the upstream replied, until the progress reached its
// total or lateWait passed; notifications later still are relayed for
// lateProgress (after the reply, on the session's general stream) rather
// than dropped.
const (
	lateWait     = 100 * time.Millisecond
	lateProgress = 500 * time.Millisecond
)

// settle waits for the last progress of tok (see lateWait).
func (r *relay) settle(tok string) {
	r.mu.Lock()
	ch := r.final[tok]
	r.mu.Unlock()
	if ch == nil {
		return
	}
	t := time.NewTimer(lateWait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

func (r *relay) end(u *upstream, o *origin, tok string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tokens[tok]; ok {
		time.AfterFunc(lateProgress, func() {
			r.mu.Lock()
			delete(r.tokens, tok)
			delete(r.final, tok)
			r.mu.Unlock()
		})
	}
	if r.inflight[u][o]--; r.inflight[u][o] <= 0 {
		delete(r.inflight[u], o)
	}
}

// progress sends an upstream's progress to the client under the client's
// own token, on the client request's stream.
func (r *relay) progress(params *mcp.ProgressNotificationParams) {
	if params == nil {
		return
	}
	tok, _ := params.ProgressToken.(string)
	r.mu.Lock()
	o := r.tokens[tok]
	final := r.final[tok]
	r.mu.Unlock()
	if o == nil || o.session == nil {
		return // a notification later than lateProgress
	}
	o.send(func(ctx context.Context) error {
		return o.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: o.token, Progress: params.Progress, Total: params.Total, Message: params.Message,
		})
	})
	if params.Total > 0 && params.Progress >= params.Total && final != nil {
		r.mu.Lock()
		if r.final[tok] == final {
			close(final)
			r.final[tok] = nil
		}
		r.mu.Unlock()
	}
}

// log sends an upstream's log message to the clients with a call in flight
// at that upstream (on the call's stream), or to every client when none has:
// logging is per session upstream, and the proxy holds one session per
// upstream for all its clients. The logger is prefixed with the upstream's
// name. Each client gets the messages at or above the level it set
// (logging/setLevel); a client that set none gets none (the SDK's rule).
func (r *relay) log(u *upstream, params *mcp.LoggingMessageParams, server *mcp.Server) {
	if params == nil {
		return
	}
	msg := *params
	msg.Logger = u.cfg.Name
	if params.Logger != "" {
		msg.Logger += "/" + params.Logger
	}
	r.mu.Lock()
	var targets []*origin
	for o := range r.inflight[u] {
		targets = append(targets, o)
	}
	r.mu.Unlock()
	if len(targets) > 0 {
		for _, o := range targets {
			if o.session != nil {
				o.send(func(ctx context.Context) error { return o.session.Log(ctx, &msg) })
			}
		}
		return
	}
	for ss := range server.Sessions() {
		_ = ss.Log(context.Background(), &msg)
	}
}
