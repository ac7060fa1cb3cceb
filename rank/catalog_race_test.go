package rank

import (
	"sync"
	"testing"
	"time"
)

// TestCatalogNextWhileStateBuilds: a new catalog version is taken (next reads
// the states of the old one) while a scorer is still building its state on
// the old one. Under -race this was a data race on the state cell.
func TestCatalogNextWhileStateBuilds(t *testing.T) {
	for i := 0; i < 20; i++ {
		c := newCatalog(nil)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			v, err := c.State("k", func(any) (any, error) { time.Sleep(time.Millisecond); return 1, nil })
			if err != nil || v != 1 {
				t.Errorf("State = %v, %v", v, err)
			}
		}()
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				_ = c.next(nil, uint64(j))
			}
		}()
		wg.Wait()
		if n := c.next(nil, 99); n.prevStates["k"] != 1 {
			t.Fatalf("the finished state was not handed on: %v", n.prevStates)
		}
	}
}
