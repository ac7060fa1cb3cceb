package rank

import (
	"context"
	"fmt"
)

// Fields of a tool that the bm25 index keeps apart (BM25F).
const (
	fieldName   = iota // the name split into words
	fieldDesc          // the description
	fieldParams        // parameter names, descriptions, titles and enum values
	fieldTags          // tags
	numFields
)

var fieldNames = [numFields]string{"name", "description", "parameters", "tags"}

// bm25Params are a BM25 scorer's parameters, defaults filled in.
type bm25Params struct {
	K1      float64
	Weights [numFields]float64
	B       [numFields]float64
}

var defaultBM25 = bm25Params{
	K1:      0.9,
	Weights: [numFields]float64{3, 1, 0.6, 0.5},
	B:       [numFields]float64{0.75, 0.75, 0.6, 0.3},
}

func (p bm25Params) withDefaults() bm25Params {
	if p.K1 == 0 {
		p.K1 = defaultBM25.K1
	}
	if p.Weights == ([numFields]float64{}) {
		p.Weights = defaultBM25.Weights
	}
	if p.B == ([numFields]float64{}) {
		p.B = defaultBM25.B
	}
	return p
}

// BM25 is the default scorer: BM25F over an inverted index of the tools'
// names, descriptions, parameters and tags. The index is built once per
// catalog, updated incrementally when the catalog changes, and shared by
// concurrent queries. Zero fields, as in &BM25{}, mean the defaults.
type BM25 struct {
	// K1 is the term-frequency saturation (default 0.9).
	K1 float64
	// Weights per field: name, description, parameters, tags
	// (default 3, 1, 0.6, 0.5).
	Weights [numFields]float64
	// B per field is the length normalisation (default 0.75, 0.75, 0.6, 0.3).
	B [numFields]float64
}

// params returns s's parameters with the defaults filled in.
func (s *BM25) params() bm25Params {
	return bm25Params{K1: s.K1, Weights: s.Weights, B: s.B}.withDefaults()
}

// Name implements Scorer.
func (s *BM25) Name() string { return "bm25" }

// stateKey names the scorer's state in a Catalog. The view bakes the
// parameters in, so scorers with other parameters keep views of their own.
func (s *BM25) stateKey() string {
	if p := s.params(); p != defaultBM25 {
		return fmt.Sprintf("bm25 %v", p)
	}
	return "bm25"
}

// Index returns the bm25 index of c, building or updating it on first use.
func (s *BM25) index(c *Catalog) (*bm25View, error) {
	v, err := c.State(s.stateKey(), func(prev any) (any, error) {
		var old *bm25Index
		if pv, ok := prev.(*bm25View); ok {
			old = pv.idx
		}
		idx := updateIndex(old, c.entries)
		return newView(idx, c.entries, s.params()), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*bm25View), nil
}

// prepare builds the index of c ([Ranker.Prepare]).
func (s *BM25) prepare(c *Catalog) error {
	_, err := s.index(c)
	return err
}

// Score implements Scorer.
func (s *BM25) Score(ctx context.Context, c *Catalog, q *Query, k int, keep func(pos int) bool) ([]Hit, error) {
	v, err := s.index(c)
	if err != nil {
		return nil, err
	}
	return v.search(ctx, q, k, keep)
}
