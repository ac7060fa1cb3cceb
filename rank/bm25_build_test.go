package rank

import (
	"reflect"
	"testing"
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
		if !reflect.DeepEqual(serial.postings, par.postings) || !reflect.DeepEqual(serial.flen, par.flen) ||
			serial.sumLen != par.sumLen || serial.live != par.live || !reflect.DeepEqual(serial.docs, par.docs) {
			t.Fatalf("procs %d: index differs from the serial build", procs)
		}
	}
	if serial.live != len(entries)-1 {
		t.Errorf("live = %d, want %d", serial.live, len(entries)-1)
	}
}
