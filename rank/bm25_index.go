package rank

import (
	"maps"
	"runtime"
	"slices"
	"sort"

	"github.com/toolselect/toolselect/internal/par"
	"github.com/toolselect/toolselect/registry"
)

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
