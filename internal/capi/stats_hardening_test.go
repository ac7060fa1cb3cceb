package capi

import (
	"encoding/json"
	"testing"
)

func TestStatsGoroutines(t *testing.T) {
	count := func() int {
		var s struct{ Goroutines int }
		if err := json.Unmarshal(Stats().Body, &s); err != nil {
			t.Fatal(err)
		}
		return s.Goroutines
	}
	before := count()
	if before < 1 {
		t.Fatalf("goroutines = %d", before)
	}
	stop := make(chan struct{})
	started := make(chan struct{})
	for i := 0; i < 3; i++ {
		go func() { started <- struct{}{}; <-stop }()
		<-started
	}
	if got := count(); got < before+3 {
		t.Errorf("goroutines = %d with 3 more parked, want >= %d", got, before+3)
	}
	close(stop)
}
