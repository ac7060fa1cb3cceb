// Package wordnet gives the related words of an English word, so that a
// query word no tool uses can still meet the tools that use its synonyms,
// broader terms or derived forms ("automobile" -> car, "picture" -> image).
//
// The table is derived from WordNet 3.0 (Princeton University; see NOTICE):
// for each of about 64,000 single-word lemmas, up to ten related words from
// its first sense in each part of speech. It is embedded packed
// (rank/internal/packed: the 0.5 MB of words plain, searched in place, and
// the 1.9 MB of related words deflated in 16 KiB blocks and written in
// Ascii85, so the file is text, 0.9 MB): nothing is
// unpacked at start-up, Known reads the words only, and Related inflates the
// one block its word's related words are in, on the block's first use.
// gen.go rebuilds it from Debian's wordnet-base.
package wordnet

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/toolselect/toolselect/rank/internal/packed"
)

// data is the table: lines "word\trelated words\n" sorted by word bytes,
// packed.
//
//go:embed related.packed
var data string

// table opens data on first use (reading the block index only).
var table = sync.OnceValue(func() *packed.Table { return packed.MustOpen(data) })

// Related returns the related words of w (lower-case), separated by single
// spaces, or "" when the table does not know w. A plural or inflected form
// is looked up under its base form when the form itself is not listed
// ("cars" -> car, "pictures" -> picture, "songs" -> song).
func Related(w string) string {
	var r string
	find(w, func(f string) bool { r = lookup(f); return r != "" })
	return r
}

// Known reports whether Related(w) is not "", without unpacking any related
// words: the index build asks it of every catalog word.
func Known(w string) bool { return find(w, table().Has) }

// find calls has with w, then with its base forms, until has is true, and
// reports whether it was.
func find(w string, has func(string) bool) bool {
	if has(w) {
		return true
	}
	for _, sfx := range suffixes {
		if b, ok := strings.CutSuffix(w, sfx.cut); ok && len(b)+len(sfx.add) >= 3 {
			if has(b + sfx.add) {
				return true
			}
		}
	}
	return false
}

// suffixes are WordNet's own detachment rules (morphy, wnintro(7WN)), in its order.
var suffixes = []struct{ cut, add string }{
	{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"},
	{"men", "man"}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""},
	{"ing", "e"}, {"ing", ""}, {"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"},
}

// lookup returns the related words of exactly w, or "".
func lookup(w string) string {
	r, _ := table().Lookup(w)
	return r
}
