package rank

import (
	"context"
	"testing"
)

// Benchmarks of the whole rank and step pipelines on a data set (the
// split of rank and step into named steps was measured with them):
//
//	go test ./rank -run '^$' -bench 'RankPipeline|StepTools' -benchmem

func BenchmarkRankPipeline(b *testing.B) {
	reg, qs := dataSet(b, "bfcl")
	r := For(reg)
	ctx := context.Background()
	names := pickNames(mustRank(b, r, qs[0].Query))
	cases := []struct {
		name string
		opts *Options
	}{
		{"default", &Options{MaxCandidates: 10}},
		{"noreasons", &Options{MaxCandidates: 10, MinScore: -1, NoReasons: true}},
		{"related", &Options{MaxCandidates: 5, AlwaysActive: names[:1],
			Related: map[string][]string{names[0]: names[1:3], names[1]: names[2:]}}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			i := 0
			cpu0 := processCPU()
			for b.Loop() {
				if _, err := r.Rank(ctx, qs[i%len(qs)].Query, tc.opts); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(max(i, 1)), "cpu-ns/op")
		})
	}
}

func mustRank(b *testing.B, r *Ranker, q string) []Pick {
	p, err := r.Rank(context.Background(), q, &Options{MaxCandidates: 5, MinScore: -1})
	if err != nil || len(p) < 5 {
		b.Fatalf("warm-up: %v %d", err, len(p))
	}
	return p
}

func BenchmarkStepTools(b *testing.B) {
	reg, qs := dataSet(b, "bfcl")
	r := For(reg)
	ctx := context.Background()
	first := mustRank(b, r, qs[0].Query)
	var turnsets [][]Turn
	for i := 0; i+2 < len(qs) && len(turnsets) < 64; i += 3 {
		turnsets = append(turnsets, []Turn{
			{Role: "system", Content: "You are a helpful agent."},
			{Role: "user", Content: qs[i].Query},
			{Role: "assistant", Content: "Let me look that up.", Calls: []string{first[0].Tool}},
			{Role: "tool", Tool: first[0].Tool, Content: qs[i+1].Query + " id=abc123 at 2024-01-02 " + qs[i+2].Query},
			{Role: "assistant", Content: "Found something."},
			{Role: "user", Content: qs[i+2].Query},
		})
	}
	opts := &StepOptions{Options: Options{MaxCandidates: 6, AlwaysActive: []string{first[1].Tool},
		Related: map[string][]string{first[0].Tool: {first[2].Tool}}}}
	i := 0
	cpu0 := processCPU()
	for b.Loop() {
		if _, err := r.Step(ctx, turnsets[i%len(turnsets)], opts); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(max(i, 1)), "cpu-ns/op")
}
