// Package par runs loops over the cores: one helper for every place that
// spreads independent work (catalog decoding, registration, feedback replay).
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For runs f(0..n-1) over the cores, in chunks of at least minChunk
// indexes; small n runs on the calling goroutine.
func For(n, minChunk int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/minChunk)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(int64(minChunk)) - int64(minChunk))
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+minChunk, n); i++ {
					f(i)
				}
			}
		}()
	}
	wg.Wait()
}
