package mcpproxy

import (
	"context"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// Hit is one ranked tool.
type Hit struct {
	Entry *registry.Entry
	// Score is normalised to 0..1.
	Score float64
}

// RankOptions are the per-query options a Ranker receives.
type RankOptions struct {
	// Limit is the number of hits wanted (at least 1).
	Limit int
	// AllowUnsafe includes tools whose Safe is false.
	AllowUnsafe bool
}

// Ranker orders a registry's tools for a query. The proxy calls it for
// find_tool and for the "top" exposure mode. Implementations must be safe for
// concurrent use and must notice registry changes (registry.Generation).
type Ranker interface {
	Rank(ctx context.Context, reg *registry.Registry, query string, opts RankOptions) ([]Hit, error)
}

// RankerFunc adapts a function to the Ranker interface.
type RankerFunc func(ctx context.Context, reg *registry.Registry, query string, opts RankOptions) ([]Hit, error)

// Rank calls f.
func (f RankerFunc) Rank(ctx context.Context, reg *registry.Registry, query string, opts RankOptions) ([]Hit, error) {
	return f(ctx, reg, query, opts)
}

// bm25Ranker ranks with the rank package (BM25 by default), which keeps one
// index per registry and updates it as upstream tools change.
type bm25Ranker struct{ opts rank.Options }

// NewRanker returns the default Ranker: rank.Rank over the registry with the
// given options as a base (MaxCandidates and AllowUnsafe are set per query).
// A nil base means rank's defaults.
func NewRanker(base *rank.Options) Ranker {
	r := &bm25Ranker{}
	if base != nil {
		r.opts = *base
	}
	return r
}

func (b *bm25Ranker) Rank(ctx context.Context, reg *registry.Registry, query string, opts RankOptions) ([]Hit, error) {
	o := b.opts
	o.MaxCandidates = max(1, opts.Limit)
	o.AllowUnsafe = opts.AllowUnsafe
	picks, err := rank.Rank(ctx, reg, query, &o)
	if err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(picks))
	for _, p := range picks {
		if p.Entry == nil {
			continue
		}
		hits = append(hits, Hit{Entry: p.Entry, Score: p.Score})
	}
	return hits, nil
}
