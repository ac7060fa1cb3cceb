package rank

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// The index built over several workers is the one a single worker builds:
// same term ids, posting lists, field lengths and sums.
func TestParallelBuildMatchesSerial(t *testing.T) {
	entries, _ := benchCatalog(t, 3*parallelBuildMin+123)
	entries = append(entries, entries[7]) // a repeated entry is indexed once
	serial := buildIndexWith(entries, 1)
	for _, procs := range []int{2, 3} {
		par := buildIndexWith(entries, procs)
		if !reflect.DeepEqual(serial.terms, par.terms) {
			t.Fatalf("procs %d: term ids differ", procs)
		}
		if !reflect.DeepEqual(serial.words, par.words) || !reflect.DeepEqual(serial.wordIDs, par.wordIDs) {
			t.Fatalf("procs %d: word ids differ", procs)
		}
		if !reflect.DeepEqual(serial.postings, par.postings) || !reflect.DeepEqual(serial.flen, par.flen) ||
			serial.sumLen != par.sumLen || serial.live != par.live || !reflect.DeepEqual(serial.docs, par.docs) {
			t.Fatalf("procs %d: index differs from the serial build", procs)
		}
	}
	if serial.live != len(entries)-1 {
		t.Errorf("live = %d, want %d", serial.live, len(entries)-1)
	}
}

// The words a bm25 hit carries for its reason are the ones surfaceWords finds
// by reading the tool's text again: after a full build and after an
// incremental update that adds and removes tools.
func TestIndexWordsAreSurfaceWords(t *testing.T) {
	entries, queries := benchCatalog(t, 2500)
	check := func(what string, v *bm25View, entries []*registry.Entry) {
		t.Helper()
		n := 0
		for _, q := range queries[:min(len(queries), 600)] {
			hits, err := v.search(context.Background(), newQuery(q), 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				want := surfaceWords(entries[h.Pos], h.Matched)
				if !slices.Equal(h.Words, want) {
					t.Fatalf("%s: %q, %s: words %q, surfaceWords %q", what, q, entries[h.Pos].Name(), h.Words, want)
				}
				n += len(want)
			}
		}
		if n == 0 {
			t.Fatalf("%s: no matched words checked", what)
		}
	}
	p := defaultBM25.withDefaults()
	full := buildIndex(entries[:2000])
	check("full build", newView(full, entries[:2000], p), entries[:2000])
	// Drop 100 tools and add 400 (an update, not a rebuild).
	next := append(append([]*registry.Entry(nil), entries[100:2000]...), entries[2000:2400]...)
	upd := updateIndex(full, next)
	if len(upd.docs) == len(next) {
		t.Fatal("expected an incremental update, got a rebuild")
	}
	check("update", newView(upd, next, p), next)
}

// An index of no tools updated with a few is updated in place, and its
// postings' words are those of the tools.
func TestUpdateFromEmptyIndex(t *testing.T) {
	entries, _ := benchCatalog(t, 5)
	empty := buildIndex(nil)
	idx := updateIndex(empty, entries)
	if idx == empty || len(idx.docs) != len(entries) {
		t.Fatalf("update: %d docs", len(idx.docs))
	}
	built := buildIndex(entries)
	if !reflect.DeepEqual(idx.words, built.words) {
		t.Errorf("word table after the update %q, after a build %q", idx.words, built.words)
	}
	for term, tid := range built.terms {
		a, b := idx.postings[idx.terms[term]], built.postings[tid]
		if len(a) != len(b) {
			t.Fatalf("%q: %d postings after the update, %d after a build", term, len(a), len(b))
		}
		for i := range a {
			if a[i].doc != b[i].doc || a[i].tf != b[i].tf || idx.words[a[i].word] != built.words[b[i].word] {
				t.Errorf("%q posting %d: update %+v %q, build %+v %q", term, i, a[i], idx.words[a[i].word], b[i], built.words[b[i].word])
			}
		}
	}
	if len(empty.words) != 0 || len(empty.wordIDs) != 0 {
		t.Error("the update changed the old index")
	}
}
