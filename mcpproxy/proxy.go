package mcpproxy

import (
	"github.com/toolselect/toolselect"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/executor/metatool"
	"github.com/toolselect/toolselect/internal/statestore"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// version is reported to clients and upstreams as the implementation
// version: toolselect's release, from the VERSION file.
var version = toolselect.Version()

// Options holds collaborators of a Proxy. A nil *Options means defaults.
type Options struct {
	// Logger receives warnings (refused tools, upstream failures); default
	// discards.
	Logger *slog.Logger
	// FindTool tunes the ranking behind find_tool and the "top" exposure
	// mode (scorer, minimum score, related tools...), as
	// metatool.New; nil means rank's defaults (BM25).
	FindTool *rank.Options
	// CountTokens counts the tokens of a text for the stats; default cl100k.
	CountTokens func(string) int
}

// route says where a namespaced tool is served.
type route struct {
	up *upstream // nil for a catalog-only tool
}

// Proxy imports upstream MCP tools, resources and prompts and serves them
// through meta-tools. Create it with New, fill it with Start, serve Server
// (or ServeStdio / HTTPHandler), and Close it to stop the upstreams.
type Proxy struct {
	cfg    Config
	log    *slog.Logger
	count  func(string) int
	reg    *registry.Registry
	ex     *executor.Executor
	meta   *metatool.Tools // find_tool / call_tool over ex
	server *mcp.Server
	stats  *recorder
	// metrics are the Prometheus instruments served at /metrics (telemetry.go).
	metrics *metrics
	// ownSessions are the server sessions of the proxy's own in-memory
	// clients (Stats): not traced (telemetry.go).
	ownSessions sync.Map // *mcp.ServerSession -> struct{}
	// pins, when configured, holds changed tools (pins.go); held maps a
	// namespaced name to why it is held (and its definition, to serve it
	// once approved), flagged to the tools whose definition text carries
	// hidden text; pinsErr is the last error reading the pin file again.
	pins    *registry.Pins
	held    map[string]*heldTool
	flagged map[string]registry.PinCheck
	pinsErr string
	// state is the shared store the pins live in ([Config.State]), nil
	// without one.
	state *statestore.Redis
	// learn is the ranking feedback sessions teach ([Config.Feedback]),
	// nil when the proxy learns nothing (feedback.go).
	learn *learning
	// draining is set when an HTTP proxy was told to stop: /readyz says so.
	draining atomic.Bool
	// others are the prompt and resource keys last checked per source (pins.go).
	others map[otherSource][]string
	// pinnedBefore: the first pinning is done ([Config.PinsNew] "review"
	// holds what is new from now on); recheckingPins: held tools are being
	// checked against an edited pin file. Both under importMu.
	pinnedBefore, recheckingPins bool

	relay *relay
	// importMu serialises changes to the imported tools: imports (at
	// connect and after list_changed), catalog loads, and the release of
	// held tools an approval lets through.
	importMu sync.Mutex

	ups    []*upstream
	byName map[string]*upstream
	bg     sync.WaitGroup // background closes of dropped upstream sessions
	// life is the proxy's own context: background work (refreshes after
	// list_changed, liveness pings) runs under it, and Close cancels it.
	life context.Context
	stop context.CancelFunc

	// started closes when every upstream's first connect has finished
	// (launch). reportLate (under startMu): WaitReady returned, so a first
	// start failing from now on is the proxy's to report.
	started    chan struct{}
	startMu    sync.Mutex
	reportLate bool

	mu      sync.Mutex
	routes  map[string]route
	exposed map[string]uint64 // tools served in full -> entry Seq
	catalog catalogCount
	closed  bool
}

// catalogCount caches the token count of the full catalog per registry generation.
type catalogCount struct {
	gen    uint64
	valid  bool
	tokens int
}

// New checks the configuration and builds a Proxy. Nothing is started.
func New(cfg *Config, opts *Options) (*Proxy, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.CountTokens == nil {
		o.CountTokens = countTokens
	}
	reg := registry.New(nil)
	p := &Proxy{
		cfg:     c,
		log:     o.Logger,
		count:   o.CountTokens,
		reg:     reg,
		stats:   newRecorder(),
		relay:   newRelay(),
		byName:  map[string]*upstream{},
		routes:  map[string]route{},
		started: make(chan struct{}),
		exposed: map[string]uint64{},
	}
	// One executor runs every call: each upstream tool is a handler,
	// find_tool / call_tool are its meta-tools, and its policy decides what
	// is findable and callable: the per-tool rules (permissions) first,
	// then the destructive mode for the tools no rule names: destructive
	// tools only when allowed, or, with "ask", findable and asked about
	// through the client (an approver given, registry.Eligibility.Decide
	// says ask). The mode is the rules' Unsafe, so that an approver given
	// for ask rules does not make the other destructive tools askable.
	rules := c.Permissions
	rules.Unsafe = c.destructive()
	exOpts := &executor.Options{AllowUnsafe: c.destructive() == destructiveAllow, Timeout: c.timeout(), Hint: proxyHint,
		Caller: registry.Eligibility{Rules: rules}}
	if c.destructive() == destructiveAsk || len(c.Permissions.Ask) > 0 {
		exOpts.Approver = p.elicitApprover
	}
	p.ex = executor.New(reg, exOpts)
	findOpts := o.FindTool
	var fb *rank.Feedback
	if c.learns() {
		// find_tool ranks with what the sessions' selections taught
		// (feedback.go), in the Feedback given if any.
		fo := rank.Options{}
		if findOpts != nil {
			fo = *findOpts
		}
		if fo.Feedback == nil {
			fo.Feedback = rank.NewFeedback(nil)
		}
		fb, findOpts = fo.Feedback, &fo
	}
	p.meta = metatool.New(p.ex, findOpts)
	p.life, p.stop = context.WithCancel(context.Background())
	for _, u := range c.Upstreams {
		up := newUpstream(p, u)
		p.ups = append(p.ups, up)
		p.byName[u.Name] = up
	}
	p.server = mcp.NewServer(&mcp.Implementation{Name: "toolselect", Title: "toolselect MCP proxy", Version: version}, &mcp.ServerOptions{
		Instructions: p.instructions(),
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Logging:   &mcp.LoggingCapabilities{},
		},
		SubscribeHandler:   p.subscribe,
		UnsubscribeHandler: p.unsubscribe,
		CompletionHandler:  p.complete,
	})
	p.server.AddReceivingMiddleware(p.middleware)
	// Added last, so outermost: the server span covers the whole request.
	p.server.AddReceivingMiddleware(p.traceMiddleware)
	p.metrics = newMetrics(p)
	p.stats.m = p.metrics
	if err := p.loadPins(); err != nil {
		return nil, err
	}
	if fb != nil {
		if err := p.openFeedback(fb); err != nil {
			if p.state != nil {
				p.state.Close()
			}
			return nil, fmt.Errorf("feedback: %w", err)
		}
	}
	if !p.topMode() {
		p.server.AddTool(findToolDef(), p.handleMeta)
		p.server.AddTool(callToolDef(p.cfg.destructive() != destructiveDeny || len(p.cfg.Permissions.Allow)+len(p.cfg.Permissions.Ask) > 0), p.handleMeta)
	}
	p.server.AddResource(&mcp.Resource{
		URI: StatsURI, Name: "stats", Title: "toolselect proxy statistics", MIMEType: "application/json",
		Description: "Tools per upstream, tokens of the full catalog against what the agent sees, find_tool and call_tool counts and latencies.",
	}, p.readStats)
	return p, nil
}

func (p *Proxy) topMode() bool { return p.cfg.Expose.Mode == ExposeTop }

func (p *Proxy) instructions() string {
	if p.topMode() {
		return "The tools listed are the most relevant ones from a larger catalog for the configured task."
	}
	return "This server fronts a large tool catalog. Call find_tool with a short description of what you need, " +
		"then call_tool with the tool's name and arguments matching its input schema."
}

// Start loads the catalog files and connects every upstream concurrently,
// importing their tools. An upstream that cannot be reached is reported by
// Health and Stats (and logged at Info: the caller decides how to tell it);
// it does not fail Start (its tools are simply absent until it comes back).
// Start fails only on an unreadable catalog file.
func (p *Proxy) Start(ctx context.Context) error {
	if err := p.launch(ctx); err != nil {
		return err
	}
	<-p.started
	return nil
}

// Launch is Start without the wait: it loads the catalog files, begins
// connecting every upstream, and returns, so that one slow or hung upstream
// holds up nothing. Each upstream's tools join when it is ready (clients
// get notifications/tools/list_changed); until then its state is
// "starting". [Proxy.WaitReady] waits for the first thing to serve. An
// upstream whose first start fails after WaitReady returned is logged at
// warn (before, at info: WaitReady's caller reports it). Call Start or
// Launch once.
func (p *Proxy) Launch(ctx context.Context) error {
	return p.launch(context.WithoutCancel(ctx))
}

// launch loads the catalogs and connects every upstream under ctx in the
// background; p.started closes when every first connect has finished.
func (p *Proxy) launch(ctx context.Context) error {
	p.importMu.Lock()
	for _, path := range p.cfg.Catalogs {
		tools, _, err := registry.LoadCatalogFile(path)
		if err != nil {
			p.importMu.Unlock()
			return fmt.Errorf("catalog: %w", err)
		}
		held := p.holdTools(tools, nil, path)
		tools = slices.DeleteFunc(tools, func(t registry.Tool) bool { return held[t.Name] })
		p.serveCatalogTools(path, tools)
	}
	p.importMu.Unlock()
	// A connect runs under ctx and ends with the proxy (Close).
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.life, cancel)
	var wg sync.WaitGroup
	for _, u := range p.ups {
		u.mu.Lock()
		u.state = StateStarting
		u.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(u.firstDone)
			u.connMu.Lock()
			defer u.connMu.Unlock()
			_ = u.connect(ctx) // in Health and Stats; logged by fail
		}()
	}
	p.bg.Go(func() {
		defer close(p.started)
		defer cancel()
		defer stop()
		wg.Wait()
		p.importMu.Lock()
		p.pinnedBefore = true // what appears from now on is new since the first pinning
		p.syncExposed(ctx)
		p.warnUnmatchedKeep()
		p.warnUnmatchedRules()
		p.importMu.Unlock()
		if p.pins != nil {
			p.bg.Go(p.watchPins)
		}
		if p.state != nil {
			p.bg.Go(p.watchState)
		}
		if p.learn != nil {
			p.bg.Go(p.watchFeedback)
		}
	})
	return nil
}

// startGrace is how long WaitReady waits for the other upstreams once
// there is something to serve: long enough for a server started from an
// installed package or a warm npx cache (under a second) to be served from
// the client's first tools/list, short enough that a hung one does not hold
// the client's initialize (the connect timeout is 30 s). A variable for
// tests.
var startGrace = 5 * time.Second

// WaitReady waits, after [Proxy.Launch], until every upstream's first start
// has finished, or there has been something to serve (an upstream ready, or
// a catalog tool imported) for a few seconds, or ctx ends, and returns what
// [Proxy.Health] returns at that moment: the caller reports the upstreams
// down then; the proxy logs, at warn, every first start that fails
// afterwards. An upstream still starting joins when ready.
func (p *Proxy) WaitReady(ctx context.Context) (upstreams []upstreamStats, tools int) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var serving time.Time // when there was first something to serve
	for {
		select {
		case <-p.started:
		case <-ctx.Done():
		case <-tick.C:
			if !p.anyReady() && p.reg.Len() == 0 {
				continue
			}
			if serving.IsZero() {
				serving = time.Now()
			}
			if time.Since(serving) < startGrace {
				continue
			}
		}
		p.startMu.Lock()
		p.reportLate = true
		ups, n := p.Health()
		p.startMu.Unlock()
		return ups, n
	}
}

// anyReady reports whether an upstream is ready.
func (p *Proxy) anyReady() bool {
	for _, u := range p.ups {
		u.mu.Lock()
		ready := u.state == StateReady
		u.mu.Unlock()
		if ready {
			return true
		}
	}
	return false
}

// serveCatalogTools registers tools of a catalog file: findable, not
// callable (the handler says why). The caller holds importMu.
func (p *Proxy) serveCatalogTools(path string, tools []registry.Tool) {
	for _, err := range p.reg.RegisterValid(tools) {
		p.log.Warn("catalog tool left out", "catalog", path, "error", err)
		p.stats.refusedCatalog(path, err)
	}
	for _, t := range tools {
		if _, ok := p.reg.Get(t.Name); !ok {
			continue
		}
		p.mu.Lock()
		_, taken := p.routes[t.Name]
		if !taken {
			p.routes[t.Name] = route{}
		}
		p.mu.Unlock()
		if !taken {
			_ = p.ex.Handle(t.Name, catalogOnly(t.Name))
		}
	}
}

// Close stops every upstream (child processes are ended) and is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.stop() // background refreshes and pings end now
	var wg sync.WaitGroup
	for _, u := range p.ups {
		wg.Add(1)
		go func() { defer wg.Done(); u.close() }()
	}
	wg.Wait()
	p.bg.Wait()
	if p.learn != nil && p.learn.own {
		p.learn.l.Close()
	}
	if p.state != nil {
		p.state.Close()
	}
	return nil
}

// Server returns the MCP server, to be connected to any SDK transport.
func (p *Proxy) Server() *mcp.Server { return p.server }

// Registry returns the imported catalog. Treat it as read-only.
func (p *Proxy) Registry() *registry.Registry { return p.reg }

// importTools registers an upstream's current tool list, replacing changed
// tools and removing the ones that disappeared, then refreshes the tools
// served in full. Tools whose definition differs from their pin are held
// (pins.go).
func (p *Proxy) importTools(u *upstream, tools []*mcp.Tool) {
	p.importMu.Lock()
	defer p.importMu.Unlock()
	p.syncPinsLocked() // an approval made since the last look counts for this listing
	defs := make([]registry.Tool, 0, len(tools))
	errs := make([]error, len(tools))
	for i, mt := range tools {
		t, err := toolFromMCP(p.served(u, mt.Name), u.cfg.Name, mt)
		if errs[i] = err; err == nil {
			defs = append(defs, t)
		}
	}
	held := p.holdTools(defs, u, "")
	var names, checked []string
	var refused []refusal
	next := 0
	for i, mt := range tools {
		err := errs[i]
		if err == nil {
			t := defs[next]
			next++
			checked = append(checked, t.Name)
			if held[t.Name] {
				continue // held: not imported until approved
			}
			err = p.serveUpstreamTool(u, t)
		}
		if err != nil {
			p.log.Warn("mcp upstream tool left out", "upstream", u.cfg.Name, "tool", mt.Name, "error", err)
			refused = append(refused, refusal{Tool: mt.Name, Reason: err.Error()})
			continue
		}
		names = append(names, p.served(u, mt.Name))
	}
	keep := map[string]bool{}
	for _, n := range checked {
		keep[n] = true
	}
	u.mu.Lock()
	old, oldChecked := u.names, u.checked
	u.names, u.checked, u.listed, u.refused = names, checked, len(tools), refused
	u.mu.Unlock()
	var gone []string
	for _, n := range oldChecked {
		if !keep[n] {
			gone = append(gone, n)
		}
	}
	p.forget(gone)
	served := map[string]bool{}
	for _, n := range names {
		served[n] = true
	}
	for _, n := range old {
		if !served[n] {
			p.reg.Unregister(n)
			p.mu.Lock()
			delete(p.routes, n)
			p.mu.Unlock()
		}
	}
	p.syncExposed(p.life)
	p.relayToolsChanged()
}

// relayToolsChanged sends notifications/tools/list_changed to the proxy's
// clients after an upstream's tools were (re-)listed (on its
// tools/list_changed and when it (re)connects) and after an approval
// released held tools. In "meta" mode tools/list
// itself shows the same find_tool / call_tool whatever the catalog holds,
// so syncExposed alone would never tell a client that find_tool's answers
// changed. The SDK sends the notification only from AddTool / RemoveTools
// (debounced, to every session, and to 2026-07-28 sessions that listen
// for it), so an unchanged tool already served is added again. In "top"
// mode with nothing listed there is nothing to re-list. The caller holds
// importMu.
func (p *Proxy) relayToolsChanged() {
	if !p.topMode() {
		p.server.AddTool(findToolDef(), p.handleMeta)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, 0, len(p.exposed))
	for n := range p.exposed {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if e, ok := p.reg.Get(n); ok {
			if def, ok := mcpToolOf(e); ok {
				p.server.AddTool(def, p.handleDirect)
				return
			}
		}
	}
}

// serveUpstreamTool registers t, a tool of upstream u, and routes calls of
// it to u. The caller holds importMu.
func (p *Proxy) serveUpstreamTool(u *upstream, t registry.Tool) error {
	p.mu.Lock()
	r, taken := p.routes[t.Name]
	p.mu.Unlock()
	// A live upstream supersedes a catalog-file entry of the same name; two
	// upstreams never share a name (their names differ and hold no
	// separator), so a clash here is another upstream's.
	if taken && r.up != nil && r.up != u {
		return fmt.Errorf("the name %q is already used by upstream %q", t.Name, r.up.cfg.Name)
	}
	if err := p.reg.Replace(t); err != nil {
		return err
	}
	p.mu.Lock()
	p.routes[t.Name] = route{up: u}
	p.mu.Unlock()
	tool, _ := t.Metadata["upstreamTool"].(string)
	_ = p.ex.Handle(t.Name, u.handler(tool)) // registered just above
	return nil
}

// toolFromMCP converts an upstream tool to a canonical definition.
func toolFromMCP(name, upstreamName string, mt *mcp.Tool) (registry.Tool, error) {
	var schema json.RawMessage
	if mt.InputSchema != nil {
		b, err := json.Marshal(mt.InputSchema)
		if err != nil {
			return registry.Tool{}, fmt.Errorf("input schema does not encode: %w", err)
		}
		schema = b
	}
	desc := mt.Description
	t := registry.NewTool(name, desc, schema)
	t.Tags = []string{upstreamName}
	t.Metadata = map[string]any{"upstream": upstreamName, "upstreamTool": mt.Name}
	if mt.Title != "" {
		t.Metadata["title"] = mt.Title
	}
	if mt.OutputSchema != nil {
		// Pinned with the rest of the definition (registry.Pins).
		b, err := json.Marshal(mt.OutputSchema)
		if err != nil {
			return registry.Tool{}, fmt.Errorf("output schema does not encode: %w", err)
		}
		t.Metadata["outputSchema"] = json.RawMessage(b)
	}
	// No annotations is MCP's defaults, a destructive tool (MCPAnnotations.Apply).
	var ann *registry.MCPAnnotations
	if a := mt.Annotations; a != nil {
		ann = &registry.MCPAnnotations{
			Title: a.Title, ReadOnlyHint: &a.ReadOnlyHint, DestructiveHint: a.DestructiveHint,
			IdempotentHint: &a.IdempotentHint, OpenWorldHint: a.OpenWorldHint,
		}
		t.Metadata["annotations"] = a
	}
	ann.Apply(&t)
	return t, nil
}

// syncExposed makes the server's full-definition tools match the keep-list
// (and, in "top" mode, the top K tools for the configured query). A tool the
// executor would refuse (destructive while not allowed) is not exposed: the
// executor's policy is the only eligibility rule.
func (p *Proxy) syncExposed(ctx context.Context) {
	want := map[string]*registry.Entry{}
	for _, name := range p.cfg.Keep {
		e, ok := p.reg.Get(name)
		if !ok {
			continue
		}
		if err := p.ex.Allowed(name); err != nil {
			p.log.Warn("keep-list tool not exposed: the proxy would refuse to run it", "tool", name, "reason", err)
			continue
		}
		want[name] = e
	}
	if p.topMode() {
		found, err := p.meta.Find(ctx, p.cfg.Expose.Query, p.cfg.Expose.TopK)
		switch {
		case err != nil:
			p.log.Warn("ranking for the exposed top tools failed", "error", err)
		case len(found) == 0:
			p.log.Warn("no tool ranked for the exposed top tools' query; only the keep-list is exposed", "query", p.cfg.Expose.Query)
		}
		// TopK tools in all: find_tool's prerequisites, which come on top
		// of its limit, count here, as the list is what the agent is sent.
		for _, f := range found[:min(len(found), p.cfg.Expose.TopK)] {
			if e, ok := p.reg.Get(f.Name); ok {
				want[f.Name] = e
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var remove []string
	for name := range p.exposed {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
			delete(p.exposed, name)
		}
	}
	if len(remove) > 0 {
		p.server.RemoveTools(remove...)
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		e := want[name]
		if p.exposed[name] == e.Seq() {
			continue
		}
		def, ok := mcpToolOf(e)
		if !ok {
			p.log.Warn("tool cannot be served in full (its input schema is not an object schema)", "tool", name)
			continue
		}
		p.exposed[name] = e.Seq()
		// Calls are answered by the middleware (every tools/call that is not
		// a meta-tool goes through CallTool); this handler is never reached
		// but keeps the SDK's listing.
		p.server.AddTool(def, p.handleDirect)
	}
}

// warnUnmatchedKeep names, once every upstream has had its first try, each
// keep-list name that matches no imported tool, with the likeliest reason:
// a misspelt name would otherwise just be missing from tools/list. (A
// keep-list tool the executor would refuse is warned about by syncExposed.)
// The caller holds importMu.
func (p *Proxy) warnUnmatchedKeep() {
	sep := p.cfg.separator()
	for _, name := range p.cfg.Keep {
		if _, ok := p.reg.Get(name); ok {
			continue
		}
		why := "no upstream or catalog has a tool of this name; check the spelling (find_tool and the catalog give the names, UPSTREAM" + sep + "TOOL)"
		p.mu.Lock()
		_, held := p.held[name]
		p.mu.Unlock()
		u, tool, _ := p.owner(name)
		switch {
		case held:
			why = "it is held by its pin until approved (toolselect mcp pins list)"
		case u != nil:
			u.mu.Lock()
			down, refused := u.state != StateReady, slices.ContainsFunc(u.refused, func(r refusal) bool { return r.Tool == tool })
			u.mu.Unlock()
			switch {
			case down:
				why = fmt.Sprintf("its upstream %q is not running; the tool is listed once it starts", u.cfg.Name)
			case refused:
				why = fmt.Sprintf("upstream %q has it, but it was refused at import (see the stats)", u.cfg.Name)
			default:
				why = fmt.Sprintf("upstream %q lists no tool %q; check the spelling", u.cfg.Name, tool)
			}
		}
		p.log.Warn("keep-list name matches no tool; it is not listed", "tool", name, "reason", why)
	}
}

// warnUnmatchedRules names, once every upstream has had its first try,
// each permissions pattern that matches no tool served or held: a misspelt
// rule would otherwise just do nothing (a deny rule protecting nothing).
// The caller holds importMu.
func (p *Proxy) warnUnmatchedRules() {
	r := p.cfg.Permissions
	if len(r.Allow)+len(r.Ask)+len(r.Deny) == 0 {
		return
	}
	entries, _ := p.reg.Snapshot()
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	p.mu.Lock()
	for n := range p.held {
		names = append(names, n)
	}
	p.mu.Unlock()
	for _, rule := range r.Unmatched(names) {
		p.log.Warn("permissions rule matches no tool; check the pattern against the served names (UPSTREAM"+p.cfg.separator()+"TOOL, case counts) or an upstream that is not running", "rule", "permissions."+rule)
	}
}

// mcpToolOf builds the full MCP definition of an entry; ok is false when the
// SDK would refuse the schema (it must be an object schema).
func mcpToolOf(e *registry.Entry) (*mcp.Tool, bool) {
	t := e.Def()
	var m map[string]any
	if json.Unmarshal(t.Parameters, &m) != nil || m["type"] != "object" {
		return nil, false
	}
	def := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(t.Parameters)}
	if title, ok := t.Metadata["title"].(string); ok {
		def.Title = title
	}
	if a, ok := t.Metadata["annotations"]; ok {
		if b, err := json.Marshal(a); err == nil {
			var ann mcp.ToolAnnotations
			if json.Unmarshal(b, &ann) == nil {
				def.Annotations = &ann
			}
		}
	}
	return def, true
}

// FindTool ranks the catalog for query as the find_tool meta-tool does and
// returns at most limit tools (rank.DefaultFindLimit when limit <= 0, at
// most rank.MaxFindLimit). Only tools the proxy would run are returned
// (destructive ones only when allowed), plus catalog-only tools.
func (p *Proxy) FindTool(ctx context.Context, query string, limit int) ([]metatool.FoundTool, error) {
	p.syncPins()
	start := time.Now()
	found, err := p.meta.Find(ctx, query, limit)
	p.stats.find(time.Since(start), err != nil)
	return found, err
}

// CallTool validates args for the named tool and runs it through the
// executor, which forwards it to its upstream. Every failure is a tool result
// with isError set and a message an agent can act on: unknown tool (with
// suggestions and the upstreams that are down), refused destructive tool,
// invalid arguments (the violations, never sent upstream), an upstream that
// is down or timed out. An upstream's own result, error or not, is relayed
// unchanged.
func (p *Proxy) CallTool(ctx context.Context, name string, args json.RawMessage) *mcp.CallToolResult {
	p.syncPins() // an approval made since reaches this call
	if r := p.heldResult(name); r != nil {
		return r
	}
	p.awaitStart(ctx, name)
	start := time.Now()
	if p.topMode() && (name == rank.FindToolName || name == rank.CallToolName) {
		r := p.noMetaTools(name)
		p.stats.call(p.toolLabel(name), string(executor.OutcomeInvalid), time.Since(start))
		return r
	}
	res, err := p.meta.Call(ctx, name, args)
	p.stats.call(p.toolLabel(res.Tool), string(res.Outcome), time.Since(start))
	if err == nil {
		p.learnCall(ctx, res)
	}
	return p.render(res, err)
}

// awaitStart waits, when the upstream whose namespace name is in is still
// starting (Launch), until its first start ends or ctx does: a call made
// before its tools joined is answered as the upstream answers it, not with
// "unknown tool".
func (p *Proxy) awaitStart(ctx context.Context, name string) {
	u, _, ok := p.owner(name)
	if !ok {
		return
	}
	u.mu.Lock()
	starting := u.state == StateStarting
	u.mu.Unlock()
	if !starting {
		return
	}
	select {
	case <-u.firstDone:
	case <-ctx.Done():
	}
}

// noMetaTools answers a tools/call of find_tool or call_tool in "top" mode,
// which lists neither: the executor's "call_tool runs catalog tools, not
// meta-tools" would name a tool the client was never shown. The answer says
// what this server lists instead, in the shape of the executor's MetaError
// (outcome invalid, the listed tools as didYouMean).
func (p *Proxy) noMetaTools(name string) *mcp.CallToolResult {
	p.mu.Lock()
	listed := make([]string, 0, len(p.exposed))
	for n := range p.exposed {
		listed = append(listed, n)
	}
	p.mu.Unlock()
	sort.Strings(listed)
	me := metatool.MetaError{
		Error: fmt.Sprintf("unknown tool %q: this server lists only the tools that best fit its configured task (top %d, plus any keep-list) and has no %s or %s",
			name, p.cfg.Expose.TopK, rank.FindToolName, rank.CallToolName),
		Tool: name, Outcome: executor.OutcomeInvalid,
		Hint:       "call one of the tools tools/list shows, by its name, with arguments matching its input schema",
		DidYouMean: listed,
	}
	b, _ := json.Marshal(me)
	var structured map[string]any
	_ = json.Unmarshal(b, &structured)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: structured}
}

// render turns an executor result into an MCP tool result.
func (p *Proxy) render(res executor.Result, err error) *mcp.CallToolResult {
	if r, ok := res.Value.(*mcp.CallToolResult); ok {
		return r // the upstream's own result, isError or not
	}
	if found, ok := res.Value.([]metatool.FoundTool); ok && !res.IsError {
		return p.renderFound(found, nil)
	}
	if err == nil && !res.IsError {
		text := res.Content()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	}
	text := res.Content()
	if text == "" && err != nil {
		text = err.Error() // never an error result that says nothing
	}
	var structured map[string]any
	if json.Unmarshal([]byte(text), &structured) != nil {
		// A tool's own failure (upstream down, timeout): the executor's
		// message, and the same fields a MetaError has.
		structured = map[string]any{"error": text, "tool": res.Tool, "outcome": res.Outcome}
	}
	out := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: structured}
	if errors.Is(err, executor.ErrUnknownTool) {
		if down := p.downUpstreams(); len(down) > 0 {
			out.Content = append(out.Content, &mcp.TextContent{Text: "Upstreams currently down (their tools may be missing): " + p.downWords(down) + "."})
			structured["upstreamsDown"] = down
		}
	}
	return out
}

// renderFound is find_tool's answer: the tools found, and, when some
// matches were withheld (withheld counts them by reason), a note saying how
// many and why; no tools is an answer that says why too.
func (p *Proxy) renderFound(found []metatool.FoundTool, withheld map[string]int) *mcp.CallToolResult {
	out := map[string]any{"tools": found}
	var notes []string
	if len(found) == 0 {
		notes = append(notes, "no tool this proxy would run matched the query well enough; try other words (what the tool does, not the task)")
		if down := p.downUpstreams(); len(down) > 0 {
			notes = append(notes, "upstreams currently down (their tools are missing): "+p.downWords(down))
			out["upstreamsDown"] = down
		}
	}
	if len(withheld) > 0 {
		notes = append(notes, withheldNote(withheld))
		out["withheld"] = withheld
	}
	if len(notes) > 0 {
		out["note"] = strings.Join(notes, "; ")
	}
	// Once, as text: find_tool declares no output schema, so its client
	// asked for content, and a second copy as structuredContent would be
	// sent to the model twice by clients that pass both on.
	text, _ := json.Marshal(out)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// downWords lists the upstreams down for the model, one still starting
// said so.
func (p *Proxy) downWords(down []string) string {
	words := make([]string, len(down))
	for i, name := range down {
		words[i] = name
		if u := p.byName[name]; u != nil {
			u.mu.Lock()
			if u.state == StateStarting {
				words[i] += " (still starting)"
			}
			u.mu.Unlock()
		}
	}
	return strings.Join(words, ", ")
}

func (p *Proxy) downUpstreams() []string {
	var down []string
	for _, u := range p.ups {
		u.mu.Lock()
		if u.state != StateReady {
			down = append(down, u.cfg.Name)
		}
		u.mu.Unlock()
	}
	return down
}

// catalogOnly is the handler of a tool imported from a catalog file: it is
// findable, and calling it (after its arguments validate) is a tool error.
func catalogOnly(name string) executor.Handler {
	return func(context.Context, json.RawMessage) (any, error) {
		return nil, fmt.Errorf("tool %q comes from a catalog file and has no upstream server to run it", name)
	}
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// proxyHints word a refusal in the proxy's own settings: the flag of
// `toolselect mcp` and the key of its configuration file, never the Go
// executor's option names, which an MCP client has no way to set. One entry
// per rule: "" where the proxy has nothing to offer (the reason and
// call_tool's own hint say it).
var proxyHints = map[registry.Rule]string{
	registry.RuleUnknownTool:      "",
	registry.RuleInvalidArgs:      "",
	registry.RuleNoHandler:        "",
	registry.RuleUnsafe:           "the proxy runs destructive tools only when started with --destructive ask (each call asks the client's user) or --destructive allow (\"destructive\": \"ask\" or \"allow\" in its configuration; --allow-destructive, \"allowDestructive\": true, is allow)",
	registry.RuleRole:             "",
	registry.RuleCapability:       "",
	registry.RuleDenied:           "the proxy's configuration denies this tool (permissions.deny); only its operator can change that",
	registry.RuleNoSchemaReadOnly: "",
	registry.RuleApprovalRequired: "",
	registry.RuleApprovalDenied:   "",
	registry.RuleNotInOffer:       "",
	registry.RuleNoSchema:         "",
	registry.RuleNoSchemaMode:     "",
}

func proxyHint(rule registry.Rule) string { return proxyHints[rule] }
