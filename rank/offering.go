package rank

import (
	"context"
	"sync"

	"github.com/toolselect/toolselect/registry"
)

// Offering is the ranking behind the selector's offer budget and search
// rounds: it satisfies selector.Ranker (which rank does not import), so
//
//	cfg.Ranker = &rank.Offering{}
//	sel, err := selector.New(client, &cfg)
//
// offers every eligible tool while their view fits cfg.OfferTokens, else the
// top cfg.TopK ranked for the task, and answers the model's searches. Tokens
// are counted in o200k_base, the encoding of current OpenAI models; its
// vocabulary (about 25 MB in memory) is loaded only when a view over budget
// bytes has to be counted. An Offering is safe for concurrent use; do not
// change Options once it is in use.
type Offering struct {
	// Options rank the tools (zero: bm25 and rank's defaults). MaxCandidates
	// is set per call, and the selector has already applied Roles,
	// Capabilities and AllowUnsafe.
	Options Options

	mu    sync.Mutex
	sizes map[viewKey]viewSize // entries are immutable: their view's size never changes
}

type viewKey struct {
	e *registry.Entry
	f registry.Format
}

// viewSize is one entry's view: its bytes and, once counted, its tokens (-1 before).
type viewSize struct{ bytes, tokens int }

// maxCachedViews bounds the cache; it is emptied when full (registries that
// keep replacing tools would otherwise grow it forever).
const maxCachedViews = 1 << 17

// Rank returns the top k of eligible for query, with prerequisites and
// always-active tools, in catalog order (see (*Ranker).Prefilter). With a
// registry, its shared index is used (For(reg)).
func (o *Offering) Rank(ctx context.Context, reg *registry.Registry, query string, eligible []*registry.Entry, k int) ([]*registry.Entry, error) {
	opts := o.Options
	opts.MaxCandidates = k
	if reg == nil {
		return prefilter(&opts)(ctx, query, eligible)
	}
	return For(reg).Prefilter(&opts)(ctx, query, eligible)
}

// Fits reports whether entries written in format f take at most budget
// tokens. Each tool's entry is counted alone and the counts summed: that sum
// is within about one token per tool of counting the whole list at once (each
// lone entry carries the list's brackets where the list has a comma), so it
// decides on its own away from the budget, and the whole view is counted
// exactly when the sum falls within that margin of it. Counting stops as soon
// as even the margin cannot bring the sum under budget, and a view of at most
// budget bytes fits without counting (a token is at least a byte), so the cost
// is bounded by the budget, not the catalog. Each entry's size is computed
// once per Offering.
func (o *Offering) Fits(entries []*registry.Entry, f registry.Format, budget int) (bool, error) {
	sizes := make([]viewSize, len(entries))
	total := 0
	for i, e := range entries {
		v, err := o.size(e, f, false)
		if err != nil {
			return false, err
		}
		sizes[i] = v
		total += v.bytes
	}
	if total <= budget {
		return true, nil
	}
	total = 0
	for i, e := range entries {
		if sizes[i].tokens < 0 {
			v, err := o.size(e, f, true)
			if err != nil {
				return false, err
			}
			sizes[i] = v
		}
		if total += sizes[i].tokens; total-fitsMargin*(i+1) > budget {
			return false, nil
		}
	}
	if total+fitsMargin*len(entries) <= budget {
		return true, nil
	}
	exact, err := o.Tokens(entries, f)
	if err != nil {
		return false, err
	}
	return exact <= budget, nil
}

// fitsMargin is how many tokens one tool's lone count may differ from its
// share of the whole list's: the brackets it carries alone against the comma
// it has in the list, and a merge across the boundary.
const fitsMargin = 2

// size returns e's view size in format f, its tokens counted when count is set.
func (o *Offering) size(e *registry.Entry, f registry.Format, count bool) (viewSize, error) {
	k := viewKey{e, f}
	o.mu.Lock()
	v, ok := o.sizes[k]
	o.mu.Unlock()
	if ok && (v.tokens >= 0 || !count) {
		return v, nil
	}
	b, err := registry.MarshalView([]*registry.Entry{e}, f, nil)
	if err != nil {
		return viewSize{}, err
	}
	v = viewSize{bytes: len(b), tokens: -1}
	if count {
		v.tokens = o200kCounter().Count(string(b))
	}
	o.mu.Lock()
	if o.sizes == nil {
		o.sizes = map[viewKey]viewSize{}
	} else if len(o.sizes) >= maxCachedViews {
		clear(o.sizes)
	}
	o.sizes[k] = v
	o.mu.Unlock()
	return v, nil
}

// Tokens counts the tokens of entries written in format f: the whole list,
// as the request carries it, in the tokenizer Fits uses.
func (o *Offering) Tokens(entries []*registry.Entry, f registry.Format) (int, error) {
	b, err := registry.MarshalView(entries, f, nil)
	if err != nil {
		return 0, err
	}
	return o200kCounter().Count(string(b)), nil
}
