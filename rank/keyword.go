package rank

import (
	"context"
	"sort"

	"github.com/toolselect/toolselect/registry"
)

// Keyword is the plain reference scorer: the fraction of the query's distinct
// terms found anywhere in a tool's name, description, parameters or tags.
// Keyword{} is ready to use.
type Keyword struct{}

// Name implements Scorer.
func (Keyword) Name() string { return "keyword" }

// keywordState is the keyword scorer's per-catalog state: each tool's terms,
// each with the first word of the tool that analyses to it (what a reason
// shows), by catalog position and by entry (for the next catalog version to
// reuse).
type keywordState struct {
	docs    []map[string]string
	byEntry map[*registry.Entry]map[string]string
}

// state returns the keyword state of c, building or updating it on first use.
func (Keyword) state(c *Catalog) (*keywordState, error) {
	v, err := c.State("keyword", func(prev any) (any, error) {
		st := &keywordState{
			docs:    make([]map[string]string, len(c.entries)),
			byEntry: make(map[*registry.Entry]map[string]string, len(c.entries)),
		}
		var old map[*registry.Entry]map[string]string
		if p, ok := prev.(*keywordState); ok {
			old = p.byEntry
		}
		d := newDocTerms()
		for i, e := range c.entries {
			m, ok := old[e]
			if !ok {
				analyzeEntry(e, d)
				m = make(map[string]string, len(d.order))
				for j, t := range d.order {
					m[d.term(t)] = d.raws[d.first[j]]
				}
			}
			st.docs[i], st.byEntry[e] = m, m
		}
		return st, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*keywordState), nil
}

// prepare builds the state of c ([Ranker.Prepare]).
func (k Keyword) prepare(c *Catalog) error {
	_, err := k.state(c)
	return err
}

// Score implements Scorer.
func (k Keyword) Score(ctx context.Context, c *Catalog, q *Query, n int, keep func(pos int) bool) ([]Hit, error) {
	st, err := k.state(c)
	if err != nil {
		return nil, err
	}
	terms := uniq(q.Terms())
	if len(terms) == 0 || n <= 0 {
		return nil, nil
	}
	h := topK{k: n}
	for pos, doc := range st.docs {
		if pos&1023 == 1023 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		found := 0
		for _, t := range terms {
			if _, ok := doc[t]; ok {
				found++
			}
		}
		if found == 0 {
			continue
		}
		s := float32(found) / float32(len(terms))
		if h.wants(s, pos) && (keep == nil || keep(pos)) {
			h.push(s, pos, 0)
		}
	}
	items := h.sorted()
	hits := make([]Hit, len(items))
	for i, it := range items {
		hits[i] = Hit{Pos: it.pos, Score: float64(it.score)}
		for _, t := range terms {
			if w, ok := st.docs[it.pos][t]; ok {
				hits[i].Matched = append(hits[i].Matched, t)
				hits[i].Words = append(hits[i].Words, w)
			}
		}
		if q.Debug {
			hits[i].Components = map[string]float64{"found": float64(len(hits[i].Matched)), "terms": float64(len(terms))}
		}
	}
	return hits, nil
}

func uniq(terms []string) []string {
	out := append([]string(nil), terms...)
	sort.Strings(out)
	j := 0
	for i, t := range out {
		if i == 0 || t != out[j-1] {
			out[j] = t
			j++
		}
	}
	return out[:j]
}
