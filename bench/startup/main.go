// Command startup times what a process does before its first answer on a
// large catalog, phase by phase: parse the catalog file, register its tools
// (skipping refused ones, as `toolselect rank` does), build the bm25 index,
// (on the first ranking), then answer every query. It prints one JSON object; bench/fts5_vs_rank.py
// --scale runs it next to `toolselect rank` and SQLite FTS5.
//
//	go run ./bench/startup -catalog C [-queries Q]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"syscall"
	"time"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

type phase struct {
	WallMS float64 `json:"wall_ms"`
	CPUMS  float64 `json:"cpu_ms"`
}

type report struct {
	Tools           int     `json:"tools"`
	Refused         int     `json:"refused"`
	Parse           phase   `json:"parse"`
	Register        phase   `json:"register"`
	Index           phase   `json:"index"`
	Startup         phase   `json:"startup"`
	Queries         int     `json:"queries"`
	QueryP50US      float64 `json:"query_p50_us"`
	QueryTotalMS    float64 `json:"query_total_ms"`
	RegistryPerTool float64 `json:"registry_bytes_per_tool"`
	IndexPerTool    float64 `json:"index_bytes_per_tool"`
	PeakRSSMB       float64 `json:"peak_rss_mb"`
}

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func heap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("startup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	catalog := fs.String("catalog", "", "catalog file")
	queries := fs.String("queries", "", "queries (JSON Lines with \"query\"); optional")
	validOut := fs.String("valid-out", "", "also write the registered tools here as JSON Lines (a catalog every tool of which registers)")
	reasons := fs.Bool("reasons", false, "explain each pick as a single rank does (toolselect rank --queries prints names only, so by default the queries run without reasons, as it runs them)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run here (for go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if *catalog == "" {
		fmt.Fprintln(stderr, "usage: startup -catalog FILE [-queries FILE] [-valid-out FILE]")
		return 2
	}
	var qs []string
	if *queries != "" {
		list, err := rank.LoadQueries(*queries)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		for _, q := range list {
			qs = append(qs, q.Query)
		}
	}
	// Touch the Chinese dictionary first: a fixed per-process cost (the
	// table is searched in place, so only a few page faults now), not a
	// per-tool one.
	warm := registry.New(nil)
	if err := warm.Register(registry.NewTool("warm_up", "中文", json.RawMessage(`{"type":"object"}`))); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if _, err := rank.For(warm).Rank(context.Background(), "中文", nil); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	base := heap()
	var rep report
	measure := func(p *phase, f func()) {
		w, c := time.Now(), cpu()
		f()
		p.WallMS = float64(time.Since(w).Microseconds()) / 1e3
		p.CPUMS = float64((cpu() - c).Microseconds()) / 1e3
	}
	var tools []registry.Tool
	reg := registry.New(nil)
	var err error
	measure(&rep.Parse, func() { tools, _, err = registry.LoadCatalogFile(*catalog) })
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	measure(&rep.Register, func() { rep.Refused = len(reg.RegisterValid(tools)) })
	tools = nil
	rep.Tools = reg.Len()
	if *validOut != "" {
		if err := writeTools(*validOut, reg); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	afterReg := heap()
	r := rank.For(reg)
	opts := &rank.Options{MaxCandidates: 10, NoReasons: !*reasons}
	// The index is built on the first ranking; this one's own query costs
	// about one query median (tens of µs), noise at this scale.
	measure(&rep.Index, func() { _, err = r.Rank(context.Background(), "warm up", opts) })
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	afterIndex := heap()
	rep.Startup = phase{rep.Parse.WallMS + rep.Register.WallMS + rep.Index.WallMS, rep.Parse.CPUMS + rep.Register.CPUMS + rep.Index.CPUMS}
	rep.RegistryPerTool = float64(afterReg-base) / float64(max(rep.Tools, 1))
	rep.IndexPerTool = float64(afterIndex-afterReg) / float64(max(rep.Tools, 1))
	lat := make([]time.Duration, 0, len(qs))
	start := time.Now()
	for _, q := range qs {
		t0 := time.Now()
		if _, err := r.Rank(context.Background(), q, opts); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		lat = append(lat, time.Since(t0))
	}
	rep.Queries = len(qs)
	rep.QueryTotalMS = float64(time.Since(start).Microseconds()) / 1e3
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		rep.QueryP50US = float64(lat[len(lat)/2].Nanoseconds()) / 1e3
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	rep.PeakRSSMB = float64(ru.Maxrss) / 1024
	runtime.KeepAlive(reg)
	_ = json.NewEncoder(stdout).Encode(rep)
	return 0
}

func writeTools(path string, reg *registry.Registry) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, t := range reg.Tools() {
		if err := enc.Encode(t); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
