package rank

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"sort"
	"strings"
	"sync"
)

// Learning from the selections served. A Feedback holds (task text, tool)
// pairs: "this task needed this tool". It is a scorer of its own, fused with
// the base scorer (bm25 by default) when Options.Feedback is set:
//
//	sim(tool)  = the highest cosine similarity (idf-weighted terms) between
//	             the query and a task the tool served
//	gain(tool) = max(0, (sim - Threshold) / (1 - Threshold))
//	score      = base + (1 - base) * Weight * gain
//
// A tool no learned task resembles keeps its base score exactly, so a
// catalog whose new tasks do not repeat old ones ranks as it did without
// feedback; a task that paraphrases a learned one lifts the tools it needed,
// even when their descriptions share no word with it. docs/rank.md has the
// measurements that chose this over indexing past tasks as a bm25 field.

// Defaults of FeedbackOptions.
const (
	DefaultFeedbackPerTool   = 64
	DefaultFeedbackWeight    = 0.9
	DefaultFeedbackThreshold = 0.3
	// MaxFeedbackQueryBytes bounds the task text of one feedback pair.
	MaxFeedbackQueryBytes = 64 << 10
	// MaxFeedbackTools bounds the tools of one feedback pair.
	MaxFeedbackTools = 256
)

// ErrFeedback is matched by every error about a feedback pair
// (errors.Is(err, rank.ErrFeedback)).
var ErrFeedback = errors.New("rank: invalid feedback")

// FeedbackOptions tune a Feedback. A nil *FeedbackOptions, and every zero
// field, means the default.
type FeedbackOptions struct {
	// PerTool caps how many tasks one tool learns (default 64); past the cap
	// the oldest task of that tool is forgotten.
	PerTool int
	// Weight of the learned score against the base score, 0..1 (default 0.9).
	Weight float64
	// Threshold is the similarity, 0..1, below which a learned task says
	// nothing about a query (default 0.3).
	Threshold float64
	// Known, if set, reports whether a tool name exists; unknown names are
	// ignored and counted (FeedbackStats.Unknown). nil accepts every name;
	// names the ranked catalog does not hold are skipped when scoring.
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
	docs   map[uint32]*fbDoc
	post   map[string]map[uint32]uint16 // term -> doc -> occurrences
	byTool map[string][]uint32          // tool -> its docs, oldest first
	nextID uint32
	stats  FeedbackStats
}

// fbDoc is one learned (task, tool) pair.
type fbDoc struct {
	tool  string
	query string
	tf    map[string]uint16
}

// NewFeedback returns an empty Feedback.
func NewFeedback(opts *FeedbackOptions) *Feedback {
	return &Feedback{
		opts:   opts.withDefaults(),
		docs:   map[uint32]*fbDoc{},
		post:   map[string]map[uint32]uint16{},
		byTool: map[string][]uint32{},
	}
}

// CheckFeedbackPair is the one check of a feedback pair, shared by Add, Remove and
// the stores that read pairs from files and Redis.
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

// termFreq analyses a task text into term counts.
func termFreq(query string) map[string]uint16 {
	tf := map[string]uint16{}
	for _, t := range Terms(query) {
		if tf[t] < math.MaxUint16 {
			tf[t]++
		}
	}
	return tf
}

// Add learns that query needed each of tools. It returns how many pairs it
// learned: names Known rejects are ignored and counted, and a pair already
// held is not learned twice. A query with no words to learn from is an error.
func (f *Feedback) Add(query string, tools ...string) (int, error) {
	if err := CheckFeedbackPair(query, tools); err != nil {
		return 0, err
	}
	tf := termFreq(query)
	if len(tf) == 0 {
		return 0, fmt.Errorf("%w: the query %q has no words to learn from", ErrFeedback, clip(query, 60))
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
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats.Unknown += unknown
	added := 0
	for _, t := range known {
		if f.find(query, t) >= 0 {
			continue
		}
		if ids := f.byTool[t]; len(ids) >= f.opts.PerTool {
			f.drop(ids[0])
			f.stats.Evicted++
		}
		id := f.nextID
		f.nextID++
		f.docs[id] = &fbDoc{tool: t, query: query, tf: tf}
		for term, n := range tf {
			p := f.post[term]
			if p == nil {
				p = map[uint32]uint16{}
				f.post[term] = p
			}
			p[id] = n
		}
		f.byTool[t] = append(f.byTool[t], id)
		added++
	}
	return added, nil
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
		if i := f.find(query, t); i >= 0 {
			f.drop(f.byTool[t][i])
			n++
		}
	}
	return n, nil
}

// find returns the index in byTool[tool] of the pair (query, tool), or -1.
func (f *Feedback) find(query, tool string) int {
	for i, id := range f.byTool[tool] {
		if f.docs[id].query == query {
			return i
		}
	}
	return -1
}

// drop forgets doc id. f.mu is held for writing.
func (f *Feedback) drop(id uint32) {
	d := f.docs[id]
	delete(f.docs, id)
	for term := range d.tf {
		p := f.post[term]
		delete(p, id)
		if len(p) == 0 {
			delete(f.post, term)
		}
	}
	ids := f.byTool[d.tool]
	for i, x := range ids {
		if x == id {
			ids = append(ids[:i:i], ids[i+1:]...)
			break
		}
	}
	if len(ids) == 0 {
		delete(f.byTool, d.tool)
	} else {
		f.byTool[d.tool] = ids
	}
}

// Stats returns the counts of f.
func (f *Feedback) Stats() FeedbackStats {
	f.mu.RLock()
	defer f.mu.RUnlock()
	s := f.stats
	s.Pairs = len(f.docs)
	s.Tools = len(f.byTool)
	return s
}

// similar returns, for each tool with a learned task resembling q, the
// highest cosine similarity (idf-weighted terms) between q and its tasks,
// keeping only tools above the threshold.
func (f *Feedback) similar(q *Query) map[string]float64 {
	terms := q.Terms()
	if len(terms) == 0 {
		return nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n := float64(len(f.docs))
	if n == 0 {
		return nil
	}
	// A smoothed idf: with few learned tasks, a query word no task holds
	// must not outweigh every shared word.
	idf := func(term string) float64 {
		df := float64(len(f.post[term]))
		return math.Log(1 + (n+1)/(df+1))
	}
	qtf := map[string]float64{}
	for _, t := range terms {
		qtf[t]++
	}
	qnorm := 0.0
	dot := map[uint32]float64{}
	for t, c := range qtf {
		w := idf(t)
		qw := c * w
		qnorm += qw * qw
		for id, dc := range f.post[t] {
			dot[id] += qw * float64(dc) * w
		}
	}
	if len(dot) == 0 {
		return nil
	}
	qnorm = math.Sqrt(qnorm)
	out := map[string]float64{}
	for id, d := range dot {
		doc := f.docs[id]
		dn := 0.0
		for t, c := range doc.tf {
			w := float64(c) * idf(t)
			dn += w * w
		}
		sim := d / (qnorm * math.Sqrt(dn))
		if sim > f.opts.Threshold && sim > out[doc.tool] {
			out[doc.tool] = sim
		}
	}
	return out
}

// similarTools is similar over one document per tool, the union of its
// learned tasks (document expansion), scored by bm25 and normalised by the
// query's ideal score.
func (f *Feedback) similarTools(q *Query) map[string]float64 {
	terms := q.Terms()
	if len(terms) == 0 {
		return nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n := float64(len(f.byTool))
	if n == 0 {
		return nil
	}
	qtf := map[string]float64{}
	for _, t := range terms {
		qtf[t]++
	}
	toolLen := map[string]float64{}
	total := 0.0
	for _, d := range f.docs {
		l := 0.0
		for _, c := range d.tf {
			l += float64(c)
		}
		toolLen[d.tool] += l
		total += l
	}
	avg := total / n
	const k1, b = 0.9, 0.75
	score := map[string]float64{}
	ideal := 0.0
	for t, c := range qtf {
		tf := map[string]float64{}
		for id, dc := range f.post[t] {
			tf[f.docs[id].tool] += float64(dc)
		}
		df := float64(len(tf))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		if df == 0 {
			idf = math.Log(1 + (n+0.5)/1.5)
		}
		w := idf * qtfWeight(c) * (k1 + 1)
		ideal += w
		for tool, x := range tf {
			score[tool] += w * x / (x + k1*(1-b+b*toolLen[tool]/avg))
		}
	}
	out := map[string]float64{}
	for tool, sc := range score {
		if sim := sc / ideal; sim > f.opts.Threshold {
			out[tool] = sim
		}
	}
	return out
}

// gain maps a similarity to the share of the remaining score it earns.
func (f *Feedback) gain(sim float64) float64 {
	g := clamp01((sim - f.opts.Threshold) / (1 - f.opts.Threshold))
	if p, _ := strconv.ParseFloat(os.Getenv("FBPOW"), 64); p > 0 {
		g = math.Pow(g, p)
	}
	return f.opts.Weight * g
}

// feedbackScorer fuses a base scorer with what a Feedback learned.
type feedbackScorer struct {
	base Scorer
	fb   *Feedback
}

// Scorer returns base fused with f (see the package comment of feedback.go):
// the result orders tools by base + (1-base)*Weight*gain.
func (f *Feedback) Scorer(base Scorer) Scorer {
	if base == nil {
		base = defaultScorer
	}
	return &feedbackScorer{base: base, fb: f}
}

// Name implements Scorer.
func (s *feedbackScorer) Name() string { return s.base.Name() + "+feedback" }

// maxLifted bounds how many learned tools one query may add to the base hits.
const maxLifted = 64

// Score implements Scorer.
func (s *feedbackScorer) Score(ctx context.Context, c *Catalog, q *Query, k int, keep func(pos int) bool) ([]Hit, error) {
	var sims map[string]float64
	if os.Getenv("FBAGG") != "" {
		sims = s.fb.similarTools(q)
	} else {
		sims = s.fb.similar(q)
	}
	if r, _ := strconv.ParseFloat(os.Getenv("FBREL"), 64); r > 0 {
		best := 0.0
		for _, v := range sims {
			best = max(best, v)
		}
		for k, v := range sims {
			if v < r*best {
				delete(sims, k)
			}
		}
	}
	if len(sims) == 0 {
		return s.base.Score(ctx, c, q, k, keep)
	}
	// Learned tools in the catalog, best first, bounded.
	type lift struct {
		pos  int
		gain float64
	}
	lifts := make([]lift, 0, len(sims))
	for name, sim := range sims {
		pos, ok := c.Pos(name)
		if !ok || (keep != nil && !keep(pos)) {
			continue
		}
		lifts = append(lifts, lift{pos, s.fb.gain(sim)})
	}
	sort.Slice(lifts, func(i, j int) bool {
		if lifts[i].gain != lifts[j].gain {
			return lifts[i].gain > lifts[j].gain
		}
		return lifts[i].pos < lifts[j].pos
	})
	if len(lifts) > maxLifted {
		lifts = lifts[:maxLifted]
	}
	hits, err := s.base.Score(ctx, c, q, k+len(lifts), keep)
	if err != nil {
		return nil, err
	}
	at := make(map[int]int, len(hits))
	for i, h := range hits {
		at[h.Pos] = i
	}
	for _, l := range lifts {
		i, ok := at[l.pos]
		if !ok {
			i = len(hits)
			hits = append(hits, Hit{Pos: l.pos})
			at[l.pos] = i
		}
		h := &hits[i]
		base := h.Score
		h.Score = clamp01(base + (1-base)*l.gain)
		if q.Debug {
			if h.Components == nil {
				h.Components = map[string]float64{}
			}
			h.Components["feedback"] = h.Score - base
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Pos < hits[j].Pos
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
