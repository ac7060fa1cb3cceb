package rank

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"weak"
)

// Learning from the selections served. A Feedback holds (task text, tool)
// pairs: "this task needed this tool". It is a scorer of its own, fused with
// the base scorer (bm25 by default) when [Options.Feedback] is set:
//
//	sim(tool)  = the highest cosine similarity (idf-weighted terms) between
//	             the query and a task the tool served; a tool counts only
//	             when its sim is within 90% of the best tool's
//	gain(tool) = max(0, (sim - Threshold) / (1 - Threshold))^2
//	score      = base + (1 - base) * Weight * gain
//
// Only what the ranked catalog holds counts: a learned task speaks for a
// catalog when it needed at least one of the catalog's tools, and then only
// for those tools; the idf, the task norms and the near-best cut are taken
// over those tasks alone. A log naming tools the catalog lacks (another
// registry's, removed ones) therefore ranks exactly as the same log without
// them, so a ranking is a function of the catalog, the log and the query,
// whichever front door learned the log (the CLI drops unknown names as it
// reads, the C ABI shares one learner between registries) and whatever Known
// said.
//
// A tool no learned task resembles keeps its base score exactly, so a
// catalog whose new tasks do not repeat old ones ranks as it did without
// feedback; a task that paraphrases a learned one lifts the tools it needed,
// even when their descriptions share no word with it. docs/rank.md has the
// measurements that chose this over indexing past tasks as a bm25 field.

// FeedbackOptions tune a Feedback. A nil *FeedbackOptions, and every zero
// field, means the default.
type FeedbackOptions struct {
	// PerTool caps how many tasks one tool learns (default 64); past the cap
	// the oldest task of that tool is forgotten.
	PerTool int
	// Weight of the learned score against the base score, 0..1 (default 1).
	Weight float64
	// Threshold is the similarity, 0..1, below which a learned task says
	// nothing about a query (default 0.1).
	Threshold float64
	// Known, if set, reports whether a tool name exists; unknown names are
	// ignored and counted ([FeedbackStats.Unknown]), which saves their memory.
	// nil accepts every name. Rankings do not depend on it: when scoring,
	// a tool the ranked catalog does not hold is left out in any case.
	Known func(name string) bool
}

func (o *FeedbackOptions) withDefaults() FeedbackOptions {
	var v FeedbackOptions
	if o != nil {
		v = *o
	}
	if v.PerTool <= 0 {
		v.PerTool = DefaultFeedbackPerTool
	}
	if v.Weight <= 0 {
		v.Weight = DefaultFeedbackWeight
	}
	if v.Threshold <= 0 {
		v.Threshold = DefaultFeedbackThreshold
	}
	v.Weight = min(v.Weight, 1)
	v.Threshold = min(v.Threshold, 0.99)
	return v
}

// FeedbackStats counts what a Feedback holds and what it refused.
type FeedbackStats struct {
	Pairs   int `json:"pairs"`   // (task, tool) pairs held
	Tools   int `json:"tools"`   // tools with at least one task
	Unknown int `json:"unknown"` // tool names ignored because Known said no
	Evicted int `json:"evicted"` // pairs forgotten for the per-tool cap
}

// Feedback is what ranking has learned from past selections. It is safe for
// concurrent use: pairs may be added and removed while queries run, and a
// query sees each pair either wholly or not at all.
type Feedback struct {
	opts FeedbackOptions

	mu     sync.RWMutex
	tasks  map[string]*fbTask     // task text -> task
	byID   map[uint32]*fbTask     // task id -> task
	norms  []float64              // task id -> its norm (dense; ids are never reused)
	post   map[string][]fbPosting // term -> the tasks holding it, by id
	pool   sync.Pool              // *[]float64, similar's accumulator
	byTool map[string][]uint32    // tool -> its tasks, oldest first
	nextID uint32
	pairs  int
	// gen counts changes to the pairs held. The idf and the task norms are
	// those of the tasks that speak for the ranked catalog, so any change, or
	// another catalog, moves them: they are worked out again, all of them, by
	// the next query (view), which makes a similarity a function of the pairs
	// held and the catalog alone, whatever order or batching (Add, Replay,
	// the cores) brought the pairs there.
	gen   uint64
	views []*fbView // the views of the last catalogs queried, newest first
	stats FeedbackStats
}

// fbView is what a Feedback holds as one catalog sees it, at one gen: the
// tasks that needed one of the catalog's tools (active), their number, each
// term's document frequency among them, and their norms.
type fbView struct {
	cat    weak.Pointer[Catalog] // nil: every tool counts
	gen    uint64
	n      int
	active []bool         // by task id; nil: every task held is active
	df     map[string]int // nil when active is nil: len(post[term])
	norms  []float64      // by task id
}

// feedbackViews is how many catalogs' views a Feedback keeps: one per
// registry that ranks with it (the C library shares a store's Feedback
// between the selectors naming it), and the previous version of each.
const feedbackViews = 4

// fbPosting is one (term, task) pair.
type fbPosting struct {
	id uint32
	tf uint16
}

// fbTask is one learned task text and the tools it needed.
type fbTask struct {
	id    uint32
	query string
	tf    []termCount
	tools []string
}

// NewFeedback returns an empty Feedback.
func NewFeedback(opts *FeedbackOptions) *Feedback {
	return &Feedback{
		opts:   opts.withDefaults(),
		tasks:  map[string]*fbTask{},
		byID:   map[uint32]*fbTask{},
		post:   map[string][]fbPosting{},
		byTool: map[string][]uint32{},
	}
}

// CheckFeedbackPair is the one check of a feedback pair, shared by Add,
// Remove and the stores that read pairs from files and Redis.
func CheckFeedbackPair(query string, tools []string) error {
	if strings.TrimSpace(query) == "" {
		return fmt.Errorf("%w: the query is empty", ErrFeedback)
	}
	if len(query) > MaxFeedbackQueryBytes {
		return fmt.Errorf("%w: the query is %d bytes, over the limit of %d", ErrFeedback, len(query), MaxFeedbackQueryBytes)
	}
	if len(tools) == 0 {
		return fmt.Errorf("%w: no tool names", ErrFeedback)
	}
	if len(tools) > MaxFeedbackTools {
		return fmt.Errorf("%w: %d tool names, over the limit of %d", ErrFeedback, len(tools), MaxFeedbackTools)
	}
	for i, t := range tools {
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("%w: tool name %d is empty", ErrFeedback, i+1)
		}
	}
	return nil
}

// Check says why Add would refuse (query, tools), without learning anything:
// the pair is malformed (CheckFeedbackPair), or the query has no word that is
// not a stopword. Replay skips such a query instead, so a store's learner
// checks here before recording a pair it could never learn from.
func (f *Feedback) Check(query string, tools []string) error {
	if err := CheckFeedbackPair(query, tools); err != nil {
		return err
	}
	if !hasWords(query) {
		return noWords(query)
	}
	return nil
}

func noWords(query string) error {
	return fmt.Errorf("%w: the query %q has no words to learn from", ErrFeedback, clip(query, 60))
}

// termCount is one term of a task text and how often it occurs.
type termCount struct {
	term string
	n    uint16
}

// termFreq analyses a task text into its distinct terms with their counts,
// sorted by term (a slice, not a map: loading a store makes one per task).
func termFreq(query string) []termCount { return countTerms(indexTerms(query)) }

// countTerms sorts ts and counts each distinct term.
func countTerms(ts []string) []termCount {
	slices.Sort(ts)
	out := make([]termCount, 0, len(ts))
	for _, t := range ts {
		if k := len(out) - 1; k >= 0 && out[k].term == t {
			if out[k].n < math.MaxUint16 {
				out[k].n++
			}
			continue
		}
		out = append(out, termCount{t, 1})
	}
	return out
}

// Add learns that query needed each of tools. It returns how many pairs it
// learned: names Known rejects are ignored and counted, and a pair already
// held is not learned twice. A query with no words to learn from is an error.
func (f *Feedback) Add(query string, tools ...string) (int, error) {
	if err := CheckFeedbackPair(query, tools); err != nil {
		return 0, err
	}
	known := make([]string, 0, len(tools))
	unknown := 0
	for _, t := range tools {
		if f.opts.Known != nil && !f.opts.Known(t) {
			unknown++
			continue
		}
		known = append(known, t)
	}
	f.mu.RLock()
	task := f.tasks[query]
	f.mu.RUnlock()
	var tf []termCount
	if task == nil {
		if tf = termFreq(query); len(tf) == 0 {
			return 0, noWords(query)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats.Unknown += unknown
	added := 0
	for _, t := range known {
		task = f.tasks[query]
		if task != nil && slices.Contains(task.tools, t) {
			continue
		}
		if ids := f.byTool[t]; len(ids) >= f.opts.PerTool {
			f.unlearn(f.byID[ids[0]], t)
			f.stats.Evicted++
		}
		f.learn(query, tf, t)
		added++
	}
	return added, nil
}

// learn adds the pair (query, tool), indexing the task first if it is new
// (tf: its term frequencies, worked out here when nil). f.mu is held for
// writing.
func (f *Feedback) learn(query string, tf []termCount, tool string) {
	task := f.tasks[query]
	if task == nil {
		if tf == nil {
			tf = termFreq(query)
		}
		task = f.newTask(query, tf)
	}
	task.tools = append(task.tools, tool)
	f.byTool[tool] = append(f.byTool[tool], task.id)
	f.pairs++
	f.gen++
}

// newTask indexes a task text. f.mu is held for writing.
func (f *Feedback) newTask(query string, tf []termCount) *fbTask {
	task := &fbTask{id: f.nextID, query: query, tf: tf}
	f.nextID++
	f.tasks[query] = task
	f.byID[task.id] = task
	for _, x := range tf {
		f.post[x.term] = append(f.post[x.term], fbPosting{task.id, x.n})
	}
	return task
}

// view returns the view of the pairs held from catalog c (nil: every tool
// counts), worked out when a pair came or went since it was made, or when c
// has none yet; it returns with f.mu held for reading. Working out a view
// costs one pass over the held tasks' terms, paid by the first query after a
// change: 0.7 ms with bfcl's first half learned (1,250 tasks;
// BenchmarkFeedbackQuery/fresh, against 18 us for a query with nothing
// changed).
func (f *Feedback) view(c *Catalog) *fbView {
	key := weak.Make(c)
	f.mu.RLock()
	for {
		for _, v := range f.views {
			if v.cat == key && v.gen == f.gen {
				return v
			}
		}
		f.mu.RUnlock()
		f.mu.Lock()
		v := f.newView(c, key)
		views := []*fbView{v}
		for _, old := range f.views {
			if old.cat != key && old.cat.Value() != nil && len(views) < feedbackViews {
				views = append(views, old)
			}
		}
		f.views = views
		f.mu.Unlock()
		f.mu.RLock()
	}
}

// newView works out the view of the pairs held from catalog c. f.mu is held
// for writing.
func (f *Feedback) newView(c *Catalog, key weak.Pointer[Catalog]) *fbView {
	v := &fbView{cat: key, gen: f.gen, n: len(f.byID), norms: make([]float64, f.nextID)}
	inCatalog := func(tool string) bool { _, ok := c.Pos(tool); return ok }
	if c != nil {
		for tool := range f.byTool {
			if !inCatalog(tool) {
				v.active = make([]bool, f.nextID)
				break
			}
		}
	}
	if v.active != nil {
		for tool, ids := range f.byTool {
			if inCatalog(tool) {
				for _, id := range ids {
					v.active[id] = true
				}
			}
		}
		v.n, v.df = 0, map[string]int{}
		for _, t := range f.byID {
			if v.active[t.id] {
				v.n++
				for _, x := range t.tf {
					v.df[x.term]++
				}
			}
		}
	}
	// Each term's idf once (a log per term, not per occurrence).
	n := float64(v.n)
	idf := make(map[string]float64, len(f.post))
	for term, p := range f.post {
		idf[term] = idfOf(n, v.docFreq(term, p))
	}
	for _, t := range f.byID {
		if v.active != nil && !v.active[t.id] {
			continue
		}
		s := 0.0
		for _, x := range t.tf {
			w := float64(x.n) * idf[x.term]
			s += w * w
		}
		v.norms[t.id] = math.Sqrt(s)
	}
	return v
}

// docFreq is how many of the view's tasks hold term (p: its postings).
func (v *fbView) docFreq(term string, p []fbPosting) int {
	if v.df == nil {
		return len(p)
	}
	return v.df[term]
}

// idfOf is a smoothed idf: with few learned tasks, a query word no task
// holds must not outweigh every shared word.
func idfOf(n float64, df int) float64 { return math.Log(1 + (n+1)/(float64(df)+1)) }

// Holds returns how many of the pairs (query, tool) f holds: learned and not
// since removed or pushed out by the per-tool cap. The query is matched
// exactly, as Remove matches it.
func (f *Feedback) Holds(query string, tools ...string) int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	task := f.tasks[query]
	if task == nil {
		return 0
	}
	n := 0
	for _, t := range slices.Compact(slices.Sorted(slices.Values(tools))) {
		if slices.Contains(task.tools, t) {
			n++
		}
	}
	return n
}

// Remove forgets that query needed each of tools (an executor outcome
// withdrew the selection). It returns how many pairs it forgot.
func (f *Feedback) Remove(query string, tools ...string) (int, error) {
	if err := CheckFeedbackPair(query, tools); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range tools {
		if task := f.tasks[query]; task != nil && slices.Contains(task.tools, t) {
			f.unlearn(task, t)
			n++
		}
	}
	return n, nil
}

// unlearn forgets the pair (task, tool), and the task when it has no tool
// left. f.mu is held for writing.
func (f *Feedback) unlearn(task *fbTask, tool string) {
	task.tools = slices.DeleteFunc(task.tools, func(t string) bool { return t == tool })
	ids := slices.DeleteFunc(f.byTool[tool], func(id uint32) bool { return id == task.id })
	if len(ids) == 0 {
		delete(f.byTool, tool)
	} else {
		f.byTool[tool] = ids
	}
	f.pairs--
	f.gen++
	if len(task.tools) > 0 {
		return
	}
	delete(f.tasks, task.query)
	delete(f.byID, task.id)
	for _, x := range task.tf {
		term := x.term
		p := slices.DeleteFunc(f.post[term], func(x fbPosting) bool { return x.id == task.id })
		if len(p) == 0 {
			delete(f.post, term)
		} else {
			f.post[term] = p
		}
	}
}

// Stats returns the counts of f.
func (f *Feedback) Stats() FeedbackStats {
	f.mu.RLock()
	defer f.mu.RUnlock()
	s := f.stats
	s.Pairs = f.pairs
	s.Tools = len(f.byTool)
	return s
}

// feedbackNearBest: a learned tool counts for a query only when its best
// task is at least this close to the query as the best task of any tool.
const feedbackNearBest = 0.9

// similar returns, for each tool of catalog c (nil: every tool) with a
// learned task resembling q, the highest cosine similarity (idf-weighted
// terms) between q and its tasks, keeping only tools above the threshold and
// near the best. Only the tasks that needed one of c's tools count (see the
// package comment of this file).
func (f *Feedback) similar(c *Catalog, q *Query) map[string]float64 {
	terms := q.Terms()
	if len(terms) == 0 {
		return nil
	}
	v := f.view(c)
	defer f.mu.RUnlock()
	n := float64(v.n)
	if v.n == 0 {
		return nil
	}
	// The query's distinct terms in term order: floating-point sums taken
	// in one order, so the same query always scores the same.
	qtf := countTerms(slices.Clone(terms))
	qnorm := 0.0
	accp, _ := f.pool.Get().(*[]float64)
	if accp == nil {
		accp = new([]float64)
	}
	defer f.pool.Put(accp)
	if len(*accp) < int(f.nextID) {
		*accp = make([]float64, f.nextID+f.nextID/4+16)
	}
	acc := *accp
	var touched []uint32
	common := max(v.n/100, 64)
	for _, x := range qtf {
		p := f.post[x.term]
		df := v.docFreq(x.term, p)
		w := idfOf(n, df)
		qw := float64(x.n) * w
		qnorm += qw * qw
		// A word most learned tasks hold says little about which one the
		// query repeats: it counts in the query's norm only.
		if df > common {
			continue
		}
		for _, x := range p {
			if v.active != nil && !v.active[x.id] {
				continue
			}
			if acc[x.id] == 0 {
				touched = append(touched, x.id)
			}
			acc[x.id] += qw * float64(x.tf) * w
		}
	}
	if len(touched) == 0 {
		return nil
	}
	qnorm = math.Sqrt(qnorm)
	out := map[string]float64{}
	best := 0.0
	for _, id := range touched {
		d := acc[id]
		acc[id] = 0
		sim := min(1, d/(qnorm*v.norms[id]))
		if sim <= f.opts.Threshold {
			continue
		}
		task := f.byID[id]
		best = max(best, sim)
		for _, tool := range task.tools {
			if v.active != nil {
				if _, ok := c.Pos(tool); !ok {
					continue
				}
			}
			if sim > out[tool] {
				out[tool] = sim
			}
		}
	}
	// Only the tools of the tasks most like the query speak for it.
	for tool, sim := range out {
		if sim < feedbackNearBest*best {
			delete(out, tool)
		}
	}
	return out
}

// gain maps a similarity to the share of the remaining score it earns.
func (f *Feedback) gain(sim float64) float64 {
	g := clamp01((sim - f.opts.Threshold) / (1 - f.opts.Threshold))
	return f.opts.Weight * g * g
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
