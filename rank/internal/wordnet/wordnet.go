// Package wordnet gives the related words of an English word, so that a
// query word no tool uses can still meet the tools that use its synonyms,
// broader terms or derived forms ("automobile" -> car, "picture" -> image).
//
// The table is derived from WordNet 3.0 (Princeton University; see NOTICE):
// for each of about 64,000 single-word lemmas, up to ten related words from
// its first sense in each part of speech. It is embedded as plain sorted text
// (2.6 MB) and searched in place, so using it costs nothing at start-up.
// gen.go rebuilds it from Debian's wordnet-base.
package wordnet

import (
	_ "embed"
	"strings"
)

// data is the table: lines "word\trelated words\n" sorted by word bytes.
//
//go:embed related.txt
var data string

// Related returns the related words of w (lower-case), separated by single
// spaces, or "" when the table does not know w. A plural or inflected form
// is looked up under its base form when the form itself is not listed
// ("cars" -> car, "pictures" -> picture, "songs" -> song).
func Related(w string) string {
	if r := lookup(w); r != "" {
		return r
	}
	for _, sfx := range suffixes {
		if b, ok := strings.CutSuffix(w, sfx.cut); ok && len(b)+len(sfx.add) >= 3 {
			if r := lookup(b + sfx.add); r != "" {
				return r
			}
		}
	}
	return ""
}

// suffixes are WordNet's own detachment rules (morphy, wnintro(7WN)), in its order.
var suffixes = []struct{ cut, add string }{
	{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"},
	{"men", "man"}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""},
	{"ing", "e"}, {"ing", ""}, {"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"},
}

// lookup returns the related words of exactly w, or "".
func lookup(w string) string {
	lo, hi := 0, len(data)
	// Binary search over byte offsets: the line holding the middle offset
	// starts after the newline before it.
	for lo < hi {
		m := lo + (hi-lo)/2
		s := lo + strings.LastIndexByte(data[lo:m], '\n') + 1
		tab := s + strings.IndexByte(data[s:], '\t')
		end := s + strings.IndexByte(data[s:], '\n')
		switch head := data[s:tab]; {
		case head == w:
			return data[tab+1 : end]
		case head < w:
			lo = end + 1
		default:
			hi = s
		}
	}
	return ""
}
