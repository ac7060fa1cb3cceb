package rank

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/toolselect/toolselect/rank/internal/wordnet"
)

// Words the catalog does not use. A query often names what a tool does in
// other words than the tool: "git hub" for a tool that says github,
// "random quote" for getrandomquote, "automobile" for a tool about cars.
// The bm25 scorer widens such a query, each way switchable in Options and
// each weighted below the query's own words:
//
//   - names as words: adjacent query words that the catalog knows as one word
//     are joined ("git hub" -> github); a query word the catalog does not know
//     is split into words it does know ("getrandomquote" -> get random quote);
//     and a concatenated word in a tool's name is met by the words it is made
//     of (the index's compounds, below);
//   - related words: a query word that no tool contains brings its WordNet
//     relatives that tools do contain (synonyms, broader terms, derived forms
//     and a few narrower terms of its first senses; package
//     rank/internal/wordnet). Words the catalog has are never expanded: that
//     only adds noise.
//
// The server a tool belongs to is the third way (namespace.go's score).

// Weights of expansion terms, relative to the query's own terms (1).
const (
	joinWeight     = 1.0 // "git hub" -> github is the same word
	splitWeight    = 1.0 // "getrandomquote" -> random is the same word
	compoundWeight = 0.8 // random meets getrandomquote in a name: a part of a word
	relatedWeight  = 0.5 // "automobile" -> car is a neighbour, not the word
	// maxRelated bounds the relatives one query word brings.
	maxRelated = 10
	// minPart is the shortest word a concatenation is split into.
	minPart = 3
	// minCompound is the shortest word tried as a concatenation.
	minCompound = 6
)

// expansion is one term a query gains: its index term and how a reason says
// where it came from ("related to 'car'").
type expansion struct {
	term   string
	weight float64
	via    string
}

// expandQuery returns the terms a query gains for the catalog whose terms
// known reports. raws are the query's words as written (lower-cased), in
// order; isWord reports whether the catalog writes a string as a word or has
// it as a term (no stemming: a split asks it of every substring it tries);
// have reports whether a term is already one of the query's.
func expandQuery(raws []string, known func(term string) bool, isWord func(p string) bool, have func(term string) bool, q *Query) []expansion {
	var out []expansion
	seen := map[string]bool{}
	add := func(t string, w float64, via string) {
		if t == "" || seen[t] || have(t) || !known(t) {
			return
		}
		seen[t] = true
		out = append(out, expansion{term: t, weight: w, via: via})
	}
	if !q.NoNameWords {
		for i := 0; i+1 < len(raws); i++ {
			a, b := raws[i], raws[i+1]
			if isASCIIAlnumString(a) && isASCIIAlnumString(b) {
				add(termOf([]byte(a+b)), joinWeight, "joined from '"+a+" "+b+"'")
			}
		}
	}
	for _, w := range raws {
		t := termOf([]byte(w))
		if t == "" || known(t) || !isASCIIAlpha(w) {
			continue
		}
		related := wordnet.Related(w)
		if !q.NoNameWords && related == "" { // an English word is not a concatenation
			if parts := splitWord(w, isWord); len(parts) > 1 {
				for _, p := range parts {
					add(termOf([]byte(p)), splitWeight, "split from '"+w+"'")
				}
				continue
			}
		}
		if !q.NoRelatedWords {
			n := 0
			for r := range strings.FieldsSeq(related) {
				if n == maxRelated {
					break
				}
				n++
				add(termOf([]byte(r)), relatedWeight, "related to '"+w+"'")
			}
		}
	}
	return out
}

// splitWord splits w into the fewest words of at least minPart letters that
// known accepts, or returns nil when there is no such split. The last word
// may also be known by its stem (getrandomquote in a catalog that writes
// quotes), the others must be known as written. Between splits
// of as many words, the one whose first word is longest wins (then the
// second's, and so on), so the result never depends on map order.
func splitWord(w string, known func(string) bool) []string {
	if len(w) < minCompound {
		return nil
	}
	n := len(w)
	// best[i]: fewest words for w[i:], next[i]: where the first ends.
	best := make([]int, n+1)
	next := make([]int, n+1)
	for i := range best {
		best[i] = -1
	}
	best[n] = 0
	for i := n - minPart; i >= 0; i-- {
		for j := n; j >= i+minPart; j-- { // longest first: ties keep it
			if best[j] < 0 || (i == 0 && j == n) {
				continue
			}
			if c := best[j] + 1; (best[i] < 0 || c < best[i]) && (known(w[i:j]) || j == n && known(termOf([]byte(w[i:j])))) {
				best[i], next[i] = c, j
			}
		}
	}
	if best[0] < 2 {
		return nil
	}
	var out []string
	for i := 0; i < n; i = next[i] {
		out = append(out, w[i:next[i]])
	}
	return out
}

func isASCIIAlnumString(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isASCIIAlnum(s[i]) {
			return false
		}
	}
	return true
}

// compounds maps the terms of an index to the concatenated words of tool
// names made of them: a tool named getrandomquote is met by a query saying
// random or quote. It is worked out once per index, on the first query that
// wants it, from the words of the name field: a word of minCompound or more
// letters that splits into two or more words the catalog uses elsewhere.
type compounds struct {
	once  sync.Once
	parts map[uint32][]compound // part term id -> the compounds holding it
}

// compound is a term of the index that is a concatenation of others.
type compound struct {
	id   uint32
	term string
}

func (idx *bm25Index) compoundsOf(term uint32) []compound {
	idx.comp.once.Do(idx.findCompounds)
	return idx.comp.parts[term]
}

func (idx *bm25Index) findCompounds() {
	parts := map[uint32][]compound{}
	known := idx.isWord
	for term, tid := range idx.terms {
		list := idx.postings[tid]
		var raw string
		for _, p := range list {
			if p.tf[fieldName] > 0 {
				raw = idx.words[p.word]
				break
			}
		}
		if len(raw) < minCompound || !isASCIIAlpha(raw) || wordnet.Known(raw) {
			continue // an English word of its own (download, password), not a concatenation
		}
		for _, w := range splitWord(raw, known) {
			pid, ok := idx.terms[termOf([]byte(w))]
			if ok && pid != tid {
				parts[pid] = append(parts[pid], compound{tid, term})
			}
		}
	}
	for _, l := range parts {
		slices.SortFunc(l, func(a, b compound) int { return cmp.Compare(a.id, b.id) })
	}
	idx.comp.parts = parts
}

// isWord reports whether the catalog writes p as a word, or has p as a term.
func (idx *bm25Index) isWord(p string) bool {
	if _, ok := idx.wordIDs[p]; ok {
		return true
	}
	_, ok := idx.terms[p]
	return ok
}
