package rank

import (
	"context"
	"sort"

	"github.com/toolselect/toolselect/registry"
)

// prefilterFunc has the shape of selector.Prefilter: it narrows the eligible
// tools (already filtered for safety, roles and capabilities, in catalog
// order) to the ones offered to the model.
type prefilterFunc = func(ctx context.Context, query string, eligible []*registry.Entry) ([]*registry.Entry, error)

// Prefilter returns a selector pre-filter (it has the shape of
// selector.Prefilter, which rank does not import) that ranks the eligible tools and
// keeps the top opts.MaxCandidates, plus always-active and related tools, in
// catalog order (so the same set always gives the same prompt bytes). The
// eligible list is ranked with r's index: tools r's catalog does not hold
// yet are indexed incrementally for a static Ranker. Pass a registry-backed
// Ranker (For) when the eligible tools come from that registry.
//
// The selector has already applied its own filters, so opts' Roles,
// Capabilities and AllowUnsafe are ignored (unsafe tools that reached the
// eligible list stay eligible).
func (r *Ranker) Prefilter(opts *Options) func(ctx context.Context, query string, eligible []*registry.Entry) ([]*registry.Entry, error) {
	o := opts.withDefaults()
	o.AllowUnsafe, o.Roles, o.Capabilities = true, nil, nil
	o.NoReasons = true // only the tools come out
	return func(ctx context.Context, query string, eligible []*registry.Entry) ([]*registry.Entry, error) {
		if len(eligible) == 0 {
			return nil, nil
		}
		c := r.Catalog()
		if !r.holds(c, eligible) {
			if r.reg != nil {
				// Not from this registry: rank the list on its own.
				c = newCatalog(eligible)
			} else {
				r.SetEntries(eligible)
				c = r.Catalog()
			}
		}
		allowed := make(map[*registry.Entry]struct{}, len(eligible))
		for _, e := range eligible {
			allowed[e] = struct{}{}
		}
		only := func(pos int) bool { _, ok := allowed[c.entries[pos]]; return ok }
		picks, err := r.rank(ctx, c, query, &o, only)
		if err != nil {
			return nil, err
		}
		return inCatalogOrder(c, picks), nil
	}
}

// prefilter is (*Ranker).Prefilter over a Ranker of its own, for callers
// without a registry at hand.
func prefilter(opts *Options) prefilterFunc {
	return newStatic(nil).Prefilter(opts)
}

// holds reports whether every eligible entry is in c.
func (r *Ranker) holds(c *Catalog, eligible []*registry.Entry) bool {
	if len(eligible) > len(c.entries) {
		return false
	}
	for _, e := range eligible {
		p, ok := c.Pos(e.Name())
		if !ok || c.entries[p] != e {
			return false
		}
	}
	return true
}

func inCatalogOrder(c *Catalog, picks []Pick) []*registry.Entry {
	pos := make([]int, 0, len(picks))
	for _, p := range picks {
		if i, ok := c.Pos(p.Tool); ok {
			pos = append(pos, i)
		}
	}
	sort.Ints(pos)
	out := make([]*registry.Entry, len(pos))
	for i, p := range pos {
		out[i] = c.entries[p]
	}
	return out
}
