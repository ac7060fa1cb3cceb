package registry_test

import (
	"sync"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

type attachKey struct{}

// Attached makes a value once per registry and key, even when asked for at
// once from many goroutines, and keeps registries apart.
func TestAttached(t *testing.T) {
	a, b := registry.New(nil), registry.New(nil)
	var wg sync.WaitGroup
	got := make([]any, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = a.Attached(attachKey{}, func() any { return new(int) })
		}()
	}
	wg.Wait()
	for _, v := range got {
		if v != got[0] {
			t.Fatalf("two values for one key: %p and %p", v, got[0])
		}
	}
	if b.Attached(attachKey{}, func() any { return new(int) }) == got[0] {
		t.Fatal("two registries share a value")
	}
	if a.Attached(attachKey{}, func() any { t.Fatal("made again"); return nil }) != got[0] {
		t.Fatal("a different value the second time")
	}
}
