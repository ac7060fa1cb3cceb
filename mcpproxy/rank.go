package mcpproxy

import (
	"context"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/toolselect/toolselect/registry"
)

// Hit is one ranked tool.
type Hit struct {
	Entry *registry.Entry
	// Score is normalised to 0..1.
	Score float64
}

// RankOptions are the per-query options a Ranker receives.
type RankOptions struct {
	// Limit is the number of hits wanted (at least 1).
	Limit int
	// AllowUnsafe includes tools whose Safe is false.
	AllowUnsafe bool
}

// Ranker orders a registry's tools for a query. The proxy calls it for
// find_tool and for the "top" exposure mode. Implementations must be safe for
// concurrent use and must notice registry changes (registry.Generation).
type Ranker interface {
	Rank(ctx context.Context, reg *registry.Registry, query string, opts RankOptions) ([]Hit, error)
}

// RankerFunc adapts a function to the Ranker interface.
type RankerFunc func(ctx context.Context, reg *registry.Registry, query string, opts RankOptions) ([]Hit, error)

// Rank calls f.
func (f RankerFunc) Rank(ctx context.Context, reg *registry.Registry, query string, opts RankOptions) ([]Hit, error) {
	return f(ctx, reg, query, opts)
}

// keywordRanker is the fallback used when no Ranker is configured: a
// token-overlap scorer with inverse document frequency, where matches in the
// tool's name weigh more than matches in its description or parameters. It
// caches each entry's tokens and rebuilds when the registry changes.
type keywordRanker struct {
	mu    sync.Mutex
	gen   uint64
	reg   *registry.Registry
	docs  []kwDoc
	df    map[string]int
	valid bool
}

type kwDoc struct {
	e     *registry.Entry
	name  map[string]bool
	other map[string]bool
}

// NewKeywordRanker returns the built-in token-overlap ranker.
func NewKeywordRanker() Ranker { return &keywordRanker{} }

func (k *keywordRanker) index(reg *registry.Registry) ([]kwDoc, map[string]int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	entries, gen := reg.Snapshot()
	if k.valid && k.reg == reg && k.gen == gen {
		return k.docs, k.df
	}
	docs := make([]kwDoc, len(entries))
	df := map[string]int{}
	for i, e := range entries {
		d := kwDoc{e: e, name: map[string]bool{}, other: map[string]bool{}}
		t := e.Def()
		for _, w := range tokens(t.Name) {
			d.name[w] = true
		}
		text := t.Description + " " + strings.Join(t.Tags, " ") + " " + paramText(t.Parameters)
		for _, w := range tokens(text) {
			d.other[w] = true
		}
		seen := map[string]bool{}
		for w := range d.name {
			seen[w] = true
		}
		for w := range d.other {
			seen[w] = true
		}
		for w := range seen {
			df[w]++
		}
		docs[i] = d
	}
	k.docs, k.df, k.reg, k.gen, k.valid = docs, df, reg, gen, true
	return docs, df
}

func (k *keywordRanker) Rank(ctx context.Context, reg *registry.Registry, query string, opts RankOptions) ([]Hit, error) {
	docs, df := k.index(reg)
	q := uniq(tokens(query))
	if len(q) == 0 || len(docs) == 0 {
		return nil, nil
	}
	n := float64(len(docs))
	idf := make([]float64, len(q))
	var total float64
	for i, w := range q {
		idf[i] = math.Log(1 + n/float64(1+df[w]))
		total += idf[i] * 2
	}
	var hits []Hit
	for _, d := range docs {
		if !opts.AllowUnsafe && !d.e.Def().Safe {
			continue
		}
		var s float64
		for i, w := range q {
			switch {
			case d.name[w]:
				s += 2 * idf[i]
			case d.other[w]:
				s += idf[i]
			}
		}
		if s > 0 {
			hits = append(hits, Hit{Entry: d.e, Score: s / total})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > opts.Limit {
		hits = hits[:opts.Limit]
	}
	return hits, ctx.Err()
}

// paramText collects property names and descriptions from a schema.
func paramText(raw []byte) string {
	v, err := registry.DecodeValue(raw)
	if err != nil {
		return ""
	}
	var b strings.Builder
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 4 {
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if d, ok := m["description"].(string); ok {
			b.WriteString(d)
			b.WriteByte(' ')
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for name, sub := range props {
				b.WriteString(name)
				b.WriteByte(' ')
				walk(sub, depth+1)
			}
		}
	}
	walk(v, 0)
	return b.String()
}

// tokens lower-cases and splits text on non-alphanumerics and camelCase,
// drops a few stop words and strips a plural "s".
func tokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			w := strings.ToLower(string(cur))
			cur = cur[:0]
			if stop[w] || len(w) < 2 {
				return
			}
			if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
				w = w[:len(w)-1]
			}
			out = append(out, w)
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

func uniq(ws []string) []string {
	seen := map[string]bool{}
	out := ws[:0]
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

var stop = map[string]bool{
	"the": true, "an": true, "and": true, "or": true, "of": true, "to": true, "in": true, "for": true,
	"on": true, "with": true, "is": true, "it": true, "this": true, "that": true, "be": true, "by": true,
	"from": true, "as": true, "at": true, "me": true, "my": true, "please": true, "can": true, "you": true,
}
