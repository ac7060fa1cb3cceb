package capi

import "sync"

// The ledger of C strings the library handed out and the caller has not freed
// yet. cabi allocates with malloc and records the address here; the free
// export frees only addresses found here, so a double free or a foreign
// pointer is an error code instead of heap corruption.
var ledger = struct {
	mu   sync.Mutex
	live map[uintptr]struct{}
}{live: map[uintptr]struct{}{}}

// Track records an address returned to the caller.
func Track(p uintptr) {
	ledger.mu.Lock()
	ledger.live[p] = struct{}{}
	ledger.mu.Unlock()
}

// Untrack forgets an address; it reports false when the address was never
// handed out or was already freed (then the caller must not free it).
func Untrack(p uintptr) bool {
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	if _, ok := ledger.live[p]; !ok {
		return false
	}
	delete(ledger.live, p)
	return true
}

// Outstanding is the number of returned strings not yet freed.
func Outstanding() int {
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	return len(ledger.live)
}
