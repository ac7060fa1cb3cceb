// Package quantile holds the one percentile rule the evaluations report
// latencies with (rank's ranking eval, selecteval's selection eval).
package quantile

import (
	"math"
	"slices"
	"time"
)

// Of returns the p-quantile (0..1) of durations by nearest rank: the
// smallest value with at least p of the values at or below it; 0 for none.
func Of(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
