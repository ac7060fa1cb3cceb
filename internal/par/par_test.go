package par

import (
	"sync/atomic"
	"testing"
)

// Every index runs exactly once, whatever n and the chunk size.
func TestForRunsEachIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, chunk int }{{0, 1}, {1, 64}, {5, 64}, {1000, 1}, {1000, 64}, {1001, 7}} {
		counts := make([]int32, tc.n)
		For(tc.n, tc.chunk, func(i int) { atomic.AddInt32(&counts[i], 1) })
		for i, c := range counts {
			if c != 1 {
				t.Fatalf("n=%d chunk=%d: index %d ran %d times", tc.n, tc.chunk, i, c)
			}
		}
	}
}
