package selector

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// BenchmarkOffer measures the first request's offer at the default settings
// (offer budget 10,000 tokens, top 10, bm25) over the shared data sets:
//
//	go test -run '^$' -bench Offer -benchtime 1x ./selector/
//
// gold_all_offered_% is the share of queries whose gold tools are all in the
// first request; offered_tokens is the median token cost (o200k_base) of the
// offered tools as the JSON-mode prompt carries them, catalog_tokens that of
// the whole catalog; empty_offer_% the share of queries where the ranking
// found nothing (the model is then asked with the search round only).
// ns/op is one selection's Begin: filtering, budget, ranking and prompts.
func BenchmarkOffer(b *testing.B) {
	dir := os.Getenv("TOOLSELECT_DATA")
	if dir == "" {
		dir = filepath.Join("..", "testdata", "sets")
	}
	counter, err := rank.NewTokenCounter(rank.EncodingO200k)
	if err != nil {
		b.Fatal(err)
	}
	for _, ds := range []string{"bfcl", "livemcpbench"} {
		b.Run(ds, func(b *testing.B) {
			tools, _, err := registry.LoadCatalogFile(filepath.Join(dir, ds, "tools.jsonl"))
			if err != nil {
				b.Skipf("shared data not available: %v", err)
			}
			queries, err := rank.LoadQueries(filepath.Join(dir, ds, "queries.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			reg := registry.New(nil)
			reg.RegisterValid(tools)
			catalog, err := counter.CountTools(reg.Entries(), registry.FormatSchema)
			if err != nil {
				b.Fatal(err)
			}
			sel, err := newWith(nil, nil, quiet(), withRanker(&rank.Offering{}))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			offer := func(q string) *Session {
				ss, err := sel.Begin(ctx, Request{Task: Task{Description: q}, Registry: reg})
				if err != nil {
					b.Fatal(err)
				}
				return ss
			}
			// Quality: every query once, outside the timer.
			all, empty := 0, 0
			var costs []int
			for _, q := range queries {
				ss := offer(q.Query)
				got := ss.Offered()
				if len(got) == 0 {
					empty++
				}
				ok := true
				for _, g := range q.Gold {
					ok = ok && slices.Contains(got, g)
				}
				if ok {
					all++
				}
				n, err := counter.CountTools(ss.cur.entries, registry.FormatSchema)
				if err != nil {
					b.Fatal(err)
				}
				costs = append(costs, n)
			}
			slices.Sort(costs)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				offer(queries[i%len(queries)].Query)
			}
			b.StopTimer()
			b.ReportMetric(100*float64(all)/float64(len(queries)), "gold_all_offered_%")
			b.ReportMetric(100*float64(empty)/float64(len(queries)), "empty_offer_%")
			b.ReportMetric(float64(costs[len(costs)/2]), "offered_tokens")
			b.ReportMetric(float64(catalog), "catalog_tokens")
			b.ReportMetric(float64(reg.Len()), "tools")
		})
	}
}
