package rank

import (
	"context"

	"github.com/toolselect/toolselect/registry"
)

// Hidden returns the tools the caller's filters ([Options.Caller] and its
// shorthands: unsafe tools, roles, capabilities, per-tool rules) kept out
// of picks, the picks Rank returned for the same input and opts, that
// would otherwise have been among them: each with [Pick.Hidden] saying why (the reason
// registry.Eligibility.Check gives), in the order an unfiltered ranking
// puts them. A caller who forgot a role sees here what it cost. With nothing
// filtered out of the catalog it ranks nothing again and returns nil.
func (r *Ranker) Hidden(ctx context.Context, input any, opts *Options, picks []Pick) ([]Pick, error) {
	o := opts.withDefaults()
	rule := registry.Eligibility{AllowUnsafe: o.AllowUnsafe, Roles: o.Roles, Capabilities: o.Capabilities, Ask: o.Caller.Ask, Rules: o.Caller.Rules}
	entries := r.Catalog().entries
	if _, excluded := rule.Filter(entries); len(excluded) == 0 {
		return nil, nil
	}
	open := registry.Eligibility{AllowUnsafe: true}
	for _, e := range entries {
		open = open.With(registry.Eligibility{Roles: e.Def().Roles})
	}
	wide := Options{}
	if opts != nil {
		wide = *opts
	}
	wide.Caller, wide.AllowUnsafe, wide.Roles, wide.Capabilities = open, false, nil, nil
	all, err := r.Rank(ctx, input, &wide)
	if err != nil {
		return nil, err
	}
	shown := make(map[string]bool, len(picks))
	for _, p := range picks {
		shown[p.Tool] = true
	}
	var hidden []Pick
	for _, p := range all {
		if shown[p.Tool] || p.Entry == nil {
			continue
		}
		if why := rule.Check(p.Entry.Def()); why != "" {
			p.Hidden = why
			hidden = append(hidden, p)
		}
	}
	return hidden, nil
}
