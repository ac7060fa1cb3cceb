// Package toolname holds the rules about tool names that need no catalog
// index: splitting a name into its namespace and its own part, and finding
// the registered names a misspelt one most likely meant. rank's
// Ranker.Suggest adds its ranking to Near; the registry, the executor and the
// C ABI use Near alone, so a program that only registers and runs tools
// links no ranking dictionaries for its suggestions.
package toolname

import (
	"slices"
	"strings"
)

// Split splits a tool name into the namespace that groups it with its
// siblings (an MCP server, a Python module) and its own local name:
// "github__create_issue" -> ("github", "create_issue"), "math.factorial" ->
// ("math", "factorial"), "fs/read" -> ("fs", "read"). "__" wins over "."
// and "/", which split at their last occurrence. A name with no separator
// has no namespace.
func Split(name string) (ns, local string) {
	if i := strings.Index(name, "__"); i > 0 && i+2 < len(name) {
		return name[:i], name[i+2:]
	}
	if i := strings.LastIndexAny(name, "./"); i > 0 && i+1 < len(name) {
		return name[:i], name[i+1:]
	}
	return "", name
}

// Near returns the names among candidates that name most likely meant, best
// first:
//
//  1. names whose own part, after the namespace (the MCP proxy's upstream
//     prefix, a module), is the name given, or the name's own part after
//     its namespace: "read_text_file" and "filesystem__read_text_file"
//     both give "fs__read_text_file". Case and the separators '-', '.' and
//     ' ' against '_' do not count.
//  2. names a few edits away (Damerau-Levenshtein on the names, full or own
//     part; characters the name given left out cost half and do not count
//     against the bound, so an abbreviation such as "read_txt" is near
//     "read_text_file"), fewest such edits first, then nearest; when the
//     name gives a namespace that has candidates, only its names.
//
// A name nothing resembles gives nil.
func Near(name string, candidates []string) []string {
	ns, local := Split(name)
	wantNS, wantFull, wantLocal := Fold(ns), Fold(name), Fold(local)

	type near struct {
		name    string
		otherNS bool // not the namespace the name gives
		hard    int  // edits other than characters left out
		cost    int
	}
	knownNS := false
	for _, c := range candidates {
		if n, _ := Split(c); wantNS != "" && Fold(n) == wantNS {
			knownNS = true
			break
		}
	}
	var exact []string
	var close []near
	// The edits that are not a character left out (each costs 2) may be
	// at most a quarter of the name's own part, at least one.
	limit := 2 * max(1, len([]rune(wantLocal))/4)
	for _, c := range candidates {
		cNS, cLocal := Split(c)
		gotFull, gotLocal := Fold(c), Fold(cLocal)
		if gotLocal == wantLocal || gotLocal == wantFull {
			exact = append(exact, c)
			continue
		}
		otherNS := wantNS != "" && Fold(cNS) != wantNS
		if otherNS && knownNS {
			continue // the name gives a namespace that has tools: a tool of another is no near miss
		}
		best := near{name: c, otherNS: otherNS, hard: -1}
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
	return out
}

// DidYouMean words suggestions for the end of an error message:
// ` (did you mean "a" or "b"?)`, or "" for none.
func DidYouMean(suggestions []string) string {
	if len(suggestions) == 0 {
		return ""
	}
	q := make([]string, len(suggestions))
	for i, s := range suggestions {
		q[i] = `"` + s + `"`
	}
	if len(q) == 1 {
		return " (did you mean " + q[0] + "?)"
	}
	return " (did you mean " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1] + "?)"
}

// Fold is a tool name as Near compares it: lower case, '-', '.' and ' '
// read as '_'.
func Fold(s string) string { return folder.Replace(strings.ToLower(s)) }

var folder = strings.NewReplacer("-", "_", ".", "_", " ", "_")

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
