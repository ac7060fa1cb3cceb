package rank

import (
	"context"
	"fmt"
	"sort"
)

// feedbackScorer fuses a base scorer with what a Feedback learned.
type feedbackScorer struct {
	base Scorer
	fb   *Feedback
}

// prepare builds the base scorer's index ([Ranker.Prepare]).
func (s *feedbackScorer) prepare(c *Catalog) error { return prepareScorer(s.base, c) }

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
	sims := s.fb.similar(c, q)
	if len(sims) == 0 {
		return s.base.Score(ctx, c, q, k, keep)
	}
	// Learned tools in the catalog, best first, bounded.
	type lift struct {
		pos       int
		gain, sim float64
	}
	lifts := make([]lift, 0, len(sims))
	for name, sim := range sims {
		pos, ok := c.Pos(name)
		if !ok || (keep != nil && !keep(pos)) {
			continue
		}
		lifts = append(lifts, lift{pos, s.fb.gain(sim), sim})
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
		h.Note = fmt.Sprintf("a past task %.0f%% like this one needed it", 100*l.sim)
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
