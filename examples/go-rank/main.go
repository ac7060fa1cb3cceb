// Command go-rank is the README's "large catalog" quick start as a whole
// program: rank a 24-tool catalog with reasons, fix the offer with a
// prefilter, and answer a model's find_tool / call_tool through the executor.
// It needs no model endpoint.
//
//	go run ./examples/go-rank
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/executor/metatool"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

func main() {
	if err := run(context.Background(), os.Stdout, "examples/assistant.json"); err != nil {
		fmt.Fprintln(os.Stderr, "go-rank:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, catalog string) error {
	// A catalog in any format the registry reads (canonical, OpenAI, Anthropic, MCP; JSON or JSON Lines).
	reg := registry.New(nil)
	tools, _, err := registry.LoadCatalogFile(catalog)
	if err != nil {
		return err
	}
	if err := reg.RegisterAll(tools); err != nil {
		return err
	}
	fmt.Fprintf(out, "catalog: %d tools\n", reg.Len())

	// 1. Rank: score 0..1 and the reason, in the tool's own words.
	for _, q := range []string{"weather forecast for Lyon tomorrow", "do I pack a parapluie for Lyon?"} {
		picks, err := rank.For(reg).Rank(ctx, q, &rank.Options{MaxCandidates: 3})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "rank %q: %d picks\n", q, len(picks))
		for _, p := range picks {
			fmt.Fprintf(out, "  %s %.2f (%s)\n", p.Tool, p.Score, p.Reason)
		}
	}
	// The second query shares no word with get_weather: ranking alone cannot
	// find it. That is why the selector offers a catalog whole while it fits
	// the token budget, and lets the model search with its own words above it.

	// 2. Fix the offer yourself: a prefilter of the 5 best-ranked tools, for
	// cfg.Prefilter = pre before selector.New(client, &cfg). (A selector
	// whose cfg.Ranker is &rank.Offering{} follows the offer budget
	// instead.)
	pre := rank.For(reg).Prefilter(&rank.Options{MaxCandidates: 5})
	offered, err := pre(ctx, "translate this note into French", reg.Entries())
	if err != nil {
		return err
	}
	fmt.Fprint(out, "prefilter offers:")
	for _, e := range offered {
		fmt.Fprintf(out, " %s", e.Name())
	}
	fmt.Fprintln(out)

	// 3. Or give the model two meta-tools instead of the catalog.
	metaTools, err := rank.MetaToolEntries()
	if err != nil {
		return err
	}
	view, err := registry.MarshalView(metaTools, registry.FormatOpenAI, nil)
	if err != nil {
		return err
	}
	var meta []struct {
		Function struct{ Name string } `json:"function"`
	}
	if err := json.Unmarshal(view, &meta); err != nil {
		return err
	}
	fmt.Fprintf(out, "meta-tools: %s, %s (%d bytes instead of the catalog)\n", meta[0].Function.Name, meta[1].Function.Name, len(view))

	ex := executor.New(reg, nil)
	if err := ex.Handle("get_weather", func(ctx context.Context, args json.RawMessage) (any, error) {
		var a struct{ City string }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return fmt.Sprintf("light rain in %s, 14°C", a.City), nil
	}); err != nil {
		return err
	}
	// The model's calls, as it would send them.
	for _, c := range []executor.Call{
		{ID: "1", Tool: rank.FindToolName, Args: json.RawMessage(`{"query":"weather forecast","limit":2}`)},
		{ID: "2", Tool: rank.CallToolName, Args: json.RawMessage(`{"name":"get_weather","arguments":{"city":"Lyon"}}`)},
	} {
		res, handled, err := metatool.New(ex, nil).Handle(ctx, c)
		if err != nil {
			return err
		}
		if !handled {
			return fmt.Errorf("%s is not a meta-tool", c.Tool)
		}
		fmt.Fprintf(out, "%s -> %s\n", c.Tool, res.Content())
	}
	return nil
}
