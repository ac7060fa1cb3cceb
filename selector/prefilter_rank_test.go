package selector_test

// The rank pre-filter inside the selector, over a real catalog (the 1,437
// BFCL tools): the model is offered only the top K plus always-active and
// related tools, in catalog order, and a call to any other tool is rejected.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// recordingClient answers every request with one scripted reply and keeps the requests.
type recordingClient struct {
	mu    sync.Mutex
	reply selector.ChatResponse
	seen  []selector.ChatRequest
}

func (c *recordingClient) Chat(_ context.Context, req selector.ChatRequest) (selector.ChatResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, req)
	return c.reply, nil
}

func (c *recordingClient) requests() []selector.ChatRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
}

var bfclOnce struct {
	sync.Once
	reg *registry.Registry
	err error
}

func bfclRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	bfclOnce.Do(func() {
		tools, _, err := registry.LoadCatalogFile(fixtures.Tools("bfcl"))
		if err != nil {
			bfclOnce.err = err
			return
		}
		reg := registry.New(nil)
		bfclOnce.err = reg.RegisterAll(tools)
		bfclOnce.reg = reg
	})
	require.NoError(t, bfclOnce.err)
	return bfclOnce.reg
}

const triangleTask = "Calculate the area of a triangle whose base is 10 and height is 5."

// prefilterOpts: top 4, plus one always-active tool and one related tool,
// both far from the task.
func prefilterOpts(t *testing.T, reg *registry.Registry) *rank.Options {
	t.Helper()
	for _, n := range []string{"calculate_triangle_area", "math.factorial", "get_stock_price"} {
		_, ok := reg.Get(n)
		require.True(t, ok, "catalog lacks %s", n)
	}
	return &rank.Options{
		MaxCandidates: 4,
		AlwaysActive:  []string{"get_stock_price"},
		Related:       map[string][]string{"calculate_triangle_area": {"math.factorial"}},
	}
}

// systemTools returns the tool names listed in a JSON-mode system prompt.
func systemTools(t *testing.T, system string) []string {
	t.Helper()
	i := strings.LastIndex(system, "\nTools:\n")
	require.GreaterOrEqual(t, i, 0, "no tools section in the system prompt")
	var tools []struct {
		Name string `json:"name"`
	}
	require.NoError(t, json.Unmarshal([]byte(system[i+len("\nTools:\n"):]), &tools))
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Name)
	}
	return out
}

// inCatalogOrder reports whether names follow registration order.
func inCatalogOrder(t *testing.T, reg *registry.Registry, names []string) bool {
	t.Helper()
	var seqs []uint64
	for _, n := range names {
		e, ok := reg.Get(n)
		require.True(t, ok, n)
		seqs = append(seqs, e.Seq())
	}
	return slices.IsSorted(seqs)
}

func newRankedSelector(t *testing.T, client selector.ChatClient, reg *registry.Registry, mut func(*selector.Config)) *selector.ToolSelector {
	t.Helper()
	var cfg selector.Config
	cfg.Model = "m"
	if mut != nil {
		mut(&cfg)
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Prefilter = rank.For(reg).Prefilter(prefilterOpts(t, reg))
	sel, err := selector.New(client, &cfg)
	require.NoError(t, err)
	return sel
}

func TestRankPrefilterOffersTopKInCatalogOrder(t *testing.T) {
	reg := bfclRegistry(t)
	ctx := context.Background()
	client := &recordingClient{reply: selector.ChatResponse{Content: `{"calls":[{"tool":"calculate_triangle_area","args":{"base":10,"height":5}}]}`}}
	sel := newRankedSelector(t, client, reg, nil)
	req := selector.Request{Task: selector.Task{Description: triangleTask}, Registry: reg}

	res, err := sel.Select(ctx, req)
	require.NoError(t, err)
	require.Len(t, res.Calls, 1)
	assert.Equal(t, "calculate_triangle_area", res.Calls[0].Tool)

	// What rank says the top 4 are, plus the always-active and related tools, in catalog order.
	picks, err := rank.For(reg).Rank(ctx, triangleTask, &rank.Options{MaxCandidates: 4})
	require.NoError(t, err)
	require.Len(t, picks, 4)
	var want []string
	for _, p := range picks {
		want = append(want, p.Tool)
	}
	require.Contains(t, want, "calculate_triangle_area")
	want = append(want, "math.factorial", "get_stock_price")
	slices.SortFunc(want, func(a, b string) int {
		ea, _ := reg.Get(a)
		eb, _ := reg.Get(b)
		return int(ea.Seq()) - int(eb.Seq())
	})
	assert.Equal(t, want, res.Offered, "offered: top K + related + always-active, catalog order")
	assert.True(t, inCatalogOrder(t, reg, res.Offered))

	// The prompt lists exactly those tools, in that order: 6 of 1,437.
	reqs := client.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, want, systemTools(t, reqs[0].Messages[0].Content))

	// The same request yields byte-identical prompts, from this selector and a new one.
	_, err = sel.Select(ctx, req)
	require.NoError(t, err)
	_, err = newRankedSelector(t, client, reg, nil).Select(ctx, req)
	require.NoError(t, err)
	reqs = client.requests()
	require.Len(t, reqs, 3)
	first, _ := json.Marshal(reqs[0].Messages)
	for _, r := range reqs[1:] {
		again, _ := json.Marshal(r.Messages)
		assert.Equal(t, string(first), string(again), "prompt bytes changed for the same request")
	}
}

func TestRankPrefilterNativeModeOffersTheSameTools(t *testing.T) {
	reg := bfclRegistry(t)
	client := &recordingClient{reply: selector.ChatResponse{ToolCalls: []selector.NativeCall{{ID: "1", Name: "calculate_triangle_area", Arguments: `{"base":10,"height":5}`}}}}
	sel := newRankedSelector(t, client, reg, func(c *selector.Config) { c.Mode = selector.ModeNative })
	res, err := sel.Select(context.Background(), selector.Request{Task: selector.Task{Description: triangleTask}, Registry: reg})
	require.NoError(t, err)
	require.Len(t, res.Calls, 1)
	reqs := client.requests()
	require.Len(t, reqs, 1)
	var names []string
	for _, raw := range reqs[0].Tools {
		var tl struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		require.NoError(t, json.Unmarshal(raw, &tl))
		names = append(names, tl.Function.Name)
	}
	var want []string
	for _, n := range res.Offered {
		want = append(want, reg.ProviderName(registry.FormatOpenAI, n))
	}
	want = append(want, selector.SearchToolName)
	assert.Equal(t, want, names, "the provider tools are the offered ones, in the same order, then the search function")
	assert.Len(t, names, 7)
}

// notOffered returns a registered tool the pre-filter did not offer.
func notOffered(t *testing.T, reg *registry.Registry, offered []string) string {
	t.Helper()
	for _, e := range reg.Entries() {
		if !slices.Contains(offered, e.Name()) && e.Name() == "calculate_BMI" {
			return e.Name()
		}
	}
	for _, e := range reg.Entries() {
		if !slices.Contains(offered, e.Name()) {
			return e.Name()
		}
	}
	require.FailNow(t, "every tool was offered")
	return ""
}

func TestRankPrefilterRejectsCallsToToolsNotOffered(t *testing.T) {
	reg := bfclRegistry(t)
	ctx := context.Background()
	req := selector.Request{Task: selector.Task{Description: triangleTask}, Registry: reg}

	// Which tools are offered, and one registered tool that is not.
	probe := &recordingClient{reply: selector.ChatResponse{Content: `{"calls":[]}`}}
	res, err := newRankedSelector(t, probe, reg, nil).Select(ctx, req)
	require.NoError(t, err)
	other := notOffered(t, reg, res.Offered)
	otherCall := `{"tool":"` + other + `","args":{}}`
	goodCall := `{"tool":"calculate_triangle_area","args":{"base":10,"height":5}}`

	t.Run("fail closed: the attempt fails with kind validation", func(t *testing.T) {
		client := &recordingClient{reply: selector.ChatResponse{Content: `{"calls":[` + goodCall + `,` + otherCall + `]}`}}
		res, err := newRankedSelector(t, client, reg, nil).Select(ctx, req)
		require.Error(t, err)
		assert.True(t, errors.Is(err, selector.ErrFailClosed))
		var se *selector.SelectionError
		require.True(t, errors.As(err, &se))
		require.Len(t, se.Attempts, 1)
		a := se.Attempts[0]
		assert.False(t, a.OK)
		assert.Equal(t, selector.KindValidation, a.Kind)
		require.Len(t, a.Rejected, 1)
		assert.Equal(t, other, a.Rejected[0].Tool)
		assert.Equal(t, selector.DropNotOffered, a.Rejected[0].Reason)
		assert.Empty(t, res.Calls)
	})
	t.Run("fail open: the call is dropped as not_offered", func(t *testing.T) {
		client := &recordingClient{reply: selector.ChatResponse{Content: `{"calls":[` + goodCall + `,` + otherCall + `]}`}}
		res, err := newRankedSelector(t, client, reg, func(c *selector.Config) { c.FailOpen = true }).Select(ctx, req)
		require.NoError(t, err)
		require.Len(t, res.Calls, 1)
		assert.Equal(t, "calculate_triangle_area", res.Calls[0].Tool)
		require.Len(t, res.Dropped, 1)
		assert.Equal(t, other, res.Dropped[0].Tool)
		assert.Equal(t, selector.DropNotOffered, res.Dropped[0].Reason)
	})
}
