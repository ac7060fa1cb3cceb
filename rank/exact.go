package rank

import (
	"strings"
	"unicode"
)

// exactNames returns the catalog positions of tools whose exact name appears
// in text, in order of first appearance.
//
// A name matches as a whole token (or a run of whole tokens, for names that
// hold spaces), case-sensitively, ignoring surrounding quotes, brackets and
// sentence punctuation. A name that is one plain lower-case word ("add",
// "news", "translate") is also an everyday word, so it only counts when the
// input marks it as code: in backticks or quotes, or followed by "(".
func exactNames(c *Catalog, text string) []int {
	if c.Len() == 0 || text == "" {
		return nil
	}
	c.Pos("") // build the name map
	type tok struct {
		s      string // stripped
		marked bool   // quoted or called
	}
	fields := strings.Fields(text)
	toks := make([]tok, len(fields))
	for i, f := range fields {
		s := strings.TrimLeft(f, "\"'`([{<")
		lead := len(f) - len(s)
		s = strings.TrimRight(s, "\"'`)]}>,;:!?.")
		trail := f[lead+len(s):]
		marked := lead > 0 && strings.ContainsAny(f[:lead], "\"'`") ||
			strings.ContainsAny(trail, "\"'`") || strings.HasPrefix(trail, "(")
		// "name(args)" : the call parenthesis is inside the field.
		if i := strings.IndexByte(s, '('); i > 0 {
			s, marked = s[:i], true
		}
		toks[i] = tok{s: s, marked: marked}
	}
	var out []int
	seen := map[int]bool{}
	for i := range toks {
		// Names of several words are tried only from a word that starts one.
		for n := max(c.multi[toks[i].s], 1); n >= 1; n-- {
			if i+n > len(toks) {
				continue
			}
			name := toks[i].s
			if n > 1 {
				parts := make([]string, n)
				for j := range n {
					parts[j] = toks[i+j].s
				}
				name = strings.Join(parts, " ")
			}
			pos, ok := c.byName[name]
			if !ok || seen[pos] {
				continue
			}
			if plainWord(name) && !toks[i].marked && !toks[i+n-1].marked {
				continue
			}
			seen[pos] = true
			out = append(out, pos)
			break
		}
	}
	return out
}

// plainWord reports whether name is a single lower-case word.
func plainWord(name string) bool {
	for _, r := range name {
		if !unicode.IsLower(r) {
			return false
		}
	}
	return true
}
