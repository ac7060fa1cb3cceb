package quantile

import (
	"testing"
	"time"
)

func TestOfNearestRank(t *testing.T) {
	d := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 5}, {0.95, 10}, {0.1, 1}, {0, 1}, {1, 10}} {
		if got := Of(d, c.p); got != c.want {
			t.Errorf("Of(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if Of(nil, 0.5) != 0 {
		t.Error("no values: want 0")
	}
	if d[0] != 5 {
		t.Error("Of sorted its argument")
	}
}
