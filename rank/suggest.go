package rank

import (
	"context"
	"slices"
	"strings"
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
	c := r.Catalog()
	d := o.withDefaults()
	ns, local := splitNamespace(name)
	wantNS, wantFull, wantLocal := foldName(ns), foldName(name), foldName(local)

	type near struct {
		name    string
		otherNS bool // not the namespace the name gives
		hard    int  // edits other than characters left out
		cost    int
	}
	knownNS := false
	for _, e := range c.entries {
		if n, _ := splitNamespace(e.Name()); wantNS != "" && foldName(n) == wantNS && eligible(e, &d) {
			knownNS = true
			break
		}
	}
	var exact []string
	var close []near
	// The edits that are not a character left out (each costs 2) may be
	// at most a quarter of the name's own part, at least one.
	limit := 2 * max(1, len([]rune(wantLocal))/4)
	for _, e := range c.entries {
		if !eligible(e, &d) {
			continue
		}
		eNS, eLocal := splitNamespace(e.Name())
		gotFull, gotLocal := foldName(e.Name()), foldName(eLocal)
		if gotLocal == wantLocal || gotLocal == wantFull {
			exact = append(exact, e.Name())
			continue
		}
		otherNS := wantNS != "" && foldName(eNS) != wantNS
		if otherNS && knownNS {
			continue // the name gives an upstream that has tools: a tool of another is no near miss
		}
		best := near{name: e.Name(), otherNS: otherNS, hard: -1}
		for _, pair := range [][2]string{{wantFull, gotFull}, {wantLocal, gotLocal}, {wantFull, gotLocal}} {
			if 2*missing(pair[0], pair[1]) > limit {
				continue // each such character is a substitution or a drop: too far, without the table
			}
			cost := editCost(pair[0], pair[1])
			// cost = 2 per substitution or swap, 3 per character dropped
			// (2, and the 1 of the character left out in its place), 1 per
			// character left out beyond the difference in length.
			hard := cost - (len([]rune(pair[1])) - len([]rune(pair[0])))
			if hard <= limit && (best.hard < 0 || hard < best.hard || hard == best.hard && cost < best.cost) {
				best.hard, best.cost = hard, cost
			}
		}
		if best.hard >= 0 {
			close = append(close, best)
		}
	}
	slices.SortStableFunc(close, func(a, b near) int {
		if a.otherNS != b.otherNS {
			if a.otherNS {
				return 1
			}
			return -1
		}
		if a.hard != b.hard {
			return a.hard - b.hard
		}
		return a.cost - b.cost
	})
	out := exact
	for _, n := range close {
		out = append(out, n.name)
	}
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

// foldName is a tool name as Suggest compares it: lower case, '-', '.' and
// ' ' read as '_'.
func foldName(s string) string { return nameFolder.Replace(strings.ToLower(s)) }

var nameFolder = strings.NewReplacer("-", "_", ".", "_", " ", "_")

// editCost is the optimal-string-alignment distance from want (the name
// given) to got (a tool's name), in half edits: substituting, dropping or
// swapping a character costs 2, a character of got that want left out
// costs 1.
func editCost(want, got string) int {
	a, b := []rune(want), []rune(got)
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = 2 * i
		for j := 1; j <= len(b); j++ {
			sub := 2
			if a[i-1] == b[j-1] {
				sub = 0
			}
			cur[j] = min(prev[j]+2, cur[j-1]+1, prev[j-1]+sub)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+2)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// missing counts the characters of want that got does not have (as a
// multiset): each is at least one substitution or drop.
func missing(want, got string) int {
	var have [256]int
	for i := 0; i < len(got); i++ {
		have[got[i]]++
	}
	n := 0
	for i := 0; i < len(want); i++ {
		if have[want[i]] > 0 {
			have[want[i]]--
		} else {
			n++
		}
	}
	return n
}
