package mcpproxy

import (
	"context"
	"github.com/toolselect/toolselect/rank"
	"os"
	"path/filepath"
	"slices"
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
	if got := find(t, cs, "how many sleep calls reached", 3); !slices.Contains(got, "t__count") {
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
	if got := listNames(t, cs2); slices.Contains(got, "t__count") {
		t.Fatalf("a held tool is listed: %v", got)
	}
	if got := find(t, cs2, "how many sleep calls reached", 5); slices.Contains(got, "t__count") {
		t.Fatalf("a held tool is findable: %v", got)
	}
	for _, res := range []*mcp.CallToolResult{
		call(t, cs2, "t__count", map[string]any{}),
		call(t, cs2, rank.CallToolName, map[string]any{"name": "t__count", "arguments": map[string]any{}}),
	} {
		if !res.IsError || !strings.Contains(text(res), "changed since it was pinned (description differ)") ||
			!strings.Contains(text(res), "held until an operator reviews and approves") || strings.Contains(text(res), "pins approve") {
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
	approvePins(t, pins, "t__count")
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
	waitHeld(t, cs, "t__sleep")
}

// An approval made while the proxy runs (what `toolselect mcp pins approve`
// does: load, approve, save) reaches it without a restart: the held tool is
// listed, findable and callable; a later list_changed, whose import saves
// the pin file, does not write it back as pending.
func TestPinsApprovalReachesARunningProxy(t *testing.T) {
	pins := filepath.Join(t.TempDir(), "pins.json")
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}, Pins: pins})
	p.Close()

	poisoned := testUpstream(t, "t")
	poisoned.Env["TOOLSELECT_TEST_VARIANT"] = "poisoned"
	p2 := startProxy(t, &Config{Upstreams: []Upstream{poisoned}, Pins: pins, Keep: []string{"t__count"}})
	cs := connectMemory(t, p2, "")
	if res := call(t, cs, "t__count", map[string]any{}); !res.IsError || !strings.Contains(text(res), "changed since it was pinned") {
		t.Fatalf("not held: %s", text(res))
	}

	approvePins(t, pins, "t__count")

	if got := listNames(t, cs); !slices.Contains(got, "t__count") {
		t.Fatalf("approved, yet not listed: %v", got)
	}
	if got := find(t, cs, "how many sleep calls reached", 5); !slices.Contains(got, "t__count") {
		t.Fatalf("approved, yet not findable: %v", got)
	}
	for _, res := range []*mcp.CallToolResult{
		call(t, cs, "t__count", map[string]any{}),
		call(t, cs, rank.CallToolName, map[string]any{"name": "t__count", "arguments": map[string]any{}}),
	} {
		if res.IsError {
			t.Fatalf("approved, yet the call fails: %s", text(res))
		}
	}
	if s := p2.Stats(context.Background()); s.Pins == nil || len(s.Pins.Held) != 0 || s.Upstreams[0].Imported != s.Upstreams[0].Listed-1 {
		t.Fatalf("stats after the approval: %+v %+v", s.Pins, s.Upstreams[0]) // bad_schema is refused
	}

	// list_changed: mutate changes sleep (held now, the file saved); count stays approved.
	if res := call(t, cs, "t__mutate", map[string]any{}); res.IsError {
		t.Fatalf("mutate: %s", text(res))
	}
	waitHeld(t, cs, "t__sleep")
	if res := call(t, cs, "t__count", map[string]any{}); res.IsError {
		t.Fatalf("after list_changed the approved tool is refused again: %s", text(res))
	}
	reread, err := registry.LoadPins(pins)
	if err != nil {
		t.Fatal(err)
	}
	if got := pendingTools(reread); strings.Join(got, ",") != "t__sleep" {
		t.Fatalf("pending in the file after list_changed: %v", got)
	}
}

// A catalog tool held under strict descriptions is served once the pin file
// is edited by hand to mark it reviewed, found by the poll with no request.
func TestPinsEditOfTheFileReleasesAHeldCatalogTool(t *testing.T) {
	dir := t.TempDir()
	catalog := filepath.Join(dir, "catalog.json")
	os.WriteFile(catalog, []byte(`[{"name":"zebra_stripes","description":"Count a zebra's stripes\u200b.","parameters":{"type":"object"}},
		{"name":"lion_mane","description":"Measure a lion's mane.","parameters":{"type":"object"}}]`), 0o600)
	pins := filepath.Join(dir, "pins.json")
	p := startProxy(t, &Config{Catalogs: []string{catalog}, Pins: pins, StrictDescriptions: true})
	if found, _ := p.FindTool(context.Background(), "zebra stripes", 5); len(found) != 0 && found[0].Name == "zebra_stripes" {
		t.Fatalf("a flagged tool is findable under strict descriptions: %v", found)
	}
	b, err := os.ReadFile(pins)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"flags": [`, `"reviewed": true, "flags": [`, 1)
	if edited == string(b) {
		t.Fatalf("no flagged entry in %s", b)
	}
	if err := os.WriteFile(pins, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.Registry().Len() != 2 { // the poll, not a request, releases it
		if time.Now().After(deadline) {
			t.Fatalf("the edit did not release the tool: %d tools", p.Registry().Len())
		}
		time.Sleep(50 * time.Millisecond)
	}
	found, err := p.FindTool(context.Background(), "zebra stripes", 5)
	if err != nil || len(found) == 0 || found[0].Name != "zebra_stripes" {
		t.Fatalf("after the edit: %v %v", found, err)
	}
	if s := p.Stats(context.Background()); len(s.Pins.Held) != 0 || len(s.Pins.Flagged) != 1 {
		t.Fatalf("stats after the edit: %+v", s.Pins)
	}
	if b2, _ := os.ReadFile(pins); !strings.Contains(string(b2), `"reviewed": true`) {
		t.Fatalf("the edit was overwritten: %s", b2)
	}
}

// waitHeld calls tool until the proxy answers that it changed since it was
// pinned (the upstream re-lists after a list_changed in the background).
func waitHeld(t *testing.T, cs *mcp.ClientSession, tool string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := call(t, cs, tool, map[string]any{"ms": 1})
		if res.IsError && strings.Contains(text(res), "changed since it was pinned") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the changed tool %s was not held: %s", tool, text(res))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// approvePins approves names in the pin file as `toolselect mcp pins
// approve` does: load, approve, save.
func approvePins(t *testing.T, path string, names ...string) {
	t.Helper()
	ps, err := registry.LoadPins(path)
	if err != nil {
		t.Fatal(err)
	}
	if missing := ps.Approve(names...); len(missing) != 0 {
		t.Fatalf("approve: %v", missing)
	}
	if err := ps.Save(); err != nil {
		t.Fatal(err)
	}
}

// pendingTools lists the tools with a changed definition waiting for
// approval, by name.
func pendingTools(p *registry.Pins) []string {
	var out []string
	for _, c := range p.Waiting() {
		if c.Status == registry.PinChanged {
			out = append(out, c.Tool)
		}
	}
	return out
}
