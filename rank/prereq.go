package rank

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/toolselect/toolselect/registry"
)

// Prerequisites. A tool often needs an input that the user never gives and
// a sibling tool yields: a map server's find_parking(latitude, longitude)
// needs the coordinates that its geocode_address returns, a chat server's
// post_message(channel_id) the id that list_channels returns. A query that
// matches the first rarely names the second ("where can I park near the
// Forbidden City?"), so the ranker adds it: when one of the top picks
// requires a parameter, the sibling tools (same namespace) that yield it
// come right after it.
//
// A sibling B yields the required parameter p of tool A when every term of
// p's name (as the analyser splits and stems it; terms of three or more
// characters) is in B's name or description, and B takes no parameter that
// shares a term with p (reverse_geocode mentions latitude and longitude
// because it takes them). A parameter that more than maxProducers siblings
// seem to yield is too generic to say which one is meant ("data", "text"),
// and adds none; so does a parameter whose value the caller chooses (see
// chosenParams).
const (
	// prereqTop is how many of the top picks bring their prerequisites.
	prereqTop = 3
	// prereqScoreShare is a prerequisite's share of the score of the pick
	// that brings it: below that pick, which is what the query asked for,
	// as a helper it needs.
	prereqScoreShare = 0.5
	// maxProducers is the most siblings that may yield one parameter.
	maxProducers = 2
)

type prereq struct {
	pos    int
	params []string // the parameters it yields
}

// prereqIndex finds prerequisites for one catalog version. Only the top
// picks of a query need theirs, so they are worked out on first use, per
// tool and per (namespace, parameter), and remembered: building the index
// costs one pass over the names.
//
// Concurrent queries share it. Each table is read and written under mu, but
// what goes into it is worked out outside the lock (see memo): a batch of
// queries over both cores once spent a fifth of its time here, the second
// core waiting for the first to finish a tool's prerequisites.
type prereqIndex struct {
	cat     *Catalog
	entries []*registry.Entry
	members map[string][]int // namespace -> positions, for namespaces of two tools or more
	nsOf    []string         // position -> namespace

	mu     sync.Mutex
	params map[int]map[string]bool // position -> terms of its parameter names
	text   map[int]map[string]bool // position -> terms of its local name and description (without a bm25 index)
	yields map[string][]int        // namespace + "\x00" + parameter -> producer positions
	of     map[int][]prereq        // position -> prerequisites
}

// memo returns m[k], working it out with f on a miss. f runs outside mu, so
// two callers may both work out the same key; f depends only on the catalog
// version, so both get the same value, and the first one stored is kept.
func memo[K comparable, V any](mu *sync.Mutex, m map[K]V, k K, f func() V) V {
	mu.Lock()
	v, ok := m[k]
	mu.Unlock()
	if ok {
		return v
	}
	v = f()
	mu.Lock()
	defer mu.Unlock()
	if prev, ok := m[k]; ok {
		return prev
	}
	m[k] = v
	return v
}

// prerequisites returns the prerequisite index of c, built once per catalog
// version.
func prerequisites(c *Catalog) *prereqIndex {
	v, _ := c.State("prerequisites", func(any) (any, error) {
		x := newPrereqIndex(c.entries)
		x.cat = c
		return x, nil
	})
	return v.(*prereqIndex)
}

func newPrereqIndex(entries []*registry.Entry) *prereqIndex {
	x := &prereqIndex{entries: entries, members: map[string][]int{}, nsOf: make([]string, len(entries)),
		params: map[int]map[string]bool{}, text: map[int]map[string]bool{}, yields: map[string][]int{}, of: map[int][]prereq{}}
	for pos, e := range entries {
		ns, _ := splitNamespace(e.Name())
		x.nsOf[pos] = ns
		if ns != "" {
			x.members[ns] = append(x.members[ns], pos)
		}
	}
	for ns, m := range x.members {
		if len(m) < 2 {
			delete(x.members, ns)
		}
	}
	return x
}

// prereqsOf returns the tools that yield the parameters the tool at pos
// requires, in catalog order.
func (x *prereqIndex) prereqsOf(pos int) []prereq {
	return memo(&x.mu, x.of, pos, func() []prereq {
		ns := x.nsOf[pos]
		if _, ok := x.members[ns]; !ok {
			return nil
		}
		var out []prereq
		required := slices.Sorted(slices.Values(x.entries[pos].Required()))
		// Few parameters have producers, and which are chosen takes decoding
		// the tool's schema: that is worked out only once one has some.
		var chosen map[string]bool
		for _, p := range slices.Compact(required) {
			producers := memo(&x.mu, x.yields, ns+"\x00"+p, func() []int { return x.producersOf(ns, p) })
			if len(producers) == 0 {
				continue
			}
			if chosen == nil {
				chosen = chosenParams(x.entries[pos])
				if chosen == nil {
					chosen = map[string]bool{}
				}
			}
			if chosen[p] {
				continue
			}
		next:
			for _, b := range producers {
				for j := range out {
					if out[j].pos == b {
						out[j].params = append(out[j].params, p)
						continue next
					}
				}
				out = append(out, prereq{pos: b, params: []string{p}})
			}
		}
		slices.SortFunc(out, func(a, b prereq) int { return a.pos - b.pos })
		return out
	})
}

// chosenParams returns the parameters of a tool whose value the caller
// chooses rather than takes from another tool: a value from a fixed list
// (enum, const), a flag (boolean), or a set of options (object).
func chosenParams(e *registry.Entry) map[string]bool {
	def := e.Def()
	if !def.HasSchema() {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Type  any             `json:"type"`
			Enum  json.RawMessage `json:"enum"`
			Const json.RawMessage `json:"const"`
		} `json:"properties"`
	}
	if json.Unmarshal(def.Parameters, &s) != nil {
		return nil
	}
	out := map[string]bool{}
	for name, p := range s.Properties {
		if p.Enum != nil || p.Const != nil {
			out[name] = true
			continue
		}
		var types []string
		switch t := p.Type.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, v := range t {
				if s, ok := v.(string); ok {
					types = append(types, s)
				}
			}
		}
		chosen := len(types) > 0
		for _, t := range types {
			if t != "boolean" && t != "object" && t != "null" {
				chosen = false
			}
		}
		out[name] = chosen
	}
	return out
}

// paramsOf returns the terms of the parameter names of the tool at pos,
// analysed once.
func (x *prereqIndex) paramsOf(pos int) map[string]bool {
	return memo(&x.mu, x.params, pos, func() map[string]bool {
		t := map[string]bool{}
		if def := x.entries[pos].Def(); def.HasSchema() {
			var buf []byte
			schemaText(def.Parameters, &buf, func(name []byte) {
				analyze(string(name), func(term string) { t[term] = true })
			}, func([]byte) {})
		}
		return t
	})
}

// textOf returns the terms of the local name and description of the tool at
// pos, analysed once (only needed when the catalog has no bm25 index).
func (x *prereqIndex) textOf(pos int) map[string]bool {
	return memo(&x.mu, x.text, pos, func() map[string]bool {
		def := x.entries[pos].Def()
		t := map[string]bool{}
		_, local := splitNamespace(def.Name)
		note := func(term string) { t[term] = true }
		analyze(local, note)
		analyze(def.Description, note)
		return t
	})
}

// mentionsAll reports whether the tool at pos has every term in its local
// name or description. It reads the default bm25 index when the catalog has
// one (it indexes exactly those two fields, among others), and analyses the
// tool's text otherwise.
func (x *prereqIndex) mentionsAll(pos int, terms []string) bool {
	if v, ok := x.bm25().(*bm25View); ok {
		if doc, ok := v.idx.docOf[x.entries[pos]]; ok {
			for _, term := range terms {
				tid, ok := v.idx.terms[term]
				if !ok {
					return false
				}
				p, ok := findPosting(v.idx.postings[tid], doc)
				if !ok || p.tf[fieldName] == 0 && p.tf[fieldDesc] == 0 {
					return false
				}
			}
			return true
		}
	}
	t := x.textOf(pos)
	for _, term := range terms {
		if !t[term] {
			return false
		}
	}
	return true
}

// bm25 returns the catalog's default bm25 index if it has been built.
func (x *prereqIndex) bm25() any {
	if x.cat == nil {
		return nil
	}
	return x.cat.built(defaultScorer.stateKey())
}

// producersOf returns the members of namespace ns that yield parameter p:
// they mention every significant term of p and take no parameter sharing
// one of them. It returns none when more than maxProducers do.
func (x *prereqIndex) producersOf(ns, p string) []int {
	var terms []string
	for _, t := range indexTerms(p) {
		if len(t) >= 3 && !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		return nil
	}
	var out []int
	for _, b := range x.members[ns] {
		if !x.mentionsAll(b, terms) {
			continue
		}
		takes := x.paramsOf(b)
		ok := true
		for _, term := range terms {
			if takes[term] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if out = append(out, b); len(out) > maxProducers {
			return nil
		}
	}
	return out
}

// prereqReason explains a prerequisite pick.
func prereqReason(of string, params []string) string {
	return "yields " + strings.Join(params, ", ") + " that " + of + " requires"
}
