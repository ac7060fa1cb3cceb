// Package mcpproxy is toolselect's MCP front door: a proxy that connects to
// upstream MCP servers as a client, imports every upstream tool into a
// registry.Registry (named "server__tool", schemas kept, annotations mapped),
// and serves MCP to an agent with only two meta-tools, find_tool and
// call_tool, plus a short keep-list of tools shown in full. The agent's
// prompt therefore stays small however large the catalog grows, and every
// call is validated against the upstream's schema before it reaches the
// server.
//
// It is built on the official Go SDK (github.com/modelcontextprotocol/go-sdk):
// Proxy.Server returns the *mcp.Server, Proxy.ServeStdio runs it over stdio
// (draining in-flight replies when stdin closes) and Proxy.HTTPHandler serves
// streamable HTTP for every protocol version the SDK speaks, with DNS
// rebinding protection.
package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// Version is reported to clients and upstreams as the implementation version.
const Version = "0.1.0"

// Names of the meta-tools (the rank package's, shared with the executor and
// token accounting) and the stats resource.
const (
	FindToolName = rank.FindToolName
	CallToolName = rank.CallToolName
	StatsURI     = "toolselect://stats"
)

// Options holds collaborators of a Proxy. A nil *Options means defaults.
type Options struct {
	// Logger receives warnings (refused tools, upstream failures); default
	// discards.
	Logger *slog.Logger
	// Ranker ranks the catalog for find_tool and "top" mode; default
	// NewRanker(nil), the rank package's BM25.
	Ranker Ranker
	// CountTokens counts the tokens of a text for the stats; default cl100k.
	CountTokens func(string) int
}

// route says where a namespaced tool is served.
type route struct {
	up   *upstream // nil for a catalog-only tool
	tool string    // the upstream's own name
}

// Proxy imports upstream MCP tools and serves them through meta-tools.
// Create it with New, fill it with Start, serve Server (or ServeStdio /
// HTTPHandler), and Close it to stop the upstreams.
type Proxy struct {
	cfg    Config
	log    *slog.Logger
	ranker Ranker
	count  func(string) int
	reg    *registry.Registry
	server *mcp.Server
	stats  *recorder

	ups []*upstream
	bg  sync.WaitGroup // background closes of dropped upstream sessions

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
	if o.Ranker == nil {
		o.Ranker = NewRanker(nil)
	}
	if o.CountTokens == nil {
		o.CountTokens = CountTokens
	}
	p := &Proxy{
		cfg:     c,
		log:     o.Logger,
		ranker:  o.Ranker,
		count:   o.CountTokens,
		reg:     registry.New(nil),
		stats:   newRecorder(),
		routes:  map[string]route{},
		exposed: map[string]uint64{},
	}
	for _, u := range c.Upstreams {
		p.ups = append(p.ups, newUpstream(p, u))
	}
	p.server = mcp.NewServer(&mcp.Implementation{Name: "toolselect", Title: "toolselect MCP proxy", Version: Version}, &mcp.ServerOptions{
		Instructions: p.instructions(),
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{},
		},
	})
	if !p.topMode() {
		p.server.AddTool(findToolDef(), p.handleFind)
		p.server.AddTool(callToolDef(), p.handleCall)
	}
	p.server.AddResource(&mcp.Resource{
		URI: StatsURI, Name: "stats", Title: "toolselect proxy statistics", MIMEType: "application/json",
		Description: "Tools per upstream, tokens of the full catalog against what the agent sees, find_tool and call_tool counts and latencies.",
	}, p.readStats)
	return p, nil
}

func (p *Proxy) topMode() bool { return p.cfg.Expose.Mode == "top" }

func (p *Proxy) instructions() string {
	if p.topMode() {
		return "The tools listed are the most relevant ones from a larger catalog for the configured task."
	}
	return "This server fronts a large tool catalog. Call find_tool with a short description of what you need, " +
		"then call_tool with the tool's name and arguments matching its input schema."
}

// Start loads the catalog files and connects every upstream concurrently,
// importing their tools. An upstream that cannot be reached is logged and
// reported in Stats; it does not fail Start (its tools are simply absent
// until it comes back). Start fails only on an unreadable catalog file.
func (p *Proxy) Start(ctx context.Context) error {
	for _, path := range p.cfg.Catalogs {
		tools, _, err := registry.LoadCatalogFile(path)
		if err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
		for _, err := range p.reg.RegisterValid(tools) {
			p.log.Warn("catalog tool left out", "catalog", path, "error", err)
			p.stats.refusedCatalog(path, err)
		}
		p.mu.Lock()
		for _, t := range tools {
			if _, ok := p.reg.Get(t.Name); ok {
				if _, taken := p.routes[t.Name]; !taken {
					p.routes[t.Name] = route{}
				}
			}
		}
		p.mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, u := range p.ups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u.connMu.Lock()
			defer u.connMu.Unlock()
			_ = u.connect(ctx) // logged by connect
		}()
	}
	wg.Wait()
	p.syncExposed(ctx)
	return nil
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
	var wg sync.WaitGroup
	for _, u := range p.ups {
		wg.Add(1)
		go func() { defer wg.Done(); u.close() }()
	}
	wg.Wait()
	p.bg.Wait()
	return nil
}

// Server returns the MCP server, to be connected to any SDK transport.
func (p *Proxy) Server() *mcp.Server { return p.server }

// Registry returns the imported catalog. Treat it as read-only.
func (p *Proxy) Registry() *registry.Registry { return p.reg }

// importTools registers an upstream's current tool list, replacing changed
// tools and removing the ones that disappeared, then refreshes the tools
// served in full.
func (p *Proxy) importTools(u *upstream, tools []*mcp.Tool) {
	sep := p.cfg.separator()
	var names []string
	var refused []Refusal
	for _, mt := range tools {
		name := u.cfg.Name + sep + mt.Name
		t, err := toolFromMCP(name, u.cfg.Name, mt)
		if err == nil {
			p.mu.Lock()
			r, taken := p.routes[name]
			p.mu.Unlock()
			// A live upstream supersedes a catalog-file entry of the same
			// name; two upstreams never share a name (their names differ and
			// hold no separator), so a clash here is another upstream's.
			if taken && r.up != nil && r.up != u {
				err = fmt.Errorf("the name %q is already used by upstream %q", name, r.up.cfg.Name)
			} else {
				err = p.reg.Replace(t)
			}
		}
		if err != nil {
			p.log.Warn("mcp upstream tool left out", "upstream", u.cfg.Name, "tool", mt.Name, "error", err)
			refused = append(refused, Refusal{Tool: mt.Name, Reason: err.Error()})
			continue
		}
		names = append(names, name)
		p.mu.Lock()
		p.routes[name] = route{up: u, tool: mt.Name}
		p.mu.Unlock()
	}
	keep := map[string]bool{}
	for _, n := range names {
		keep[n] = true
	}
	u.mu.Lock()
	old := u.names
	u.names, u.listed, u.refused = names, len(tools), refused
	u.mu.Unlock()
	for _, n := range old {
		if !keep[n] {
			p.reg.Unregister(n)
			p.mu.Lock()
			delete(p.routes, n)
			p.mu.Unlock()
		}
	}
	p.syncExposed(context.Background())
}

// toolFromMCP converts an upstream tool to a canonical definition.
func toolFromMCP(name, upstreamName string, mt *mcp.Tool) (registry.Tool, error) {
	var schema json.RawMessage
	if mt.InputSchema != nil {
		b, err := json.Marshal(mt.InputSchema)
		if err != nil {
			return registry.Tool{}, fmt.Errorf("input schema does not encode: %v", err)
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
	if a := mt.Annotations; a != nil {
		ann := registry.MCPAnnotations{
			Title: a.Title, ReadOnlyHint: &a.ReadOnlyHint, DestructiveHint: a.DestructiveHint,
			IdempotentHint: &a.IdempotentHint, OpenWorldHint: a.OpenWorldHint,
		}
		ann.Apply(&t)
		t.Metadata["annotations"] = a
	}
	return t, nil
}

// syncExposed makes the server's full-definition tools match the keep-list
// (and, in "top" mode, the top K tools for the configured query).
func (p *Proxy) syncExposed(ctx context.Context) {
	want := map[string]*registry.Entry{}
	for _, name := range p.cfg.Keep {
		e, ok := p.reg.Get(name)
		if !ok {
			continue
		}
		if !e.Def().Safe && !p.cfg.AllowDestructive {
			p.log.Warn("keep-list tool is destructive and allowDestructive is off: not exposed", "tool", name)
			continue
		}
		want[name] = e
	}
	if p.topMode() {
		hits, err := p.ranker.Rank(ctx, p.reg, p.cfg.Expose.Query, RankOptions{Limit: p.cfg.Expose.TopK, AllowUnsafe: p.cfg.AllowDestructive})
		if err != nil {
			p.log.Warn("ranking for the exposed top tools failed", "error", err)
		}
		for _, h := range hits {
			want[h.Entry.Name()] = h.Entry
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
		p.server.AddTool(def, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return p.CallTool(ctx, name, req.Params.Arguments), nil
		})
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

// FoundTool is one find_tool result.
type FoundTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Score       float64         `json:"score"`
}

// FindTool ranks the whole catalog for query and returns at most limit tools
// (DefaultFindLimit when limit <= 0, at most MaxFindLimit). Destructive tools
// are left out unless the configuration allows them.
func (p *Proxy) FindTool(ctx context.Context, query string, limit int) ([]FoundTool, error) {
	start := time.Now()
	if limit <= 0 {
		limit = DefaultFindLimit
	}
	limit = min(limit, MaxFindLimit)
	hits, err := p.ranker.Rank(ctx, p.reg, query, RankOptions{Limit: limit, AllowUnsafe: p.cfg.AllowDestructive})
	out := make([]FoundTool, 0, len(hits))
	for _, h := range hits {
		t := h.Entry.Def()
		schema := json.RawMessage(t.Parameters)
		if !t.HasSchema() {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		out = append(out, FoundTool{Name: t.Name, Description: t.Description, InputSchema: schema, Score: round3(h.Score)})
	}
	p.stats.find(time.Since(start), err)
	return out, err
}

// Outcome kinds of a proxied call, as counted in Stats.
const (
	OutcomeOK          = "ok"         // the upstream answered (isError may be true)
	OutcomeToolError   = "tool_error" // the upstream answered with isError
	OutcomeInvalid     = "invalid"    // arguments refused by the schema
	OutcomeUnknown     = "unknown"    // no such tool
	OutcomeRefused     = "refused"    // policy: destructive tool not allowed, not callable
	OutcomeUpstreamErr = "upstream"   // upstream down, timed out or protocol error
)

// CallTool validates args for the named tool and forwards the call to its
// upstream. Every failure is returned as a tool result with isError set and
// a message an agent can act on: unknown tool, refused destructive tool,
// invalid arguments (the violations, never sent upstream), an upstream that
// is down or timed out. An upstream's own result, error or not, is relayed
// unchanged.
func (p *Proxy) CallTool(ctx context.Context, name string, args json.RawMessage) *mcp.CallToolResult {
	start := time.Now()
	res, outcome, upName := p.callTool(ctx, name, args)
	p.stats.call(upName, outcome, time.Since(start))
	return res
}

func (p *Proxy) callTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, string, string) {
	e, ok := p.reg.Get(name)
	if !ok {
		msg := fmt.Sprintf("unknown tool %q.", name)
		if hits, _ := p.ranker.Rank(ctx, p.reg, name, RankOptions{Limit: 3, AllowUnsafe: p.cfg.AllowDestructive}); len(hits) > 0 {
			var names []string
			for _, h := range hits {
				names = append(names, h.Entry.Name())
			}
			msg += " Did you mean: " + strings.Join(names, ", ") + "?"
		}
		if down := p.downUpstreams(); len(down) > 0 {
			msg += " Upstreams currently down (their tools may be missing): " + strings.Join(down, ", ") + "."
		}
		msg += " Use find_tool to search the catalog."
		return errorResult(msg, map[string]any{"error": "unknown_tool", "tool": name}), OutcomeUnknown, ""
	}
	p.mu.Lock()
	r := p.routes[name]
	p.mu.Unlock()
	upName := ""
	if r.up != nil {
		upName = r.up.cfg.Name
	}
	if !e.Def().Safe && !p.cfg.AllowDestructive {
		return errorResult(fmt.Sprintf("tool %q is marked destructive by its server and this proxy does not allow destructive tools (allowDestructive is off).", name),
			map[string]any{"error": "destructive_tool_refused", "tool": name}), OutcomeRefused, upName
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if err := e.ValidateArgs(args); err != nil {
		var ve *registry.ValidationError
		if errors.As(err, &ve) {
			return errorResult(ve.Error()+". Fix the arguments to match the tool's inputSchema and call again.",
				map[string]any{"error": "invalid_arguments", "tool": name, "violations": ve.Violations}), OutcomeInvalid, upName
		}
		return errorResult(err.Error(), map[string]any{"error": "invalid_arguments", "tool": name}), OutcomeInvalid, upName
	}
	if r.up == nil {
		return errorResult(fmt.Sprintf("tool %q comes from a catalog file and has no upstream server to run it.", name),
			map[string]any{"error": "not_callable", "tool": name}), OutcomeRefused, ""
	}
	res, err := r.up.call(ctx, r.tool, args)
	if err != nil {
		return errorResult(err.Error(), map[string]any{"error": "upstream_unavailable", "tool": name, "upstream": upName}), OutcomeUpstreamErr, upName
	}
	if res.IsError {
		return res, OutcomeToolError, upName
	}
	return res, OutcomeOK, upName
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

// errorResult is a tool error: text for the model, structured for programs.
func errorResult(msg string, structured map[string]any) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: msg}},
		StructuredContent: structured,
	}
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }
