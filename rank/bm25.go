package rank

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"unsafe"

	"github.com/toolselect/toolselect/internal/par"
	"github.com/toolselect/toolselect/registry"
)

// Fields of a tool that the bm25 index keeps apart (BM25F).
const (
	fieldName   = iota // the name split into words
	fieldDesc          // the description
	fieldParams        // parameter names, descriptions, titles and enum values
	fieldTags          // tags
	numFields
)

var fieldNames = [numFields]string{"name", "description", "parameters", "tags"}

// bm25Params are a BM25 scorer's parameters, defaults filled in.
type bm25Params struct {
	K1      float64
	Weights [numFields]float64
	B       [numFields]float64
}

var defaultBM25 = bm25Params{
	K1:      0.9,
	Weights: [numFields]float64{3, 1, 0.6, 0.5},
	B:       [numFields]float64{0.75, 0.75, 0.6, 0.3},
}

func (p bm25Params) withDefaults() bm25Params {
	if p.K1 == 0 {
		p.K1 = defaultBM25.K1
	}
	if p.Weights == ([numFields]float64{}) {
		p.Weights = defaultBM25.Weights
	}
	if p.B == ([numFields]float64{}) {
		p.B = defaultBM25.B
	}
	return p
}

// BM25 is the default scorer: BM25F over an inverted index of the tools'
// names, descriptions, parameters and tags. The index is built once per
// catalog, updated incrementally when the catalog changes, and shared by
// concurrent queries. Zero fields, as in &BM25{}, mean the defaults.
type BM25 struct {
	// K1 is the term-frequency saturation (default 0.9).
	K1 float64
	// Weights per field: name, description, parameters, tags
	// (default 3, 1, 0.6, 0.5).
	Weights [numFields]float64
	// B per field is the length normalisation (default 0.75, 0.75, 0.6, 0.3).
	B [numFields]float64
}

// params returns s's parameters with the defaults filled in.
func (s *BM25) params() bm25Params {
	return bm25Params{K1: s.K1, Weights: s.Weights, B: s.B}.withDefaults()
}

// Name implements Scorer.
func (s *BM25) Name() string { return "bm25" }

// stateKey names the scorer's state in a Catalog. The view bakes the
// parameters in, so scorers with other parameters keep views of their own.
func (s *BM25) stateKey() string {
	if p := s.params(); p != defaultBM25 {
		return fmt.Sprintf("bm25 %v", p)
	}
	return "bm25"
}

// Index returns the bm25 index of c, building or updating it on first use.
func (s *BM25) index(c *Catalog) (*bm25View, error) {
	v, err := c.State(s.stateKey(), func(prev any) (any, error) {
		var old *bm25Index
		if pv, ok := prev.(*bm25View); ok {
			old = pv.idx
		}
		idx := updateIndex(old, c.entries)
		return newView(idx, c.entries, s.params()), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*bm25View), nil
}

// prepare builds the index of c ([Ranker.Prepare]).
func (s *BM25) prepare(c *Catalog) error {
	_, err := s.index(c)
	return err
}

// Score implements Scorer.
func (s *BM25) Score(ctx context.Context, c *Catalog, q *Query, k int, keep func(pos int) bool) ([]Hit, error) {
	v, err := s.index(c)
	if err != nil {
		return nil, err
	}
	return v.search(ctx, q, k, keep)
}

// posting is one (term, document) pair: the term's frequency in each field,
// saturated at 255, and the first word of the document that analyses to the
// term, as written there (lower-cased): what a reason shows ("matched
// parking", not "park") without reading the tool's text again.
type posting struct {
	doc  uint32
	tf   [numFields]uint8
	word uint32 // index in bm25Index.words
}

// bm25Index is immutable once built; an update makes a new index that shares
// every posting list the update did not touch.
type bm25Index struct {
	terms    map[string]uint32
	postings [][]posting // by term id, sorted by doc id
	docs     []*registry.Entry
	docOf    map[*registry.Entry]uint32
	flen     [][numFields]uint16
	sumLen   [numFields]float64
	live     int
	words    []string          // the raw words postings point to
	wordIDs  map[string]uint32 // raw word -> index in words
	comp     compounds         // worked out on first use (expand.go)
}

// docTerms analyses documents one after another. It interns terms: every
// distinct term gets a small id (in order of first appearance), and every
// distinct raw word maps straight to its term id, so after the first
// occurrence of a word, analysing it costs one map read and no allocation.
// For one document it collects the distinct terms in order of appearance and
// their frequencies per field.
type docTerms struct {
	tk    tokenizer
	word  map[string]wordRef // raw lower-cased word -> its term and its own id
	ids   map[string]int32   // term -> term id
	terms []string           // term id -> term
	raws  []string           // raw word id -> raw word (words of stopwords excluded)

	// the current document
	slot  []int32  // term id -> index in order, valid when stamp matches cur
	stamp []uint32 // term id -> document stamp
	cur   uint32
	order []int32 // distinct term ids in order of appearance
	first []int32 // parallel to order: the raw word id of the term's first word
	tfs   [][numFields]uint8
	lens  [numFields]uint16

	field int // field of the text being analysed
	emit  func(w []byte)
	dec   []byte // schemaText's decoding buffer
}

// wordRef is what a raw word analyses to: its term id (-1 for a stopword) and
// the word's own id in docTerms.raws.
type wordRef struct{ term, raw int32 }

func newDocTerms() *docTerms {
	d := &docTerms{word: make(map[string]wordRef, 1024), ids: make(map[string]int32, 1024)}
	d.tk.glosses = map[string]string{}
	d.emit = d.addWord
	return d
}

func (d *docTerms) reset() {
	d.cur++
	if d.cur == 0 { // wrapped: forget every stamp
		clear(d.stamp)
		d.cur = 1
	}
	d.order = d.order[:0]
	d.first = d.first[:0]
	d.tfs = d.tfs[:0]
	d.lens = [numFields]uint16{}
}

// term returns the term of id.
func (d *docTerms) term(id int32) string { return d.terms[id] }

// addWord adds a raw word to the current field.
func (d *docTerms) addWord(w []byte) {
	ref, ok := d.word[string(w)]
	if !ok {
		sw := string(w) // one copy, for both the table and the map key
		ref = wordRef{term: -1, raw: -1}
		if t := termOf(w); t != "" {
			id, known := d.ids[t]
			if !known {
				id = int32(len(d.terms))
				d.ids[t] = id
				d.terms = append(d.terms, t)
				d.slot = append(d.slot, 0)
				d.stamp = append(d.stamp, 0)
			}
			ref = wordRef{term: id, raw: int32(len(d.raws))}
			d.raws = append(d.raws, sw)
		}
		d.word[sw] = ref
	}
	if ref.term >= 0 {
		d.add(d.field, ref.term, ref.raw)
	}
}

func (d *docTerms) add(f int, id, raw int32) {
	var i int32
	if d.stamp[id] == d.cur {
		i = d.slot[id]
	} else {
		i = int32(len(d.order))
		d.stamp[id] = d.cur
		d.slot[id] = i
		d.order = append(d.order, id)
		d.first = append(d.first, raw)
		d.tfs = append(d.tfs, [numFields]uint8{})
	}
	if d.tfs[i][f] < 255 {
		d.tfs[i][f]++
	}
	if d.lens[f] < math.MaxUint16 {
		d.lens[f]++
	}
}

// text analyses text into field f of the current document.
func (d *docTerms) text(f int, text string) {
	d.field = f
	d.tk.words(text, d.emit)
}

// analyzeEntry makes e the current document of d.
func analyzeEntry(e *registry.Entry, d *docTerms) {
	d.reset()
	entryText(e, &d.dec, d.text, nil)
}

// entryText calls emit with each searchable text of e and the field it is
// indexed under: the name (without its namespace), the namespace, the
// description, the schema's property names and texts, the tags. The string
// is only valid during the call. When done is not nil and says true, the rest
// is skipped (the schema is the costly part to read).
func entryText(e *registry.Entry, buf *[]byte, emit func(f int, text string), done func() bool) {
	t := e.Def()
	ns, local := splitNamespace(t.Name)
	emit(fieldName, local)
	emit(fieldTags, ns)
	emit(fieldDesc, t.Description)
	if done != nil && done() {
		return
	}
	if t.HasSchema() {
		b := func(s []byte) {
			if len(s) > 0 {
				emit(fieldParams, unsafe.String(&s[0], len(s)))
			}
		}
		schemaText(t.Parameters, buf, b, b)
	}
	for _, tag := range t.Tags {
		emit(fieldTags, tag)
	}
}

// surfaceWords returns, for each index term of e, the first word of e's text
// that analyses to it, as written there (lower-cased); a term with no such
// word is kept as is.
func surfaceWords(e *registry.Entry, terms []string) []string {
	out := append([]string(nil), terms...)
	want := make(map[string][]int, len(terms))
	for i, t := range terms {
		want[t] = append(want[t], i)
	}
	var (
		tk  tokenizer
		buf []byte
	)
	entryText(e, &buf, func(_ int, text string) {
		if len(want) == 0 {
			return
		}
		tk.words(text, func(w []byte) {
			if t := termOf(w); t != "" {
				if is, ok := want[t]; ok {
					for _, i := range is {
						out[i] = string(w)
					}
					delete(want, t)
				}
			}
		})
	}, func() bool { return len(want) == 0 })
	return out
}

// updateIndex returns an index over entries, reusing old where it can. A
// full rebuild happens when there is no old index or when most of it changed.
func updateIndex(old *bm25Index, entries []*registry.Entry) *bm25Index {
	if old == nil {
		return buildIndex(entries)
	}
	want := make(map[*registry.Entry]struct{}, len(entries))
	var added []*registry.Entry
	for _, e := range entries {
		want[e] = struct{}{}
		if _, ok := old.docOf[e]; !ok {
			added = append(added, e)
		}
	}
	var removed []uint32
	for e, id := range old.docOf {
		if _, ok := want[e]; !ok {
			removed = append(removed, id)
		}
	}
	if len(added) == 0 && len(removed) == 0 {
		return old
	}
	holes := len(old.docs) - old.live + len(removed)
	if len(added)+len(removed) > len(entries)/4+16 || holes > len(entries)/4+16 {
		return buildIndex(entries)
	}
	idx := &bm25Index{
		terms:    old.terms,
		postings: append([][]posting(nil), old.postings...),
		docs:     append([]*registry.Entry(nil), old.docs...),
		docOf:    maps.Clone(old.docOf),
		flen:     append([][numFields]uint16(nil), old.flen...),
		sumLen:   old.sumLen,
		live:     old.live,
		words:    old.words,
		wordIDs:  old.wordIDs,
	}
	copied := map[uint32]bool{} // posting lists already copied by this update
	termsCopied, wordsCopied := false, false
	wordID := func(w string) uint32 {
		id, ok := idx.wordIDs[w]
		if !ok {
			if !wordsCopied {
				idx.wordIDs = maps.Clone(idx.wordIDs)
				if idx.wordIDs == nil {
					idx.wordIDs = map[string]uint32{}
				}
				idx.words = slices.Clip(idx.words)
				wordsCopied = true
			}
			id = uint32(len(idx.words))
			idx.wordIDs[w] = id
			idx.words = append(idx.words, w)
		}
		return id
	}
	d := newDocTerms()
	sort.Slice(removed, func(i, j int) bool { return removed[i] < removed[j] })
	for _, id := range removed {
		e := idx.docs[id]
		analyzeEntry(e, d)
		for _, lid := range d.order {
			tid, ok := idx.terms[d.term(lid)]
			if !ok {
				continue
			}
			list := idx.postings[tid]
			out := make([]posting, 0, len(list))
			for _, p := range list {
				if p.doc != id {
					out = append(out, p)
				}
			}
			idx.postings[tid] = out
			copied[tid] = true
		}
		for f := range numFields {
			idx.sumLen[f] -= float64(idx.flen[id][f])
		}
		idx.flen[id] = [numFields]uint16{}
		idx.docs[id] = nil
		delete(idx.docOf, e)
		idx.live--
	}
	for _, e := range added {
		id := uint32(len(idx.docs))
		analyzeEntry(e, d)
		for ti, lid := range d.order {
			term := d.term(lid)
			tid, ok := idx.terms[term]
			if !ok {
				if !termsCopied {
					idx.terms = maps.Clone(idx.terms)
					termsCopied = true
				}
				tid = uint32(len(idx.postings))
				idx.terms[term] = tid
				idx.postings = append(idx.postings, nil)
				copied[tid] = true
			}
			list := idx.postings[tid]
			if !copied[tid] {
				list = append(make([]posting, 0, len(list)+1), list...)
				copied[tid] = true
			}
			idx.postings[tid] = append(list, posting{doc: id, tf: d.tfs[ti], word: wordID(d.raws[d.first[ti]])})
		}
		idx.appendDoc(e, id, d.lens)
	}
	return idx
}

// appendDoc records entry e as document id (the next one) with its field
// lengths.
func (idx *bm25Index) appendDoc(e *registry.Entry, id uint32, lens [numFields]uint16) {
	idx.docs = append(idx.docs, e)
	idx.flen = append(idx.flen, lens)
	idx.docOf[e] = id
	for f := range numFields {
		idx.sumLen[f] += float64(lens[f])
	}
	idx.live++
}

// buildIndex analyses the documents over the cores, one contiguous run of
// documents per worker, then merges the runs in document order: term ids
// come out in order of first appearance and posting lists sorted by
// document, exactly as one worker would lay them out.
func buildIndex(entries []*registry.Entry) *bm25Index {
	return buildIndexWith(entries, runtime.GOMAXPROCS(0))
}

func buildIndexWith(entries []*registry.Entry, procs int) *bm25Index {
	idx := &bm25Index{
		docs:  make([]*registry.Entry, 0, len(entries)),
		docOf: make(map[*registry.Entry]uint32, len(entries)),
		flen:  make([][numFields]uint16, len(entries)),
	}
	for _, e := range entries {
		if _, dup := idx.docOf[e]; !dup {
			idx.docOf[e] = uint32(len(idx.docs))
			idx.docs = append(idx.docs, e)
		}
	}
	idx.flen = idx.flen[:len(idx.docs)]
	idx.live = len(idx.docs)
	// Each worker collects (term, doc) pairs in doc order into one flat
	// slice, with term ids interned by its analyser; the merge lays every
	// posting list out in a single pointer-free array. Few, large
	// allocations keep the garbage collector out of the build.
	type pair struct {
		tid uint32
		p   posting
	}
	type run struct {
		d      *docTerms
		pairs  []pair
		lo, hi int
	}
	workers := max(1, min(procs, len(idx.docs)/parallelBuildMin))
	runs := make([]run, workers)
	par.For(len(runs), 1, func(w int) {
		r := &runs[w]
		r.lo, r.hi = len(idx.docs)*w/workers, len(idx.docs)*(w+1)/workers
		r.d = newDocTerms()
		r.pairs = make([]pair, 0, (r.hi-r.lo)*40)
		for id := r.lo; id < r.hi; id++ {
			analyzeEntry(idx.docs[id], r.d)
			for ti, tid := range r.d.order {
				r.pairs = append(r.pairs, pair{uint32(tid), posting{doc: uint32(id), tf: r.d.tfs[ti], word: uint32(r.d.first[ti])}})
			}
			idx.flen[id] = r.d.lens
		}
	})
	for _, lens := range idx.flen {
		for f := range numFields {
			idx.sumLen[f] += float64(lens[f])
		}
	}
	idx.terms = make(map[string]uint32, len(runs[0].d.terms))
	idx.wordIDs = make(map[string]uint32, len(runs[0].d.raws))
	var counts []uint32
	total := 0
	for w := range runs {
		r := &runs[w]
		remap := make([]uint32, len(r.d.terms))
		for local, t := range r.d.terms {
			g, ok := idx.terms[t]
			if !ok {
				g = uint32(len(idx.terms))
				idx.terms[t] = g
				counts = append(counts, 0)
			}
			remap[local] = g
		}
		// Only the words some posting points to are kept, numbered in the
		// order postings first point to them (as an update numbers them).
		words := make([]uint32, len(r.d.raws))
		for i := range words {
			words[i] = noWord
		}
		for i := range r.pairs {
			pr := &r.pairs[i]
			pr.tid = remap[pr.tid]
			g := words[pr.p.word]
			if g == noWord {
				w := r.d.raws[pr.p.word]
				var ok bool
				if g, ok = idx.wordIDs[w]; !ok {
					g = uint32(len(idx.words))
					idx.wordIDs[w] = g
					idx.words = append(idx.words, w)
				}
				words[pr.p.word] = g
			}
			pr.p.word = g
			counts[pr.tid]++
		}
		total += len(r.pairs)
	}
	backing := make([]posting, total)
	idx.postings = make([][]posting, len(counts))
	off := 0
	for tid, n := range counts {
		idx.postings[tid] = backing[off : off : off+int(n)]
		off += int(n)
	}
	for w := range runs {
		for _, pr := range runs[w].pairs {
			idx.postings[pr.tid] = append(idx.postings[pr.tid], pr.p)
		}
		runs[w].pairs = nil
	}
	return idx
}

// noWord marks a raw word not yet numbered in the merge of buildIndexWith.
const noWord = ^uint32(0)

// parallelBuildMin is the fewest documents per worker worth a goroutine of
// its own: below it the analysers' own term tables cost more than they save.
const parallelBuildMin = 2048

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

func clamp01(x float64) float64 {
	if x < 0 || math.IsNaN(x) {
		return 0
	}
	if x > 1 {
		return 1
	}
	return x
}

// topK keeps the k best (score, position) pairs: higher score first, and on
// equal scores the earlier catalog position first.
type topK struct {
	k     int
	items []topItem // a min-heap on (score, -pos)
}

type topItem struct {
	score float32
	pos   int
	doc   uint32
}

func worse(a, b topItem) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.pos > b.pos
}

func (h *topK) wants(s float32, pos int) bool {
	return len(h.items) < h.k || worse(h.items[0], topItem{score: s, pos: pos})
}

func (h *topK) push(s float32, pos int, doc uint32) {
	it := topItem{score: s, pos: pos, doc: doc}
	if len(h.items) < h.k {
		h.items = append(h.items, it)
		h.up(len(h.items) - 1)
		return
	}
	h.items[0] = it
	h.down(0)
}

func (h *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !worse(h.items[i], h.items[p]) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *topK) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(h.items[r], h.items[l]) {
			m = r
		}
		if !worse(h.items[m], h.items[i]) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

// sorted returns the items best first.
func (h *topK) sorted() []topItem {
	out := append([]topItem(nil), h.items...)
	sort.Slice(out, func(i, j int) bool { return worse(out[j], out[i]) })
	return out
}
