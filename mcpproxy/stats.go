package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// The URI of the stats resource, and the states of an upstream
// (UpstreamStats.State).
const (
	StatsURI      = "toolselect://stats"
	StateReady    = "ready"
	StateDown     = "down"
	StateStarting = "starting" // its first start is under way ([Proxy.Launch])
)

// countTokens counts the cl100k_base tokens of s offline, with the rank
// package's token counter (shared per process, its vocabulary loaded once);
// without the vocabulary, it estimates len(s)/4.
func countTokens(s string) int {
	tc, err := rank.NewTokenCounter(rank.EncodingCl100k)
	if err != nil {
		return len(s) / 4
	}
	return tc.Count(s)
}

// Stats is the proxy's statistics view (the toolselect://stats resource and
// `toolselect mcp stats`).
type Stats struct {
	// Upstreams describes each upstream, in configuration order (the fields
	// of the JSON objects): Name, Transport ("stdio", "http" or "sse"), State
	// (StateReady or StateDown), Server (what it said of itself when
	// connecting), LastError; the tools it Listed, Imported into the index
	// and marked Unsafe (destructive), the tools Refused at import ({tool,
	// reason}); and its Connects, Crashes and Calls (forwarded, not refused
	// by the proxy). Never nil: [] in JSON when no upstream is configured.
	Upstreams []upstreamStats `json:"upstreams"`
	// Catalogs counts the tools imported from catalog files (no upstream):
	// Imported, and the names Refused.
	Catalogs *catalogStats `json:"catalogs,omitempty"`
	// Tools summarises the index.
	Tools struct {
		Catalog  int `json:"catalog"`  // every imported tool
		Findable int `json:"findable"` // what find_tool may return (unsafe excluded unless allowed)
		Exposed  int `json:"exposed"`  // tools in tools/list, meta-tools included
	} `json:"tools"`
	// Tokens compares the full catalog with what the agent is shown.
	Tokens struct {
		Tokenizer string `json:"tokenizer"`
		// FullCatalog is the tokens of every imported tool as an MCP tools/list
		// result: what an agent connected directly to the upstreams would receive.
		FullCatalog int `json:"fullCatalog"`
		// Exposed is the tokens of the proxy's own tools/list result.
		Exposed int `json:"exposed"`
		// SavedPercent is 100 * (1 - Exposed/FullCatalog), never below 0; 0 when
		// there is no catalog (FullCatalog 0).
		SavedPercent float64 `json:"savedPercent"`
	} `json:"tokens"`
	FindTool OpStats `json:"findTool"`
	// CallTool adds the calls' outcomes to their OpStats: a count for every
	// executor.Outcome, 0 included, so the keys never depend on
	// what has happened yet.
	CallTool struct {
		OpStats
		Outcomes map[string]int `json:"outcomes"`
	} `json:"callTool"`
	// Pins lists the held and flagged tools (with a pin file).
	Pins *pinStats `json:"pins,omitempty"`
}

// upstreamStats describes one upstream.
type upstreamStats struct {
	Name      string    `json:"name"`
	Transport string    `json:"transport"` // "stdio", "http" or "sse"
	State     string    `json:"state"`
	Server    string    `json:"server,omitempty"`
	LastError string    `json:"lastError,omitempty"`
	Listed    int       `json:"listed"`   // tools the upstream listed
	Imported  int       `json:"imported"` // tools in the index
	Unsafe    int       `json:"unsafe"`   // imported tools marked destructive
	Refused   []refusal `json:"refused,omitempty"`
	Connects  int       `json:"connects"`
	Crashes   int       `json:"crashes"`
	Calls     int       `json:"calls"` // calls forwarded (not refused by the proxy)
}

// catalogStats counts catalog-file tools.
type catalogStats struct {
	Imported int      `json:"imported"`
	Refused  []string `json:"refused,omitempty"`
}

// OpStats counts an operation and its latencies (milliseconds).
type OpStats struct {
	Count  int     `json:"count"`
	Errors int     `json:"errors"`
	P50ms  float64 `json:"p50ms"`
	P95ms  float64 `json:"p95ms"`
	MaxMs  float64 `json:"maxMs"`
	MeanMs float64 `json:"meanMs"`
}

// callOutcomes are the keys of [Stats.CallTool].Outcomes, all of them always
// present: the executor's vocabulary (executor.Outcome).
var callOutcomes = []executor.Outcome{
	executor.OutcomeOK, executor.OutcomeToolError, executor.OutcomeTimeout,
	executor.OutcomeInvalid, executor.OutcomeRefused, executor.OutcomeCanceled,
}

// recorder accumulates counts and a bounded window of latencies.
type recorder struct {
	mu       sync.Mutex
	finds    latencies
	findErrs int
	calls    latencies
	outcomes map[string]int // executor.Outcome -> count
	catalog  catalogStats
	m        *metrics // the Prometheus instruments, fed from here too
}

type latencies struct {
	n      int
	sum    time.Duration
	max    time.Duration
	window []time.Duration // last 1024
}

func (l *latencies) add(d time.Duration) {
	l.n++
	l.sum += d
	l.max = max(l.max, d)
	if len(l.window) == 1024 {
		copy(l.window, l.window[1:])
		l.window = l.window[:1023]
	}
	l.window = append(l.window, d)
}

func (l *latencies) stats(errs int) OpStats {
	s := OpStats{Count: l.n, Errors: errs, MaxMs: ms(l.max)}
	if l.n == 0 {
		return s
	}
	s.MeanMs = ms(l.sum / time.Duration(l.n))
	w := append([]time.Duration(nil), l.window...)
	sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
	s.P50ms = ms(w[len(w)/2])
	s.P95ms = ms(w[min(len(w)-1, len(w)*95/100)])
	return s
}

func ms(d time.Duration) float64 { return round3(float64(d) / float64(time.Millisecond)) }

func newRecorder() *recorder {
	return &recorder{outcomes: map[string]int{}}
}

func (r *recorder) find(d time.Duration, failed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finds.add(d)
	if failed {
		r.findErrs++
	}
	if r.m != nil {
		r.m.find.Observe(d.Seconds())
	}
}

// call counts a call of tool (a label: Proxy.toolLabel) by its executor.Outcome.
func (r *recorder) call(tool, outcome string, d time.Duration) {
	r.mu.Lock()
	r.calls.add(d)
	r.outcomes[outcome]++
	r.mu.Unlock()
	if r.m != nil {
		r.m.observeCall(tool, outcome, d)
	}
}

func (r *recorder) refusedCatalog(path string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.catalog.Refused = append(r.catalog.Refused, fmt.Sprintf("%s: %v", path, err))
}

// Stats returns the current statistics. Counting the catalog's tokens is
// cached per registry generation.
func (p *Proxy) Stats(ctx context.Context) Stats {
	var s Stats
	p.probeRemote(ctx)
	p.syncPins()
	s.Pins = p.pinStats()
	p.stats.mu.Lock()
	s.FindTool = p.stats.finds.stats(p.stats.findErrs)
	s.CallTool.OpStats, s.CallTool.Outcomes = p.stats.calls.stats(0), map[string]int{}
	for _, o := range callOutcomes {
		s.CallTool.Outcomes[string(o)] = 0
	}
	for k, v := range p.stats.outcomes {
		s.CallTool.Outcomes[k] = v
		if k != string(executor.OutcomeOK) {
			s.CallTool.Errors += v
		}
	}
	catRefused := append([]string(nil), p.stats.catalog.Refused...)
	p.stats.mu.Unlock()

	entries, gen := p.reg.Snapshot()
	s.Upstreams = p.upstreamStats()
	p.mu.Lock()
	catalogOnly := 0
	for _, r := range p.routes {
		if r.up == nil {
			catalogOnly++
		}
	}
	p.mu.Unlock()
	if len(p.cfg.Catalogs) > 0 {
		s.Catalogs = &catalogStats{Imported: catalogOnly, Refused: catRefused}
	}
	s.Tools.Catalog = len(entries)
	for _, e := range entries {
		if p.ex.Allowed(e.Name()) == nil {
			s.Tools.Findable++
		}
	}
	full := 0
	if len(entries) > 0 { // no catalog, nothing to save on: not the tokens of an empty list
		full = p.catalogTokens(entries, gen)
	}
	exposed, n := p.exposedTokens(ctx)
	s.Tools.Exposed = n
	s.Tokens.Tokenizer, s.Tokens.FullCatalog, s.Tokens.Exposed = rank.EncodingCl100k, full, exposed
	if full > 0 {
		// Never negative: a list costing more than the catalog saves nothing.
		s.Tokens.SavedPercent = max(0, round3(100*(1-float64(exposed)/float64(full))))
	}
	return s
}

// Health returns each upstream's state (with its last error) and the number
// of tools in the index, without counting tokens: what a front end checks
// after Start to say which upstreams could not start.
func (p *Proxy) Health() (upstreams []upstreamStats, tools int) {
	return p.upstreamStats(), p.reg.Len()
}

// upstreamStats describes every upstream ([] with none, never nil).
func (p *Proxy) upstreamStats() []upstreamStats {
	out := make([]upstreamStats, 0, len(p.ups))
	for _, u := range p.ups {
		u.mu.Lock()
		us := upstreamStats{
			Name: u.cfg.Name, Transport: u.cfg.transport(), State: u.state, Server: u.serverNfo, LastError: u.lastErr,
			Listed: u.listed, Imported: len(u.names), Refused: append([]refusal(nil), u.refused...),
			Connects: u.connects, Crashes: u.crashes, Calls: u.calls,
		}
		names := append([]string(nil), u.names...)
		u.mu.Unlock()
		for _, n := range names {
			if e, ok := p.reg.Get(n); ok && !e.Def().Safe {
				us.Unsafe++
			}
		}
		out = append(out, us)
	}
	return out
}

func (p *Proxy) catalogTokens(entries []*registry.Entry, gen uint64) int {
	p.mu.Lock()
	if p.catalog.valid && p.catalog.gen == gen {
		n := p.catalog.tokens
		p.mu.Unlock()
		return n
	}
	p.mu.Unlock()
	b, err := registry.MarshalView(entries, registry.FormatMCP, nil)
	if err != nil {
		return 0
	}
	n := p.count(`{"tools":` + string(b) + `}`)
	p.mu.Lock()
	p.catalog = catalogCount{gen: gen, valid: true, tokens: n}
	p.mu.Unlock()
	return n
}

// exposedTokens counts the proxy's own tools/list result, obtained through
// an in-memory client session so it is exactly what an agent receives. The
// session is not traced: a /metrics scrape must not make spans.
func (p *Proxy) exposedTokens(ctx context.Context) (tokens, count int) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := p.server.Connect(ctx, st, nil)
	if err != nil {
		return 0, 0
	}
	p.ownSessions.Store(ss, struct{}{})
	defer p.ownSessions.Delete(ss)
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "toolselect-stats", Version: version}, nil)
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return 0, 0
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return 0, 0
	}
	b, _ := json.Marshal(map[string]any{"tools": res.Tools})
	return p.count(string(b)), len(res.Tools)
}

// readStats serves toolselect://stats, a resource a client may hand the
// model: the pins section names the held tools and why, never the store nor
// the hash an approval takes (an agent with a shell could approve the change
// it is being protected from). [Proxy.Stats] and "toolselect mcp stats",
// the operator's views, keep them.
func (p *Proxy) readStats(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	s := p.Stats(ctx)
	if s.Pins != nil {
		pins := pinStats{Held: forTheModel(s.Pins.Held), Flagged: forTheModel(s.Pins.Flagged)}
		s.Pins = &pins
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: StatsURI, MIMEType: "application/json", Text: string(b)}}}, nil
}

// forTheModel is checks without what approves them: the hash and the
// definitions a review compares.
func forTheModel(checks []registry.PinCheck) []registry.PinCheck {
	out := make([]registry.PinCheck, len(checks))
	for i, c := range checks {
		c.SHA256, c.Pinned, c.Pending = "", nil, nil
		out[i] = c
	}
	return out
}

// remoteProbeTimeout bounds the ping Stats sends each HTTP upstream.
const remoteProbeTimeout = 2 * time.Second

// probeRemote asks every HTTP upstream believed ready whether its server
// answers (upstream.reachable), all at once, and drops the ones that do
// not: a stdio upstream that dies ends its session (its pipes close), but an
// HTTP server that dies leaves nothing to notice until the next request,
// and Stats would call it ready. A dropped upstream restarts on next use.
func (p *Proxy) probeRemote(ctx context.Context) {
	var wg sync.WaitGroup
	for _, u := range p.ups {
		if u.cfg.URL == "" {
			continue
		}
		u.mu.Lock()
		sess := u.sess
		u.mu.Unlock()
		if sess == nil {
			continue
		}
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, remoteProbeTimeout)
			defer cancel()
			if err := u.reachable(pctx); err != nil && ctx.Err() == nil {
				u.drop(sess, "it stopped answering: "+publicText(err.Error()))
			}
		})
	}
	wg.Wait()
}
