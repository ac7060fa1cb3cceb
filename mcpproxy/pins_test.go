package mcpproxy

import (
	"context"
	"github.com/toolselect/toolselect/rank"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/registry"
)

// A tool whose definition changes between two runs of a real upstream
// process is held until approved; hidden characters are flagged.
func TestPinsHoldARugPullAcrossRestarts(t *testing.T) {
	pins := filepath.Join(t.TempDir(), "pins.json")
	clean := testUpstream(t, "t")
	p := startProxy(t, &Config{Upstreams: []Upstream{clean}, Pins: pins})
	cs := connectMemory(t, p, "")
	if got := find(t, cs, "how many sleep calls reached", 3); !contains(got, "t__count") {
		t.Fatalf("first run: find_tool %v", got)
	}
	p.Close()
	b, err := os.ReadFile(pins)
	if err != nil || !strings.Contains(string(b), `"t__count"`) {
		t.Fatalf("the pin file after the first run: %v %s", err, b)
	}

	// The same upstream restarts with a poisoned description.
	poisoned := testUpstream(t, "t")
	poisoned.Env["TOOLSELECT_TEST_VARIANT"] = "poisoned"
	p2 := startProxy(t, &Config{Upstreams: []Upstream{poisoned}, Pins: pins, Keep: []string{"t__count"}})
	cs2 := connectMemory(t, p2, "")
	if got := listNames(t, cs2); contains(got, "t__count") {
		t.Fatalf("a held tool is listed: %v", got)
	}
	if got := find(t, cs2, "how many sleep calls reached", 5); contains(got, "t__count") {
		t.Fatalf("a held tool is findable: %v", got)
	}
	for _, res := range []*mcp.CallToolResult{
		call(t, cs2, "t__count", map[string]any{}),
		call(t, cs2, rank.CallToolName, map[string]any{"name": "t__count", "arguments": map[string]any{}}),
	} {
		if !res.IsError || !strings.Contains(text(res), "changed since it was pinned (description differ)") ||
			!strings.Contains(text(res), "toolselect mcp pins approve t__count --pins "+pins) {
			t.Fatalf("a call to the held tool: %s", text(res))
		}
	}
	s := p2.Stats(context.Background())
	if s.Pins == nil || len(s.Pins.Held) != 1 || s.Pins.Held[0].Tool != "t__count" || len(s.Pins.Flagged) != 1 ||
		strings.Join(s.Pins.Flagged[0].Flags, ",") != registry.FlagInvisible+","+registry.FlagHTMLComment {
		t.Fatalf("stats: %+v", s.Pins)
	}
	p2.Close()

	// Approved (what `toolselect mcp pins approve` does), the new definition is served.
	ps, err := registry.LoadPins(pins)
	if err != nil {
		t.Fatal(err)
	}
	if missing := ps.Approve("t__count"); len(missing) != 0 {
		t.Fatalf("approve: %v", missing)
	}
	if err := ps.Save(); err != nil {
		t.Fatal(err)
	}
	p3 := startProxy(t, &Config{Upstreams: []Upstream{poisoned}, Pins: pins})
	cs3 := connectMemory(t, p3, "")
	if res := call(t, cs3, "t__count", map[string]any{}); res.IsError {
		t.Fatalf("after approval: %s", text(res))
	}
	// With strict descriptions a flagged tool is held even on first sight.
	p4 := startProxy(t, &Config{Upstreams: []Upstream{poisoned}, Pins: filepath.Join(t.TempDir(), "fresh.json"), StrictDescriptions: true})
	cs4 := connectMemory(t, p4, "")
	if res := call(t, cs4, "t__count", map[string]any{}); !res.IsError || !strings.Contains(text(res), "strict descriptions") {
		t.Fatalf("strict, flagged: %s", text(res))
	}
}

// A tool that changes on tools/list_changed is held at once.
func TestPinsHoldAChangeOnListChanged(t *testing.T) {
	pins := filepath.Join(t.TempDir(), "pins.json")
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}, Pins: pins})
	cs := connectMemory(t, p, "")
	if res := call(t, cs, "t__sleep", map[string]any{"ms": 1}); res.IsError {
		t.Fatalf("before: %s", text(res))
	}
	if res := call(t, cs, "t__mutate", map[string]any{}); res.IsError {
		t.Fatalf("mutate: %s", text(res))
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := call(t, cs, "t__sleep", map[string]any{"ms": 1})
		if res.IsError && strings.Contains(text(res), "changed since it was pinned") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the changed tool was not held: %s", text(res))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
