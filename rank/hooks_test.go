package rank

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// Test-only ways in: a Ranker of its own over a registry (For shares one
// per registry), a plain list ranked once, and a prepared query.

func newRanker(reg *registry.Registry) *Ranker { return &Ranker{reg: reg} }

func rankEntries(ctx context.Context, entries []*registry.Entry, input any, opts *Options) ([]Pick, error) {
	return newStatic(entries).Rank(ctx, input, opts)
}

func newQuery(text string) *Query { return &Query{Text: text} }

// For gives one Ranker per registry, kept with the registry: the same one
// every time, following tools registered later.
func TestForIsTheRegistrysRanker(t *testing.T) {
	reg := registry.New(nil)
	r := For(reg)
	if For(reg) != r || For(registry.New(nil)) == r {
		t.Fatal("For is not one Ranker per registry")
	}
	if err := reg.Register(registry.NewTool("get_weather", "weather forecast for a city", json.RawMessage(`{"type":"object"}`))); err != nil {
		t.Fatal(err)
	}
	picks, err := r.Rank(context.Background(), "weather forecast", nil)
	if err != nil || len(picks) != 1 || picks[0].Tool != "get_weather" {
		t.Fatalf("picks %v, %v", picks, err)
	}
	if c := For(nil).Catalog(); c.Len() != 0 {
		t.Fatalf("For(nil) has %d tools", c.Len())
	}
}
