package rank

import (
	"context"
	"slices"
	"strings"

	"github.com/toolselect/toolselect/internal/toolname"
)

// Suggest returns up to k tools a caller most likely meant by a name that
// names no tool (a model's call of a tool it half remembers), best first:
//
//  1. tools whose own name, after the namespace (the MCP proxy's upstream
//     prefix, a module), is the name given, or the name's own part after
//     its namespace: "read_text_file" and "filesystem__read_text_file"
//     both give "fs__read_text_file". Case and the separators '-', '.' and
//     ' ' against '_' do not count.
//  2. tools whose name is a few edits away (Damerau-Levenshtein on the
//     names, full or own part; characters the name given left out cost
//     half and do not count against the bound, so an abbreviation such as
//     "read_txt" is near "read_text_file"), fewest such edits first, then
//     nearest; when the name gives a namespace that has tools, only its
//     tools;
//  3. the ranking of the name as a query (the words of the name against
//     names and descriptions).
//
// opts filters as in Rank (AllowUnsafe, Roles, Capabilities, Filter) and
// tunes step 3; its MaxCandidates is k.
func (r *Ranker) Suggest(ctx context.Context, name string, k int, opts *Options) ([]string, error) {
	if k <= 0 {
		return nil, nil
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	o.MaxCandidates = k
	d := o.withDefaults()
	var names []string
	for _, e := range r.Catalog().entries {
		if eligible(e, &d) {
			names = append(names, e.Name())
		}
	}
	out := toolname.Near(name, names)
	if len(out) < k {
		picks, err := r.Rank(ctx, strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(name), &o)
		if err != nil {
			return nil, err
		}
		for _, p := range picks {
			if p.Entry != nil && p.Provenance.Source != SourcePrerequisite && !slices.Contains(out, p.Tool) {
				out = append(out, p.Tool)
			}
		}
	}
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}
