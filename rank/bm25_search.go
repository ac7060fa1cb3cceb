package rank

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/toolselect/toolselect/registry"
)

// bm25View is an index seen through one catalog version: document ids mapped
// to catalog positions, and the per-document length norms of the version.
type bm25View struct {
	idx    *bm25Index
	params bm25Params
	pos    []int32              // doc id -> catalog position, -1 when absent
	norm   [][numFields]float32 // doc id -> weight_f / (1 - b_f + b_f*len_f/avg_f)
	// wtf holds, beside each posting, its document's weighted term
	// frequency under this view's norms (sum over fields of tf_f*norm_f, the
	// very float32 expression a query would work out). A query then reads
	// the postings in order and nothing else per posting, not each posting's
	// norms at random by document (2,568 queries over 100k tools: 900 ->
	// 600 ms).
	wtf  [][]float32 // by term id, parallel to idx.postings
	pool sync.Pool   // *scratch
	ns   nsIndex     // the catalog's namespaces (nsscore.go)
}

type scratch struct {
	acc     []float32
	touched []uint32
}

func newView(idx *bm25Index, entries []*registry.Entry, p bm25Params) *bm25View {
	v := &bm25View{idx: idx, params: p}
	v.pos = make([]int32, len(idx.docs))
	for i := range v.pos {
		v.pos[i] = -1
	}
	for i, e := range entries {
		if id, ok := idx.docOf[e]; ok {
			v.pos[id] = int32(i)
		}
	}
	var avg [numFields]float64
	for f := range numFields {
		if idx.live > 0 {
			avg[f] = idx.sumLen[f] / float64(idx.live)
		}
		if avg[f] == 0 {
			avg[f] = 1
		}
	}
	v.norm = make([][numFields]float32, len(idx.docs))
	for id, l := range idx.flen {
		for f := range numFields {
			n := 1 - p.B[f] + p.B[f]*float64(l[f])/avg[f]
			v.norm[id][f] = float32(p.Weights[f] / n)
		}
	}
	total := 0
	for _, l := range idx.postings {
		total += len(l)
	}
	backing := make([]float32, total)
	v.wtf = make([][]float32, len(idx.postings))
	off := 0
	for tid, l := range idx.postings {
		w := backing[off : off+len(l) : off+len(l)]
		off += len(l)
		for j, p := range l {
			w[j] = v.weightedTF(p)
		}
		v.wtf[tid] = w
	}
	n := len(idx.docs)
	v.pool.New = func() any { return &scratch{acc: make([]float32, n)} }
	return v
}

// weightedTF is a posting's term frequency weighted by field and length.
func (v *bm25View) weightedTF(p posting) float32 {
	nrm := &v.norm[p.doc]
	return float32(p.tf[0])*nrm[0] + float32(p.tf[1])*nrm[1] + float32(p.tf[2])*nrm[2] + float32(p.tf[3])*nrm[3]
}

// queryTerm is one distinct analysed query term, or a term the query gained
// (expand.go): those weigh less than 1 and say how they came.
type queryTerm struct {
	term   string
	id     uint32
	qtf    float64 // occurrences in the query
	idf    float64
	weight float64 // 1 for the query's own terms
	via    string  // for a gained term: "related to 'car'", ...
}

func (v *bm25View) queryTerms(q *Query) (qts []queryTerm, own, unknown int, ideal float64) {
	var out []queryTerm
	n := float64(v.idx.live)
	// Unknown query terms still count in the ideal score: a query whose words
	// the catalog has never seen should not score high on the few it knows.
	for _, t := range q.Terms() {
		tid, ok := v.idx.terms[t]
		if !ok {
			unknown++
			continue
		}
		dup := false
		for i := range out {
			if out[i].id == tid {
				out[i].qtf++
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		df := float64(len(v.idx.postings[tid]))
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		out = append(out, queryTerm{term: t, id: tid, qtf: 1, idf: idf, weight: 1})
	}
	maxIDF := math.Log(1 + (n+0.5)/1.5)
	for _, qt := range out {
		ideal += qtfWeight(qt.qtf) * qt.idf
	}
	ideal += float64(unknown) * 0.5 * maxIDF
	ideal *= v.params.K1 + 1
	return v.expand(q, out), len(out), unknown, ideal
}

// expand adds to qts the terms the query gains (expand.go), which do not
// count in the ideal score: they can only fill in for words the catalog
// lacks.
func (v *bm25View) expand(q *Query, qts []queryTerm) []queryTerm {
	if q.NoNameWords && q.NoRelatedWords {
		return qts
	}
	n := float64(v.idx.live)
	idfOf := func(tid uint32) float64 {
		df := float64(len(v.idx.postings[tid]))
		return math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	own := len(qts)
	have := func(t string) bool {
		for _, qt := range qts {
			if qt.term == t {
				return true
			}
		}
		return false
	}
	known := func(t string) bool {
		tid, ok := v.idx.terms[t]
		return ok && len(v.idx.postings[tid]) > 0
	}
	for _, x := range expandQuery(q.Words(), known, v.idx.isWord, have, q) {
		tid := v.idx.terms[x.term]
		qts = append(qts, queryTerm{term: x.term, id: tid, qtf: 1, idf: idfOf(tid), weight: x.weight, via: x.via})
	}
	if !q.NoNameWords {
		for _, qt := range qts {
			for _, c := range v.idx.compoundsOf(qt.id) {
				if len(v.idx.postings[c.id]) == 0 {
					continue
				}
				dup := false
				for i := range qts {
					if qts[i].id == c.id {
						dup = true
						break
					}
				}
				if !dup {
					qts = append(qts, queryTerm{term: c.term, id: c.id, qtf: 1, idf: qt.idf,
						weight: qt.weight * compoundWeight, via: "holds '" + qt.term + "'"})
				}
			}
		}
	}
	for i := range qts[:own] {
		qts[i].weight = 1
	}
	return qts
}

// qtfWeight dampens repeated query terms.
func qtfWeight(qtf float64) float64 { return 1 + math.Log(qtf) }

func (v *bm25View) search(ctx context.Context, q *Query, k int, keep func(pos int) bool) ([]Hit, error) {
	if k <= 0 {
		return nil, nil
	}
	qts, own, unknown, ideal := v.queryTerms(q)
	if len(qts) == 0 || ideal == 0 {
		return nil, nil
	}
	var boosts []nsBoost
	if !q.NoNamespace {
		if ns := v.namespaces(); ns != nil {
			boosts = v.scoreNamespaces(ns, qts, own, unknown, ideal)
		}
	}
	sc := v.pool.Get().(*scratch)
	defer v.pool.Put(sc)
	acc := sc.acc
	touched := sc.touched[:0]
	k1 := float32(v.params.K1)
	for i, qt := range qts {
		if i&3 == 3 && ctx.Err() != nil {
			for _, d := range touched {
				acc[d] = 0
			}
			sc.touched = touched
			return nil, ctx.Err()
		}
		w := float32(qt.idf * qtfWeight(qt.qtf) * (v.params.K1 + 1) * qt.weight)
		wtf := v.wtf[qt.id]
		for j, p := range v.idx.postings[qt.id] {
			tf := wtf[j]
			s := w * tf / (tf + k1)
			if acc[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			acc[p.doc] += s
		}
	}
	for _, b := range boosts {
		for _, d := range v.ns.docs[b.ns] {
			if acc[d] == 0 {
				touched = append(touched, d)
			}
			acc[d] += b.boost
		}
	}
	h := topK{k: k}
	for _, d := range touched {
		s := acc[d]
		acc[d] = 0
		pos := v.pos[d]
		if pos < 0 {
			continue
		}
		if !h.wants(s, int(pos)) {
			continue
		}
		if keep != nil && !keep(int(pos)) {
			continue
		}
		h.push(s, int(pos), d)
	}
	sc.touched = touched
	items := h.sorted()
	hits := make([]Hit, len(items))
	inv := 1 / ideal
	for i, it := range items {
		hits[i] = Hit{Pos: it.pos, Score: clamp01(float64(it.score) * inv)}
		if !q.NoMatched {
			hits[i].Matched, hits[i].Words, hits[i].Via = v.matched(qts, it.doc)
		}
		if q.Debug {
			hits[i].Components = v.components(qts, it.doc, inv)
		}
		if b, ok := boostOf(boosts, v.ns.of, it.doc); ok {
			hits[i].Note = fmt.Sprintf("server %s matches %.2f (+%.3f)", v.ns.name[b.ns], b.score, nsWeight*b.score)
			if q.Debug {
				hits[i].Components["namespace"] = nsWeight * b.score
			}
		}
	}
	return hits, nil
}

// boostOf returns the namespace boost that doc got, if any.
func boostOf(boosts []nsBoost, of []int32, doc uint32) (nsBoost, bool) {
	for _, b := range boosts {
		if of[doc] == b.ns {
			return b, true
		}
	}
	return nsBoost{}, false
}

// matched lists the query terms found in doc, each as doc first writes it,
// and how each gained term came (nil when the query wrote them all).
func (v *bm25View) matched(qts []queryTerm, doc uint32) (terms, words, via []string) {
	gained := false
	for _, qt := range qts {
		if p, ok := findPosting(v.idx.postings[qt.id], doc); ok {
			terms = append(terms, qt.term)
			words = append(words, v.idx.words[p.word])
			via = append(via, qt.via)
			gained = gained || qt.via != ""
		}
	}
	if !gained {
		via = nil
	}
	return terms, words, via
}

// components splits a document's normalised score by field.
func (v *bm25View) components(qts []queryTerm, doc uint32, inv float64) map[string]float64 {
	out := map[string]float64{}
	k1 := v.params.K1
	nrm := v.norm[doc]
	for _, qt := range qts {
		p, ok := findPosting(v.idx.postings[qt.id], doc)
		if !ok {
			continue
		}
		tf := 0.0
		for f := range numFields {
			tf += float64(p.tf[f]) * float64(nrm[f])
		}
		s := qt.idf * qtfWeight(qt.qtf) * (k1 + 1) * qt.weight * tf / (tf + k1) * inv
		for f := range numFields {
			if p.tf[f] > 0 {
				out[fieldNames[f]] += s * float64(p.tf[f]) * float64(nrm[f]) / tf
			}
		}
		key := "term:" + qt.term
		if qt.via != "" {
			key += " (" + qt.via + ")"
		}
		out[key] += s
	}
	return out
}

func findPosting(list []posting, doc uint32) (posting, bool) {
	i := sort.Search(len(list), func(i int) bool { return list[i].doc >= doc })
	if i < len(list) && list[i].doc == doc {
		return list[i], true
	}
	return posting{}, false
}
