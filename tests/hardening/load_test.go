package hardening_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// startExternalServer runs the fault server as a separate process (built
// from internal/testing/faultserver/cmd), so that this process's CPU time is the
// library's and the test's alone.
func startExternalServer(t *testing.T, latency time.Duration) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "faultserver")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/toolselect/toolselect/internal/testing/faultserver/cmd").CombinedOutput()
	require.NoError(t, err, "%s", out)
	cmd := exec.Command(bin, "-latency", latency.String())
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close() // the server exits at EOF on stdin
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSpace(line)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestLoadConcurrentSelections: N selections at once (200; 1,000 with -long)
// against the fault server with 50 ms latency, through one ToolSelector and
// the default HTTP transport. All complete with the offered call; the wall
// time stays near the server's latency (the library does not serialise);
// nothing is left running. Reports selections per second and the process's
// CPU time per selection (getrusage user+system of this test process, which
// holds the library, the HTTP client and the test's goroutines; the server
// runs in another process; nothing is subtracted).
func TestLoadConcurrentSelections(t *testing.T) {
	n := 200
	if *long {
		n = 1000
	}
	if v := os.Getenv("TOOLSELECT_LOAD_N"); v != "" {
		_, err := fmt.Sscan(v, &n)
		require.NoError(t, err)
	}
	const latency = 50 * time.Millisecond
	url := startExternalServer(t, latency)
	snapshot := goleak.IgnoreCurrent()

	reg := newRegistry(t)
	for i := 0; i < 46; i++ { // 50 tools: a realistic prompt
		require.NoError(t, reg.Register(registry.NewTool(fmt.Sprintf("tool_%02d", i), fmt.Sprintf("Filler tool number %d for load.", i),
			json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`))))
	}
	cfg := selector.Config{Settings: selector.Settings{Timeout: 60 * time.Second, BaseURL: url, Model: "load", APIKey: "sk-load"}}
	client, err := selector.NewOpenAIClient(&cfg, nil)
	require.NoError(t, err)
	cfg.Logger = slog.New(slog.DiscardHandler)
	sel, err := selector.New(client, &cfg)
	require.NoError(t, err)

	// Warm up (connection setup, index, first allocations) outside the figure.
	_, err = sel.SelectToolCalls(context.Background(), request(reg))
	require.NoError(t, err)

	var failed atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	lat := make([]time.Duration, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			t0 := time.Now()
			calls, err := sel.SelectToolCalls(context.Background(), request(reg))
			lat[i] = time.Since(t0)
			if err != nil || len(calls) != 1 || calls[0].Tool != "get_weather" {
				failed.Add(1)
				assert.Failf(t, "selection failed", "selection %d: %v %v", i, calls, err)
			}
		}()
	}
	cpu0, t0 := cpuTime(), time.Now()
	close(start)
	wg.Wait()
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	require.Zero(t, failed.Load())

	var maxLat time.Duration
	for _, l := range lat {
		maxLat = max(maxLat, l)
	}
	perSec := float64(n) / wall.Seconds()
	cpuPer := cpu / time.Duration(n)
	race := raceEnabled
	t.Logf("%d concurrent selections, server latency %s, race=%v: wall %s, %.0f selections/s, slowest %s, process CPU %s = %s per selection",
		n, latency, race, wall.Round(time.Millisecond), perSec, maxLat.Round(time.Millisecond), cpu.Round(time.Millisecond), cpuPer.Round(time.Microsecond))
	record(fmt.Sprintf("load_go_n%d_race%v", n, race), map[string]any{
		"n": n, "latency_ms": latency.Milliseconds(), "race": race, "wall_ms": wall.Milliseconds(),
		"selections_per_s": perSec, "cpu_ms": cpu.Milliseconds(), "cpu_per_selection_us": cpuPer.Microseconds(),
		"slowest_ms": maxLat.Milliseconds(),
	})
	// With the server answering everything after 50 ms, the wall time is the
	// server's plus the library's CPU spread over 2 cores; a library that
	// serialised the selections would need n * 50 ms.
	assert.Less(t, wall, time.Duration(n)*latency/2, "selections were serialised")

	client = nil
	closeIdle()
	verifyNoLeak(t, snapshot)
}

// TestRankIndexConcurrentReaders: 8 readers rank and read the shared index
// (rank.For(reg)) while a writer registers, replaces and unregisters tools.
// Run under -race. No torn read: a reader never sees a catalog that is
// inconsistent with itself (positions, names, lengths), a pair registered
// together half-present, an entry whose description does not match its
// version, or a generation going backwards.
func TestRankIndexConcurrentReaders(t *testing.T) {
	rounds := 300
	if *long {
		rounds = 1500
	}
	reg := newRegistry(t)
	// versioned: its description and schema carry the same version; Replace swaps both at once.
	versioned := func(v int) registry.Tool {
		return registry.NewTool("forecast", fmt.Sprintf("weather forecast version v%d", v),
			json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"v":{"const":%d}},"description":"v%d"}`, v, v)))
	}
	require.NoError(t, reg.Register(versioned(0)))

	var stop atomic.Bool
	var readers sync.WaitGroup
	var reads atomic.Int64
	errs := make(chan string, 64)
	report := func(format string, a ...any) {
		select {
		case errs <- fmt.Sprintf(format, a...):
		default:
		}
	}
	for r := 0; r < 8; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			var lastGen uint64
			for !stop.Load() {
				ranker := rank.For(reg)
				c := ranker.Catalog()
				if c.Generation() < lastGen {
					report("generation went back from %d to %d", lastGen, c.Generation())
				}
				lastGen = c.Generation()
				entries := c.Entries()
				if c.Len() != len(entries) {
					report("Len %d but %d entries", c.Len(), len(entries))
				}
				present := map[string]bool{}
				for i, e := range entries {
					if pos, ok := c.Pos(e.Name()); !ok || pos != i {
						report("entry %q at %d but Pos says %d %v", e.Name(), i, pos, ok)
					}
					if present[e.Name()] {
						report("%q twice in one catalog", e.Name())
					}
					present[e.Name()] = true
					checkVersioned(e, report)
				}
				for name := range present {
					if strings.HasPrefix(name, "pair_a_") && !present["pair_b_"+strings.TrimPrefix(name, "pair_a_")] {
						report("%s without its pair", name)
					}
				}
				picks, err := ranker.Rank(context.Background(), "weather forecast pair tool", &rank.Options{MaxCandidates: 50, MinScore: -1})
				if err != nil {
					report("rank: %v", err)
				}
				seen := map[string]bool{}
				for _, p := range picks {
					if p.Entry == nil || p.Entry.Name() != p.Tool {
						report("pick %q carries entry %v", p.Tool, p.Entry)
						continue
					}
					if seen[p.Tool] {
						report("%q picked twice", p.Tool)
					}
					seen[p.Tool] = true
					checkVersioned(p.Entry, report)
				}
				reads.Add(1)
			}
		}()
	}

	// The writer goes on past rounds until the readers have read a few times
	// each: on a loaded machine they may not be scheduled before the writer
	// ends, and a check against no readers checks nothing.
	done := 0
	for i := 0; i < rounds || (reads.Load() < 64 && i < 100*rounds); i++ {
		done = i + 1
		a, b := fmt.Sprintf("pair_a_%d", i), fmt.Sprintf("pair_b_%d", i)
		schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
		require.NoError(t, reg.RegisterAll([]registry.Tool{
			registry.NewTool(a, "pair tool weather "+a, schema),
			registry.NewTool(b, "pair tool weather "+b, schema),
		}))
		require.NoError(t, reg.Replace(versioned(i+1)))
		if i >= 10 {
			old := i - 10
			// Remove a before b, so that "a without b" is never a legal state.
			require.True(t, reg.Unregister(fmt.Sprintf("pair_a_%d", old)))
			require.True(t, reg.Unregister(fmt.Sprintf("pair_b_%d", old)))
		}
	}
	stop.Store(true)
	readers.Wait()
	close(errs)
	for e := range errs {
		assert.Fail(t, e)
	}
	t.Logf("%d rounds of register/replace/unregister against %d reads by 8 readers", done, reads.Load())
	assert.Greater(t, reads.Load(), int64(8))
	c := rank.For(reg).Catalog()
	assert.Equal(t, reg.Generation(), c.Generation())
	assert.Equal(t, reg.Len(), c.Len())
}

func checkVersioned(e *registry.Entry, report func(string, ...any)) {
	if e.Name() != "forecast" {
		return
	}
	d := e.Def()
	v := strings.TrimPrefix(d.Description, "weather forecast version ")
	if !strings.Contains(string(d.Parameters), `"description":"`+v+`"`) {
		report("forecast description %q does not match its schema %s", d.Description, d.Parameters)
	}
	var n int
	if _, err := fmt.Sscanf(v, "v%d", &n); err == nil {
		if e.ValidateArgs([]byte(fmt.Sprintf(`{"v":%d}`, n))) != nil {
			report("forecast v%d does not validate its own version", n)
		}
	}
}
