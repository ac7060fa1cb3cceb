package rank

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/toolselect/toolselect/registry"
)

// benchCatalog builds a catalog of n tools from the shared data sets, adding
// renamed copies ("copyN_" prefixes) past the originals, and returns the
// queries of both sets.
func benchCatalog(b testing.TB, n int) ([]*registry.Entry, []string) {
	b.Helper()
	dir := os.Getenv("TOOLSELECT_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "data")
	}
	var base []registry.Tool
	var queries []string
	for _, ds := range []string{"bfcl", "livemcpbench"} {
		tools, _, err := registry.LoadCatalogFile(filepath.Join(dir, ds, "tools.jsonl"))
		if err != nil {
			b.Skipf("shared data not available: %v", err)
		}
		base = append(base, tools...)
		qs, err := LoadQueries(filepath.Join(dir, ds, "queries.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range qs {
			queries = append(queries, q.Query)
		}
	}
	reg := registry.New(nil)
	var tools []registry.Tool
	for copyN := 0; len(tools) < n; copyN++ {
		for _, t := range base {
			if len(tools) == n {
				break
			}
			if copyN > 0 {
				t.Name = fmt.Sprintf("copy%d_%s", copyN, t.Name)
			}
			tools = append(tools, t)
		}
	}
	reg.RegisterValid(tools)
	return reg.Entries(), queries
}

var benchSizes = []int{1000, 10000, 100000}

func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		entries, _ := benchCatalog(b, n)
		b.Run(fmt.Sprintf("tools=%d", len(entries)), func(b *testing.B) {
			var ms0, ms1 runtime.MemStats
			var idx *bm25Index
			for i := 0; b.Loop(); i++ {
				if i == 0 {
					runtime.GC()
					runtime.ReadMemStats(&ms0)
				}
				idx = buildIndex(entries)
				if i == 0 {
					v := newView(idx, entries, defaultBM25.withDefaults())
					runtime.GC()
					runtime.ReadMemStats(&ms1)
					b.ReportMetric(float64(ms1.HeapAlloc-ms0.HeapAlloc)/float64(len(entries)), "bytes/tool")
					runtime.KeepAlive(v)
				}
			}
			runtime.KeepAlive(idx)
		})
	}
}

func BenchmarkQuery(b *testing.B) {
	for _, n := range benchSizes {
		entries, queries := benchCatalog(b, n)
		b.Run(fmt.Sprintf("tools=%d", len(entries)), func(b *testing.B) {
			r := NewStatic(entries)
			c := r.Catalog()
			opts := &Options{MaxCandidates: 10, MinScore: -1}
			if _, err := r.rank(context.Background(), c, "warm up", opts, nil); err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, 1<<16)
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				start := time.Now()
				if _, err := r.rank(context.Background(), c, q, opts, nil); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.ReportMetric(float64(Percentile(lat, 0.5).Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(Percentile(lat, 0.99).Nanoseconds())/1e3, "p99-µs")
		})
	}
}
