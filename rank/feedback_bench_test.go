package rank

import (
	"context"
	"testing"
)

// BenchmarkFeedbackQuery ranks a bfcl query with the first half of bfcl
// learned: "fresh" is every query after one change to the feedback (the norms
// worked out again, as a live learner that records a selection between two
// queries pays), "steady" a query with nothing changed since the last one.
//
//	go test ./rank -run '^$' -bench FeedbackQuery -benchtime 200x
func BenchmarkFeedbackQuery(b *testing.B) {
	reg, qs := dataSet(b, "bfcl")
	h := len(qs) / 2
	fb := NewFeedback(nil)
	for _, q := range qs[:h] {
		_, _ = fb.Add(q.Query, q.Gold...)
	}
	r := newRanker(reg)
	ctx := context.Background()
	q := qs[h+7].Query
	opts := &Options{MaxCandidates: 10, Feedback: fb}
	b.Run("steady", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.Rank(ctx, q, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fresh", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			if i%2 == 0 {
				_, _ = fb.Add("a new task to learn from, number one", qs[0].Gold...)
			} else {
				_, _ = fb.Remove("a new task to learn from, number one", qs[0].Gold...)
			}
			b.StartTimer()
			if _, err := r.Rank(ctx, q, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
}
