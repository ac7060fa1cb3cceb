package hardening_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolselect/toolselect/internal/testing/faultserver"
	"github.com/toolselect/toolselect/selector"
)

// expectation is the documented outcome of one attempt that hits a fault.
type expectation struct {
	kind  string // "" for a successful attempt
	calls int    // calls kept by a successful attempt
}

func expect(f faultserver.Fault, mode selector.Mode) expectation {
	e := expectation{kind: f.Kind, calls: f.Calls}
	if mode == selector.ModeNative {
		switch f.Name {
		case faultserver.Prose, faultserver.EchoAuthContent:
			// Native mode reads tool_calls; a reply with only prose is zero calls.
			e = expectation{}
		}
	}
	return e
}

// faultOutcomes collects one line per (fault, mode) for the Markdown table.
var faultOutcomes sync.Map // "fault/mode" -> string

// selectWith runs one selection through the Go API: selector.New with
// NewOpenAIClient (nil *http.Client: the production default).
func selectWith(t *testing.T, cfg selector.Config, log *logBuffer) (*selector.Result, error) {
	t.Helper()
	client, err := selector.NewOpenAIClient(&cfg, nil)
	require.NoError(t, err)
	cfg.Logger = slog.New(slog.DiscardHandler)
	if log != nil {
		cfg.Logger = debugLogger(log)
	}
	sel, err := selector.New(client, &cfg)
	require.NoError(t, err)
	reg := newRegistry(t)
	res, err := sel.Select(context.Background(), request(reg))
	require.NotNil(t, res)
	checkCalls(t, reg, res)
	return res, err
}

// TestFaultTable runs every fault of faultserver.Faults through the Go API,
// in JSON and native mode, twice: with both models hitting the fault (the
// documented fail-closed outcome: two attempts of the fault's kind, no calls,
// a *SelectionError) and with only the primary hitting it (the fallback model
// answers: one call). Cases run in parallel; afterwards no goroutine may be
// left behind.
func TestFaultTable(t *testing.T) {
	srv, err := faultserver.Start(faultserver.Options{})
	require.NoError(t, err)
	defer srv.Close()
	snapshot := goleak.IgnoreCurrent()

	t.Run("cases", func(t *testing.T) {
		for _, mode := range []selector.Mode{selector.ModeJSON, selector.ModeNative} {
			for _, f := range faultserver.Faults {
				if mode == selector.ModeNative && !f.Content {
					continue // transport faults do not depend on the mode
				}
				if f.Name == faultserver.HugeBody || f.Name == faultserver.HugeChunked {
					continue // TestHugeBodyMemory, alone, so the heap figure is its own
				}
				t.Run(string(mode)+"/"+f.Name, func(t *testing.T) {
					t.Parallel()
					runFault(t, srv, f, mode)
				})
			}
		}
	})
	verifyNoLeak(t, snapshot)
}

func runFault(t *testing.T, srv *faultserver.Server, f faultserver.Fault, mode selector.Mode) {
	want := expect(f, mode)
	// Slow faults wait for the 2 s attempt timeout (the fallback's answer
	// must fit in it too); the others get 10 s so that a loaded machine
	// cannot turn them into timeouts.
	timeout := 10 * time.Second
	if f.Slow {
		timeout = 2 * time.Second
	}
	base := selector.Config{Settings: selector.Settings{Timeout: timeout, Mode: mode, APIKey: "sk-fault-table-key"}}

	// Both models hit the fault.
	cfg := base
	cfg.BaseURL, cfg.Model, cfg.FallbackModel = srv.BaseURL(f.Name), "primary", "fallback"
	start := time.Now()
	res, err := selectWith(t, cfg, nil)
	both := time.Since(start)
	kinds := attemptKinds(res)
	var line string
	if want.kind == "" {
		require.NoError(t, err)
		assert.Equal(t, []string{"ok"}, kinds)
		assert.Len(t, res.Calls, want.calls)
		line = fmt.Sprintf("ok, %d call(s)", len(res.Calls))
		if f.Name == faultserver.Calls1000 {
			assert.Len(t, res.Dropped, 995)
			line += ", 995 dropped `max_calls`"
		}
	} else {
		require.Error(t, err)
		assert.True(t, errors.Is(err, selector.ErrFailClosed), "error %v", err)
		var se *selector.SelectionError
		require.True(t, errors.As(err, &se))
		assert.Empty(t, res.Calls)
		assert.Equal(t, []string{want.kind, want.kind}, kinds, "attempts: %+v", res.Attempts)
		for _, a := range res.Attempts {
			assert.NotEmpty(t, a.Message)
			assert.Contains(t, err.Error(), string(a.Kind))
		}
		if f.Slow {
			// Each attempt is bounded by Timeout (2 s), not by the stall.
			assert.Less(t, both, 8*time.Second)
		}
		line = fmt.Sprintf("`%s` ×2 → `[]`, fail_closed", want.kind)
	}

	// Only the primary hits the fault; the fallback (same server) answers.
	cfg = base
	cfg.BaseURL, cfg.Model, cfg.FallbackModel = srv.URL, "fault:"+f.Name, "fallback"
	res, err = selectWith(t, cfg, nil)
	kinds = attemptKinds(res)
	require.NoError(t, err)
	if want.kind == "" {
		assert.Equal(t, []string{"ok"}, kinds)
	} else {
		assert.Equal(t, []string{want.kind, "ok"}, kinds)
		require.Len(t, res.Calls, 1)
		assert.Equal(t, "get_weather", res.Calls[0].Tool)
		line += "; fallback recovers"
	}
	// The first message of a failed attempt names what went wrong.
	if want.kind != "" && strings.HasPrefix(f.Name, "status_") {
		assert.Contains(t, res.Attempts[0].Message, "HTTP "+strings.TrimSuffix(strings.TrimPrefix(f.Name, "status_"), "_html"))
	}
	faultOutcomes.Store(f.Name+"/"+string(mode), line)
}

// TestFaultMessages pins the server's own words in the attempt messages.
func TestFaultMessages(t *testing.T) {
	srv, err := faultserver.Start(faultserver.Options{})
	require.NoError(t, err)
	defer srv.Close()
	for name, want := range map[string]string{
		faultserver.Status429:     "HTTP 429: Rate limit reached for requests",
		faultserver.Status502HTML: "HTTP 502: 502 Bad Gateway",
		faultserver.OllamaError:   "HTTP 404: model \"fault:ollama_error\" not found",
		faultserver.VLLMError:     "HTTP 400: This model's maximum context length is 4096 tokens.",
		faultserver.EmptyChoices:  "the completion has no choices",
		faultserver.UnknownTool:   "unknown_tool",
		faultserver.ArgsArray:     "\"args\" must be a JSON object",
		faultserver.DeepArgs:      "nest deeper than 64",
	} {
		t.Run(name, func(t *testing.T) {
			cfg := selector.Config{Settings: selector.Settings{Timeout: 1 * time.Second, BaseURL: srv.URL, Model: "fault:" + name}}
			res, err := selectWith(t, cfg, nil)
			require.Error(t, err)
			require.Len(t, res.Attempts, 1)
			assert.Contains(t, res.Attempts[0].Message, want)
		})
	}
}

// TestHugeBodyMemory: a 50 MB body is refused without being read whole. The
// heap grows by far less than the body, whether the size is announced
// (refused unread) or not (cut off at MaxResponseBytes, 4 MiB by default).
func TestHugeBodyMemory(t *testing.T) {
	srv, err := faultserver.Start(faultserver.Options{})
	require.NoError(t, err)
	defer srv.Close()
	snapshot := goleak.IgnoreCurrent()
	figures := map[string]any{}
	for _, name := range []string{faultserver.HugeBody, faultserver.HugeChunked} {
		t.Run(name, func(t *testing.T) {
			cfg := selector.Config{Settings: selector.Settings{Timeout: 30 * time.Second, BaseURL: srv.BaseURL(name), Model: "primary", FallbackModel: "fallback"}}
			client, err := selector.NewOpenAIClient(&cfg, nil)
			require.NoError(t, err)
			cfg.Logger = slog.New(slog.DiscardHandler)
			sel, err := selector.New(client, &cfg)
			require.NoError(t, err)
			reg := newRegistry(t)
			req := request(reg)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := sel.Select(context.Background(), req)
			runtime.ReadMemStats(&after)
			var retained runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&retained)
			require.Error(t, err)
			assert.Equal(t, []string{"response_too_large", "response_too_large"}, attemptKinds(res))
			assert.Empty(t, res.Calls)
			allocated := after.TotalAlloc - before.TotalAlloc
			kept := int64(retained.HeapAlloc) - int64(before.HeapAlloc)
			t.Logf("%s: %.1f MiB allocated in total for two attempts (an upper bound of the heap growth), %+.2f MiB retained after GC (body: 50 MiB per attempt)",
				name, float64(allocated)/(1<<20), float64(kept)/(1<<20))
			// Two attempts of a 50 MB body: reading them whole would allocate
			// at least 100 MiB. What is read is bounded by MaxResponseBytes (4 MiB).
			assert.Less(t, allocated, uint64(50<<20), "the client read too much of the body")
			assert.Less(t, kept, int64(4<<20))
			figures[name] = map[string]float64{"total_alloc_mib": float64(allocated) / (1 << 20), "retained_mib": float64(kept) / (1 << 20)}
			faultOutcomes.Store(name+"/json", fmt.Sprintf("`response_too_large` ×2 → `[]`, fail_closed; %.0f MiB allocated for both attempts", float64(allocated)/(1<<20)))
			assert.Contains(t, res.Attempts[0].Message, map[string]string{
				faultserver.HugeBody:    "refused unread",
				faultserver.HugeChunked: "exceeds the limit",
			}[name])
		})
	}
	verifyNoLeak(t, snapshot)
	record("huge_body_go", figures)
}

// TestCallerCancel: a caller that cancels while the server stalls gets
// `canceled` at once (the fallback is recorded as canceled without a
// request), and nothing is left running.
func TestCallerCancel(t *testing.T) {
	srv, err := faultserver.Start(faultserver.Options{})
	require.NoError(t, err)
	defer srv.Close()
	snapshot := goleak.IgnoreCurrent()
	cfg := selector.Config{Settings: selector.Settings{Timeout: 30 * time.Second, BaseURL: srv.BaseURL(faultserver.DelayHeaders), Model: "primary", FallbackModel: "fallback"}}
	client, err := selector.NewOpenAIClient(&cfg, nil)
	require.NoError(t, err)
	cfg.Logger = slog.New(slog.DiscardHandler)
	sel, err := selector.New(client, &cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	res, err := sel.Select(ctx, request(newRegistry(t)))
	require.Error(t, err)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Equal(t, []string{"canceled", "canceled"}, attemptKinds(res))
	assert.Equal(t, int64(1), srv.Requests())
	verifyNoLeak(t, snapshot)
}
