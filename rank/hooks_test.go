package rank

import (
	"context"

	"github.com/toolselect/toolselect/registry"
)

// Test-only ways in: a Ranker of its own over a registry (For shares one
// per registry), a plain list ranked once, and a prepared query.

func newRanker(reg *registry.Registry) *Ranker { return &Ranker{reg: reg} }

func rankEntries(ctx context.Context, entries []*registry.Entry, input any, opts *Options) ([]Pick, error) {
	return newStatic(entries).Rank(ctx, input, opts)
}

func newQuery(text string) *Query { return &Query{Text: text} }
