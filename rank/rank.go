package rank

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolselect/toolselect/registry"
)

// Defaults of Options, FeedbackOptions and StepOptions, and the bounds of a
// feedback pair.
const (
	DefaultMaxCandidates = 3
	DefaultMinScore      = 0.05

	DefaultFeedbackPerTool   = 64
	DefaultFeedbackWeight    = 1.0
	DefaultFeedbackThreshold = 0.1
	// MaxFeedbackQueryBytes bounds the task text of one feedback pair.
	MaxFeedbackQueryBytes = 64 << 10
	// MaxFeedbackTools bounds the tools of one feedback pair.
	MaxFeedbackTools = 256

	DefaultLatestWeight = 3
	DefaultStepResults  = 3
	DefaultResultChars  = 1000
	DefaultKeepCalled   = 1
)

// Options tune one ranking. A nil *Options, and every zero field, means the
// default.
type Options struct {
	// MaxCandidates is how many scored tools to return (default 3).
	// Exact-name matches count; always-active and related tools do not.
	MaxCandidates int
	// MinScore drops scored tools below it (default 0.05). A negative value
	// keeps every tool with a score above zero.
	MinScore float64
	// Caller is who ranks: the same value the selector's Request.Caller and
	// the executor's [Options.Caller] take. AllowUnsafe, Roles and
	// Capabilities below are shorthands for its fields and add to it.
	Caller registry.Eligibility
	// AllowUnsafe lets tools marked safe=false be ranked.
	AllowUnsafe bool
	// Roles are the caller's roles; a tool that lists roles needs one of them.
	Roles []string
	// Capabilities a tool must all declare to be ranked (e.g. "streaming").
	Capabilities []string
	// Filter, if set, must return true for a tool to be ranked or added; it
	// applies with the filters above, before scoring.
	Filter func(*registry.Entry) bool
	// Scorer orders the tools (default: a shared *BM25).
	Scorer Scorer
	// Timeout bounds scoring. When it runs out, the first MaxCandidates
	// eligible tools in registration order are returned, marked TimedOut.
	Timeout time.Duration
	// Debug fills each pick's provenance with matched terms and the score's
	// components.
	Debug bool
	// AlwaysActive names tools returned whatever their score (if they pass the
	// filters), after the scored picks and not counted in MaxCandidates.
	AlwaysActive []string
	// Related maps a tool to tools that come with it when it is picked.
	Related map[string][]string
	// Reranker, if set, reorders the top RerankTop scored tools (default
	// 2*MaxCandidates) before the cut to MaxCandidates.
	Reranker  Reranker
	RerankTop int
	// NoExactName turns off putting a tool named in the input first.
	NoExactName bool
	// NoPrerequisites turns off prerequisites: by default each of the top
	// three picks is followed by the sibling tools that yield a parameter it
	// requires (see prereq.go). They count in MaxCandidates unless
	// PrerequisitesBeyond is set.
	NoPrerequisites bool
	// PrerequisitesBeyond makes prerequisites not count in MaxCandidates:
	// they come, right after the pick that needs them, on top of the
	// MaxCandidates exact and scored picks, so that they never push a
	// scored tool out (find_tool).
	PrerequisitesBeyond bool
	// Feedback, if set, fuses what past selections taught with the Scorer
	// (see [Feedback.Scorer]); the scorer is then named "<scorer>+feedback".
	Feedback *Feedback
	// NoNameWords turns off reading names as words: joining adjacent query
	// words the catalog knows as one ("git hub" -> github) and splitting
	// concatenated words into words it knows ("getrandomquote").
	NoNameWords bool
	// NoNamespace turns off the server score: in a catalog of namespaced
	// tools (server__tool), a tool gains a little of how well its server's
	// tools together match the query.
	NoNamespace bool
	// NoRelatedWords turns off related words: a query word no tool contains
	// brings its WordNet relatives that tools do contain, weighted below the
	// query's own words.
	NoRelatedWords bool
	// NoReasons leaves scored picks' Reason empty, for callers that show
	// only the tools and scores (toolselect rank --queries): finding the
	// words that matched, as the tool writes them, is a quarter of a bm25
	// query's time. Debug wins over it.
	NoReasons bool
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	el := v.caller()
	// A caller who can ask is offered unsafe tools as one who allows them
	// (registry.Eligibility.Check treats them alike); the executor asks.
	// The per-tool rules stay on Caller, with Ask: their unsafe mode "ask"
	// needs a caller who can ask.
	v.Caller, v.AllowUnsafe, v.Roles, v.Capabilities = registry.Eligibility{Ask: el.Ask, Rules: el.Rules}, el.AllowUnsafe || el.Ask, el.Roles, el.Capabilities
	if v.MaxCandidates <= 0 {
		v.MaxCandidates = DefaultMaxCandidates
	}
	if v.MinScore == 0 {
		v.MinScore = DefaultMinScore
	}
	if v.Scorer == nil {
		v.Scorer = defaultScorer
	}
	if v.Feedback != nil {
		v.Scorer = v.Feedback.Scorer(v.Scorer)
	}
	if v.RerankTop <= 0 {
		v.RerankTop = 2 * v.MaxCandidates
	}
	if v.Debug {
		v.NoReasons = false // Debug explains everything
	}
	return v
}

var defaultScorer = &BM25{}

// Source says why a tool was picked: the Source of a Provenance.
type Source string

// The sources of a pick.
const (
	SourceExactName    Source = "exact-name"
	SourceScore        Source = "score"
	SourceRelated      Source = "related"
	SourceAlwaysActive Source = "always-active"
	SourceTimeout      Source = "timeout"
	SourceReranked     Source = "reranked"
	SourcePrerequisite Source = "prerequisite"
	// SourceToolResult: active in an agent step (StepTools, Step), found by
	// ranking the text of recent tool results.
	SourceToolResult Source = "tool-result"
	// SourceCalled: active in an agent step, called in a recent step and kept
	// so the model can call it again.
	SourceCalled Source = "called"
)

// Pick is one ranked tool.
type Pick struct {
	Tool       string          `json:"tool"`
	Score      float64         `json:"score"` // 0..1
	Reason     string          `json:"reason"`
	Provenance Provenance      `json:"provenance"`
	Entry      *registry.Entry `json:"-"`
	// Hidden is set only on the picks [Ranker.Hidden] returns: why the
	// caller's filters kept the tool out.
	Hidden registry.Rule `json:"hidden,omitempty"`
}

// Provenance says how a pick came about.
type Provenance struct {
	Scorer     string             `json:"scorer"`
	Source     Source             `json:"source"`
	Rank       int                `json:"rank"` // 1-based position among the picks
	RelatedTo  string             `json:"relatedTo,omitempty"`
	TimedOut   bool               `json:"timedOut,omitempty"`
	Matched    []string           `json:"matched,omitempty"`    // Debug: query terms found in the tool
	Components map[string]float64 `json:"components,omitempty"` // Debug: score parts
}

// Query is an input prepared for scorers: its text and, computed once, its
// analysed terms.
type Query struct {
	Text  string
	Debug bool
	// NoMatched tells a scorer that [Hit.Matched] will not be read (the caller
	// asked for no reasons); a scorer may leave it empty.
	NoMatched bool
	// NoNameWords, NoNamespace and NoRelatedWords turn off the ways a
	// scorer may widen the query (Options has the same fields).
	NoNameWords, NoNamespace, NoRelatedWords bool

	once  sync.Once
	terms []string
	words []string
}

// Terms returns the analysed terms of the query.
func (q *Query) Terms() []string {
	q.once.Do(q.analyze)
	return q.terms
}

// Words returns the query's words as written, lower-cased, stopwords
// included, in order: what the analysed terms come from.
func (q *Query) Words() []string {
	q.once.Do(q.analyze)
	return q.words
}

func (q *Query) analyze() {
	words(q.Text, func(w []byte) {
		q.words = append(q.words, string(w))
		if t := termOf(w); t != "" {
			q.terms = append(q.terms, t)
		}
	})
}

// Hit is one tool a scorer found: its catalog position and a score in 0..1.
type Hit struct {
	Pos     int
	Score   float64
	Matched []string
	// Words, when the scorer knows them, are the Matched terms as the tool
	// first writes them (same order: "parking" for "park"); reasons show
	// them. Without them a reason reads the tool's text to find them.
	Words []string
	// Via, when not empty, is parallel to Matched: for each term the query
	// gained rather than wrote, how it came ("related to 'car'"); "" for the
	// query's own terms. Reasons show it beside the word.
	Via        []string
	Components map[string]float64
	// Note, if set, is added to the pick's reason (e.g. what feedback said).
	Note string
}

// Scorer orders the tools of a catalog for a query.
type Scorer interface {
	// Name identifies the scorer in provenance ("bm25", "keyword", ...).
	Name() string
	// Score returns up to k hits, best first, with scores in 0..1, over the
	// tools for which keep(pos) is true (keep nil means all). Equal scores
	// must be ordered by catalog position. It returns ctx.Err() when the
	// context ends first.
	Score(ctx context.Context, c *Catalog, q *Query, k int, keep func(pos int) bool) ([]Hit, error)
}

// Reranker reorders candidates, e.g. with a language model. It returns the
// candidates it keeps, best first; scores it leaves alone are kept.
type Reranker interface {
	Rerank(ctx context.Context, query string, picks []Pick) ([]Pick, error)
}

// ErrFeedback is matched by every error about a feedback pair
// (errors.Is(err, rank.ErrFeedback)).
var ErrFeedback = errors.New("invalid feedback")

// Ranker ranks one catalog repeatedly: a registry, followed as it changes, or
// a fixed list. It is safe for concurrent use.
type Ranker struct {
	reg *registry.Registry // nil for a fixed list
	mu  sync.Mutex
	cur atomic.Pointer[Catalog]
}

// newStatic returns a Ranker over a fixed list of entries, in catalog order.
func newStatic(entries []*registry.Entry) *Ranker {
	r := &Ranker{}
	r.cur.Store(newCatalog(entries))
	return r
}

// Catalog returns the current catalog version.
func (r *Ranker) Catalog() *Catalog {
	reg := r.reg
	if reg == nil {
		c := r.cur.Load()
		if c == nil {
			c = newCatalog(nil)
		}
		return c
	}
	entries, gen := reg.Snapshot()
	if c := r.cur.Load(); c != nil && c.gen == gen && c.sourced {
		return c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	entries, gen = reg.Snapshot()
	c := r.cur.Load()
	if c != nil && c.gen == gen && c.sourced {
		return c
	}
	n := c.next(entries, gen)
	n.sourced = true
	r.cur.Store(n)
	return n
}

// SetEntries replaces a static Ranker's list; indexes are updated
// incrementally from the previous list. It panics on a registry-backed Ranker.
func (r *Ranker) SetEntries(entries []*registry.Entry) {
	if r.reg != nil {
		panic("rank: SetEntries on a registry-backed Ranker")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur.Store(r.cur.Load().next(entries, 0))
}

// sharedRanker is the key of a registry's shared Ranker (registry.Attached).
type sharedRanker struct{}

// For returns the shared Ranker of a registry. It is
// created on first use and kept with the registry (registry.Attached), so it
// lives exactly as long as the registry and whoever holds it. For(nil)
// returns a new Ranker over a fixed list, empty until [Ranker.SetEntries].
func For(reg *registry.Registry) *Ranker {
	if reg == nil {
		return &Ranker{}
	}
	return reg.Attached(sharedRanker{}, func() any { return &Ranker{reg: reg} }).(*Ranker)
}

// Rank ranks the current catalog for input.
func (r *Ranker) Rank(ctx context.Context, input any, opts *Options) ([]Pick, error) {
	return r.rank(ctx, r.Catalog(), inputText(input), opts, nil)
}

// Prepare builds now what the first query would otherwise build: the
// scorer's index over the registry's current tools (for scorers that keep
// one: bm25, keyword, the lexical half of hybrid, and each of them under
// feedback) and the prerequisite table. It lets a caller
// overlap that work with other start-up work, such as loading feedback;
// it is safe to call concurrently with queries.
func (r *Ranker) Prepare(opts *Options) error {
	o := opts.withDefaults()
	c := r.Catalog()
	if !o.NoPrerequisites {
		prerequisites(c)
	}
	return prepareScorer(o.Scorer, c)
}

// prepareScorer builds a scorer's per-catalog index if it keeps one.
func prepareScorer(s Scorer, c *Catalog) error {
	if p, ok := s.(interface{ prepare(*Catalog) error }); ok {
		return p.prepare(c)
	}
	return nil
}

// rank is the whole pipeline over one catalog version; only, if set, further
// restricts the tools to catalog positions for which it is true.
func (r *Ranker) rank(ctx context.Context, c *Catalog, text string, opts *Options, only func(pos int) bool) ([]Pick, error) {
	s := newRanking(c, opts, only)
	if !s.o.NoExactName {
		s.addExactNames(text)
	}
	if err := s.addScored(ctx, text); err != nil {
		return nil, err
	}
	s.addRelated()
	s.addAlwaysActive()
	return s.picks, nil
}

// ranking is the state of one rank call: the options, the picks so far and
// the catalog positions they hold.
type ranking struct {
	c          *Catalog
	o          Options
	only       func(pos int) bool
	scorerName string
	picks      []Pick
	taken      map[int]bool
	// pre, unless prerequisites are off, brings after each of the first
	// prereqTop exact or scored picks (bringers counts them) the siblings
	// that yield its required parameters.
	pre      *prereqIndex
	bringers int
	// beyond counts the prerequisite picks.
	beyond int
}

// newRanking applies the options' defaults and starts an empty ranking.
func newRanking(c *Catalog, opts *Options, only func(pos int) bool) *ranking {
	s := &ranking{c: c, o: opts.withDefaults(), only: only, taken: map[int]bool{}}
	s.scorerName = s.o.Scorer.Name()
	if !s.o.NoPrerequisites {
		s.pre = prerequisites(c)
	}
	return s
}

// keep reports whether the tool at pos passes only and the filters.
func (s *ranking) keep(pos int) bool {
	if s.only != nil && !s.only(pos) {
		return false
	}
	return eligible(s.c.entries[pos], &s.o)
}

// full reports whether the picks fill MaxCandidates (prerequisites not
// counted with PrerequisitesBeyond).
func (s *ranking) full() bool { return s.counted() >= s.o.MaxCandidates }

// counted is the number of picks that count in MaxCandidates.
func (s *ranking) counted() int {
	if s.o.PrerequisitesBeyond {
		return len(s.picks) - s.beyond
	}
	return len(s.picks)
}

// add appends the tool at pos as the next pick.
func (s *ranking) add(pos int, p Pick) {
	s.taken[pos] = true
	p.Tool = s.c.entries[pos].Name()
	p.Entry = s.c.entries[pos]
	p.Provenance.Rank = len(s.picks) + 1
	s.picks = append(s.picks, p)
}

// addWithPrereqs adds an exact or scored pick and, for the first prereqTop
// of them, the siblings that yield its required parameters.
func (s *ranking) addWithPrereqs(pos int, p Pick) {
	s.add(pos, p)
	if s.pre == nil || s.bringers >= prereqTop {
		return
	}
	s.bringers++
	for _, pr := range s.pre.prereqsOf(pos) {
		if s.full() && !s.o.PrerequisitesBeyond {
			return
		}
		if s.taken[pr.pos] || !s.keep(pr.pos) {
			continue
		}
		s.add(pr.pos, Pick{Score: p.Score * prereqScoreShare, Reason: prereqReason(s.c.entries[pos].Name(), pr.params),
			Provenance: Provenance{Scorer: s.scorerName, Source: SourcePrerequisite, RelatedTo: s.c.entries[pos].Name()}})
		s.beyond++
	}
}

// addExactNames adds the tools named in the input.
func (s *ranking) addExactNames(text string) {
	for _, pos := range exactNames(s.c, text) {
		if s.full() || s.taken[pos] || !s.keep(pos) {
			continue
		}
		s.addWithPrereqs(pos, Pick{Score: 1, Reason: "the input names this tool",
			Provenance: Provenance{Scorer: s.scorerName, Source: SourceExactName}})
	}
}

// addScored fills the places left with the scorer's best tools, reranked if
// a Reranker is set, or with the first eligible tools in registration order
// if scoring times out.
func (s *ranking) addScored(ctx context.Context, text string) error {
	want := s.o.MaxCandidates - s.counted()
	if want <= 0 {
		return nil
	}
	hits, timedOut, err := s.score(ctx, text, want)
	switch {
	case timedOut:
		s.addInRegistrationOrder()
		return nil
	case err != nil:
		return fmt.Errorf("%s scorer: %w", s.scorerName, err)
	}
	scored, err := s.rerank(ctx, text, s.scoredPicks(hits))
	if err != nil {
		return err
	}
	s.addScoredPicks(scored)
	return nil
}

// score runs the scorer, within [Options.Timeout] if set, over the tools not
// yet picked; timedOut reports that the timeout, not ctx, ended it.
func (s *ranking) score(ctx context.Context, text string, want int) (hits []Hit, timedOut bool, err error) {
	sctx, cancel := ctx, context.CancelFunc(func() {})
	if s.o.Timeout > 0 {
		sctx, cancel = context.WithTimeout(ctx, s.o.Timeout)
	}
	q := &Query{Text: text, Debug: s.o.Debug, NoMatched: s.o.NoReasons,
		NoNameWords: s.o.NoNameWords, NoNamespace: s.o.NoNamespace, NoRelatedWords: s.o.NoRelatedWords}
	k := want + len(s.picks)
	if s.o.Reranker != nil && s.o.RerankTop > k {
		k = s.o.RerankTop
	}
	hits, err = s.o.Scorer.Score(sctx, s.c, q, k, func(pos int) bool { return !s.taken[pos] && s.keep(pos) })
	if err == nil && ctx.Err() == nil && sctx.Err() != nil {
		// Scoring ran out of time even if the scorer did not look (bm25
		// checks the clock every few query terms): the timeout decides.
		hits, err = nil, sctx.Err()
	}
	timedOut = err != nil && ctx.Err() == nil && sctx.Err() != nil
	cancel()
	return hits, timedOut, err
}

// addInRegistrationOrder fills the places left with the first eligible tools
// in registration order, marked TimedOut.
func (s *ranking) addInRegistrationOrder() {
	for pos := range s.c.entries {
		if s.full() {
			break
		}
		if !s.taken[pos] && s.keep(pos) {
			s.add(pos, Pick{Score: 0, Reason: fmt.Sprintf("scoring timed out after %s; listed in registration order", s.o.Timeout),
				Provenance: Provenance{Scorer: s.scorerName, Source: SourceTimeout, TimedOut: true}})
		}
	}
}

// scoredPicks turns the hits not yet picked that reach MinScore into picks,
// with their reasons unless NoReasons, and their details if Debug.
func (s *ranking) scoredPicks(hits []Hit) []Pick {
	var scored []Pick
	for _, h := range hits {
		if s.taken[h.Pos] || h.Score <= 0 || (s.o.MinScore > 0 && h.Score < s.o.MinScore) {
			continue
		}
		e := s.c.entries[h.Pos]
		p := Pick{Tool: e.Name(), Entry: e, Score: h.Score,
			Provenance: Provenance{Scorer: s.scorerName, Source: SourceScore}}
		if !s.o.NoReasons {
			p.Reason = scoreReason(s.scorerName, h, e)
		}
		if s.o.Debug {
			p.Provenance.Matched = h.Matched
			p.Provenance.Components = h.Components
		}
		scored = append(scored, p)
	}
	return scored
}

// rerank lets the Reranker, if set, reorder the top RerankTop scored picks.
func (s *ranking) rerank(ctx context.Context, text string, scored []Pick) ([]Pick, error) {
	if s.o.Reranker == nil || len(scored) == 0 {
		return scored, nil
	}
	top := scored
	if len(top) > s.o.RerankTop {
		top = top[:s.o.RerankTop]
	}
	re, err := s.o.Reranker.Rerank(ctx, text, append([]Pick(nil), top...))
	if err != nil {
		return nil, fmt.Errorf("reranker: %w", err)
	}
	return re, nil
}

// addScoredPicks adds scored picks, in order, until MaxCandidates.
func (s *ranking) addScoredPicks(scored []Pick) {
	for _, p := range scored {
		if s.full() {
			break
		}
		pos, ok := s.c.Pos(p.Tool)
		if !ok || s.taken[pos] {
			continue
		}
		s.addWithPrereqs(pos, p)
	}
}

// addRelated adds the tools related to the picks so far ([Options.Related]).
func (s *ranking) addRelated() {
	eachRelated(s.c, s.o.Related, s.picks, func(pos int, from string) {
		if s.taken[pos] || !s.keep(pos) {
			return
		}
		s.add(pos, Pick{Reason: "related to " + from,
			Provenance: Provenance{Scorer: s.scorerName, Source: SourceRelated, RelatedTo: from}})
	})
}

// eachRelated calls add with the catalog position of each tool that related
// ([Options.Related]) lists for one of picks, and the pick's tool: picks in
// order, each list in order. Picks add appends are not visited.
func eachRelated(c *Catalog, related map[string][]string, picks []Pick, add func(pos int, from string)) {
	if len(related) == 0 {
		return
	}
	for _, p := range picks {
		for _, name := range related[p.Tool] {
			if pos, ok := c.Pos(name); ok {
				add(pos, p.Tool)
			}
		}
	}
}

// addAlwaysActive adds the [Options.AlwaysActive] tools.
func (s *ranking) addAlwaysActive() {
	for _, name := range s.o.AlwaysActive {
		pos, ok := s.c.Pos(name)
		if !ok || s.taken[pos] || !s.keep(pos) {
			continue
		}
		s.add(pos, Pick{Reason: "always active",
			Provenance: Provenance{Scorer: s.scorerName, Source: SourceAlwaysActive}})
	}
}

// scoreReason explains a scored pick with the words of the tool that matched,
// as the tool writes them (the index matches stems: "service", not "servic"),
// then the scorer's note if any.
func scoreReason(scorer string, h Hit, e *registry.Entry) string {
	s := fmt.Sprintf("%s score %.3f", scorer, h.Score)
	if len(h.Matched) > 0 {
		m := h.Words
		if len(m) != len(h.Matched) {
			m = surfaceWords(e, h.Matched)
		}
		if len(h.Via) == len(m) {
			m = slices.Clone(m)
			for i, via := range h.Via {
				if via != "" {
					m[i] += " (" + via + ")"
				}
			}
		}
		more := ""
		if len(m) > 6 {
			more = fmt.Sprintf(" +%d more", len(m)-6)
			m = m[:6]
		}
		s += "; matched " + strings.Join(m, ", ") + more
	}
	if h.Note != "" {
		s += "; " + h.Note
	}
	return s
}

// caller is o's Caller with its shorthand fields.
func (o *Options) caller() registry.Eligibility {
	return o.Caller.With(registry.Eligibility{AllowUnsafe: o.AllowUnsafe, Roles: o.Roles, Capabilities: o.Capabilities})
}

// eligible applies the filters that run before scoring: the one
// eligibility rule ([registry.Eligibility]), then [Options.Filter]. o has
// been through withDefaults, which folds [Options.Caller] into the
// shorthand fields, all but its per-tool rules.
func eligible(e *registry.Entry, o *Options) bool {
	el := registry.Eligibility{AllowUnsafe: o.AllowUnsafe, Roles: o.Roles, Capabilities: o.Capabilities, Ask: o.Caller.Ask, Rules: o.Caller.Rules}
	return el.Allows(e) && (o.Filter == nil || o.Filter(e))
}

// pickNames returns the tool names of picks, in order.
func pickNames(picks []Pick) []string {
	out := make([]string, len(picks))
	for i, p := range picks {
		out[i] = p.Tool
	}
	return out
}
