// Package hardening_test holds the reliability tests: fault
// injection against the LLM endpoint (internal/testing/faultserver), load and
// concurrency, and security. Short versions run in `go test`; the long ones
// are selected with -long (or TOOLSELECT_LONG=1). See docs/hardening.md.
package hardening_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

var (
	long    = flag.Bool("long", os.Getenv("TOOLSELECT_LONG") == "1", "run the long versions (make reliability)")
	report  = flag.String("report", os.Getenv("TOOLSELECT_HARDENING_REPORT"), "write the Go fault outcomes and figures as JSON to this file")
	reportM sync.Mutex
	// reported collects what the report file gets: fault outcomes and figures.
	reported = map[string]any{}
)

// TestMain fails the package when a goroutine outlives the tests (idle
// keep-alive connections of the shared transport are closed first: they are
// pooled, not leaked).
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	table := map[string]string{}
	faultOutcomes.Range(func(k, v any) bool { table[k.(string)] = v.(string); return true })
	if len(table) > 0 {
		record("faults_go", table)
	}
	if *report != "" {
		b, _ := json.MarshalIndent(reported, "", "  ")
		if err := os.WriteFile(*report, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			code = 1
		}
	}
	if code == 0 {
		closeIdle()
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func record(key string, v any) {
	reportM.Lock()
	defer reportM.Unlock()
	reported[key] = v
}

func closeIdle() { http.DefaultTransport.(*http.Transport).CloseIdleConnections() }

// verifyNoLeak checks that no goroutine started since snapshot is still
// running (after closing idle pooled connections).
func verifyNoLeak(t *testing.T, snapshot goleak.Option) {
	t.Helper()
	closeIdle()
	goleak.VerifyNone(t, snapshot)
}

// catalog is the registry every fault case selects from. delete_database is
// registered but unsafe, admin_reset needs the admin role: neither may ever
// come back from a selection made without those rights.
const catalog = `[
{"name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string","minLength":1},"units":{"enum":["c","f"]}},"required":["city"],"additionalProperties":false}},
{"name":"send_email","description":"Send an email.","parameters":{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}},"required":["to"]}},
{"name":"delete_database","description":"Drop every table.","safe":false,"parameters":{"type":"object","properties":{"confirm":{"type":"boolean"}}}},
{"name":"admin_reset","description":"Reset the service.","roles":["admin"],"parameters":{"type":"object","properties":{}}}
]`

// offerable are the tools a caller without roles or AllowUnsafe may get.
var offerable = []string{"get_weather", "send_email"}

func newRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	tools, _, err := registry.ParseCatalog([]byte(catalog))
	require.NoError(t, err)
	r := registry.New(nil)
	require.NoError(t, r.RegisterAll(tools))
	return r
}

func request(reg *registry.Registry) selector.Request {
	return selector.Request{
		Task:     selector.Task{ID: "T1", Description: "What is the weather in Paris?", SubTasks: []selector.SubTask{{ID: "S1", Description: "look up the weather"}}},
		Registry: reg,
		Query:    "weather paris",
	}
}

// checkCalls asserts the invariant of every case: each returned call names a
// tool that was offered to a caller without rights, and its args validate.
func checkCalls(t *testing.T, reg *registry.Registry, res *selector.Result) {
	t.Helper()
	for _, c := range res.Calls {
		require.Contains(t, offerable, c.Tool, "a call that was not offered came back")
		require.Contains(t, res.Offered, c.Tool)
		e, ok := reg.Get(c.Tool)
		require.True(t, ok)
		require.NoError(t, e.ValidateArgs(c.Args))
	}
}

// attemptKinds lists each attempt's failure kind ("ok" for a success).
func attemptKinds(res *selector.Result) []string {
	out := make([]string, len(res.Attempts))
	for i, a := range res.Attempts {
		if a.OK {
			out[i] = "ok"
		} else {
			out[i] = string(a.Kind)
		}
	}
	return out
}

// logBuffer is a concurrency-safe buffer for captured slog output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func debugLogger(w *logBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// settle waits until f is true or d passes.
func settle(d time.Duration, f func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if f() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return f()
}
