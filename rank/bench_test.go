package rank

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/toolselect/toolselect/internal/quantile"
	"github.com/toolselect/toolselect/internal/testing/fixtures"
	"github.com/toolselect/toolselect/registry"
)

// benchCatalog builds a catalog of n tools from the data sets, adding
// renamed copies ("copyN_" prefixes) past the originals, and returns the
// queries of both sets.
func benchCatalog(b testing.TB, n int) ([]*registry.Entry, []string) {
	b.Helper()
	var base []registry.Tool
	var queries []string
	for _, ds := range []string{"bfcl", "livemcpbench"} {
		tools, _, err := registry.LoadCatalogFile(fixtures.Tools(ds))
		if err != nil {
			b.Fatal(err)
		}
		base = append(base, tools...)
		qs, err := LoadQueries(fixtures.Queries(ds))
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

// benchSizes are the requested catalog sizes; a few tools of the
// sets fail validation, so the catalogs hold slightly fewer (10000 -> 9995).
// Each size loads its catalog inside its sub-benchmark, so -bench
// 'Build/tools=10000' loads only that one.
var benchSizes = []int{1000, 10000, 100000}

func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			entries, _ := benchCatalog(b, n)
			// The Chinese dictionary is read in place (no heap); touch it
			// before measuring the memory of one index all the same.
			indexTerms("中文")
			// Memory of one index and its view, measured before the timed
			// loop (b.Loop times only the loop) and reported after it.
			var ms0, ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			idx := buildIndex(entries)
			v := newView(idx, entries, defaultBM25.withDefaults())
			runtime.GC()
			runtime.ReadMemStats(&ms1)
			bytesPerTool := float64(ms1.HeapAlloc-ms0.HeapAlloc) / float64(len(entries))
			runtime.KeepAlive(v)
			// CPU time of the whole process (the build and the garbage
			// collector) per build: on a shared machine, wall time also
			// counts the time other jobs hold the cores.
			cpu0 := processCPU()
			n := 0
			for b.Loop() {
				idx = buildIndex(entries)
				n++
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1e3/float64(max(n, 1)), "cpu-ms/op")
			b.ReportMetric(bytesPerTool, "bytes/tool") // after the loop: b.Loop drops earlier metrics
			runtime.KeepAlive(idx)
		})
	}
}

func BenchmarkQuery(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			entries, queries := benchCatalog(b, n)
			r := newStatic(entries)
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
			b.ReportMetric(float64(quantile.Of(lat, 0.5).Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(quantile.Of(lat, 0.99).Nanoseconds())/1e3, "p99-µs")
		})
	}
}

// BenchmarkPrerequisites measures the prerequisites of every tool of a
// catalog. A ranking only works out those of its top picks, on first use;
// this is the most a catalog version can ever spend on them. "index" reads
// the tools' terms from the default bm25 index (the usual case: the default
// scorer has built it), "text" analyses the tools' text (other scorers).
func BenchmarkPrerequisites(b *testing.B) {
	for _, n := range benchSizes {
		for _, mode := range []string{"index", "text"} {
			b.Run(fmt.Sprintf("tools=%d/%s", n, mode), func(b *testing.B) {
				entries, _ := benchCatalog(b, n)
				c := newCatalog(entries)
				if mode == "index" {
					if _, err := (&BM25{}).index(c); err != nil {
						b.Fatal(err)
					}
				}
				indexTerms("中文") // unpack the dictionary outside the timed loop
				edges := 0
				for b.Loop() {
					x := newPrereqIndex(entries)
					if mode == "index" {
						x.cat = c
					}
					edges = 0
					for pos := range entries {
						edges += len(x.prereqsOf(pos))
					}
				}
				b.ReportMetric(float64(edges), "edges")
			})
		}
	}
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
