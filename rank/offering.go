package rank

import (
	"context"

	"github.com/toolselect/toolselect/registry"
)

// Offering is the ranking behind the selector's offer budget and search
// rounds: it satisfies selector.Ranker (which rank does not import), so
//
//	sel, err := selector.New(client, &cfg, selector.WithRanker(rank.NewOffering(nil)))
//
// offers every eligible tool while their view fits cfg.OfferTokens, else the
// top cfg.TopK ranked for the task, and answers the model's searches.
type Offering struct {
	opts    Options
	counter *TokenCounter
}

// NewOffering returns an Offering ranking with opts (nil: bm25 and rank's
// defaults; MaxCandidates is set per call, and the selector has already
// applied Roles, Capabilities and AllowUnsafe). Tokens are counted in
// o200k_base, the encoding of current OpenAI models.
func NewOffering(opts *Options) *Offering {
	var o Options
	if opts != nil {
		o = *opts
	}
	c, err := NewTokenCounter(EncodingO200k)
	if err != nil {
		panic(err) // the encoding is linked in: cannot happen
	}
	return &Offering{opts: o, counter: c}
}

// Rank returns the top k of eligible for query, with prerequisites and
// always-active tools, in catalog order (see (*Ranker).Prefilter). With a
// registry, its shared index is used (For(reg)).
func (o *Offering) Rank(ctx context.Context, reg *registry.Registry, query string, eligible []*registry.Entry, k int) ([]*registry.Entry, error) {
	opts := o.opts
	opts.MaxCandidates = k
	if reg == nil {
		return Prefilter(&opts)(ctx, query, eligible)
	}
	return For(reg).Prefilter(&opts)(ctx, query, eligible)
}

// Fits reports whether entries written in format f take at most budget
// tokens (see (*TokenCounter).Fits).
func (o *Offering) Fits(entries []*registry.Entry, f registry.Format, budget int) (bool, error) {
	return o.counter.Fits(entries, f, budget)
}
