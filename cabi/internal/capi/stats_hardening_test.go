package capi

import (
	"encoding/json"
	"sync"
	"testing"
	"time"
)

func TestStatsGoroutines(t *testing.T) {
	count := func() int {
		var s struct{ Goroutines int }
		if err := json.Unmarshal(Stats().Body, &s); err != nil {
			t.Fatal(err)
		}
		return s.Goroutines
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		started := make(chan struct{})
		go func() { defer wg.Done(); close(started); <-stop }()
		<-started
	}
	with := count()
	if with < 4 { // the 3 parked ones and this test's own
		t.Fatalf("goroutines = %d with 3 parked", with)
	}
	close(stop)
	wg.Wait()
	deadline := time.Now().Add(2 * time.Second)
	for count() > with-3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := count(); got > with-3 {
		t.Errorf("goroutines = %d after 3 of %d ended", got, with)
	}
}
