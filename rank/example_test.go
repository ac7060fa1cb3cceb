package rank_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

func exampleRegistry() *registry.Registry {
	reg := registry.New(nil)
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name"}}}`)
	reg.RegisterAll([]registry.Tool{
		registry.NewTool("weather__get_forecast", "Get the weather forecast for a city.", schema),
		registry.NewTool("mail__send_email", "Send an email message.", schema),
		registry.NewTool("maps__find_parking", "Find parking near a place.", schema),
	})
	return reg
}

func ExampleRanker_Rank() {
	reg := exampleRegistry()
	picks, err := rank.For(reg).Rank(context.Background(), "Will it rain in Paris tomorrow? Check the forecast.", nil)
	if err != nil {
		panic(err)
	}
	for _, p := range picks {
		fmt.Printf("%s %.2f %s\n", p.Tool, p.Score, p.Reason)
	}
	// Output:
	// weather__get_forecast 0.26 bm25 score 0.259; matched forecast; server weather matches 0.24 (+0.024)
}

func ExampleOptions_related() {
	reg := exampleRegistry()
	picks, _ := rank.For(reg).Rank(context.Background(), "where can I park near the Louvre", &rank.Options{
		Related:      map[string][]string{"maps__find_parking": {"weather__get_forecast"}},
		AlwaysActive: []string{"mail__send_email"},
	})
	for _, p := range picks {
		fmt.Println(p.Tool, "-", p.Provenance.Source)
	}
	// Output:
	// maps__find_parking - score
	// weather__get_forecast - related
	// mail__send_email - always-active
}

// Prerequisites: a top pick that requires a parameter brings the sibling
// tool that yields it, and a Chinese description is found in English.
func ExampleOptions_prerequisites() {
	reg := registry.New(nil)
	latLon := json.RawMessage(`{"type":"object","properties":{"latitude":{"type":"number"},"longitude":{"type":"number"}},"required":["latitude","longitude"]}`)
	address := json.RawMessage(`{"type":"object","properties":{"address":{"type":"string"}},"required":["address"]}`)
	reg.RegisterAll([]registry.Tool{
		registry.NewTool("maps__find_parking", "Find parking near a location.", latLon),
		registry.NewTool("maps__geocode", "Convert an address to its latitude and longitude.", address),
		registry.NewTool("trains__search_tickets", "查询火车票余票信息", address),
	})
	for _, q := range []string{"where can I park near the Louvre", "train tickets to Shanghai"} {
		picks, _ := rank.For(reg).Rank(context.Background(), q, &rank.Options{MaxCandidates: 2})
		for _, p := range picks {
			fmt.Printf("%s (%s): %s\n", p.Tool, p.Provenance.Source, p.Reason)
		}
	}
	// Output:
	// maps__find_parking (score): bm25 score 0.622; matched parking, near; server maps matches 0.52 (+0.052)
	// maps__geocode (prerequisite): yields latitude, longitude that maps__find_parking requires
	// trains__search_tickets (score): bm25 score 0.565; matched trains, tickets; server trains matches 0.52 (+0.052)
}

func ExampleRanker_Prefilter() {
	reg := exampleRegistry()
	prefilter := rank.For(reg).Prefilter(&rank.Options{MaxCandidates: 2})
	offered, _ := prefilter(context.Background(), "send the forecast by email", reg.Entries())
	for _, e := range offered { // catalog order, for stable prompts
		fmt.Println(e.Name())
	}
	// Output:
	// weather__get_forecast
	// mail__send_email
}

// What offering one tool instead of the catalog saves, in the tokens of the
// model's encoding.
func ExampleTokenCounter_CountTools() {
	reg := exampleRegistry()
	tc, _ := rank.NewTokenCounter(rank.EncodingO200k)
	catalog, _ := tc.CountTools(reg.Entries(), registry.FormatOpenAI)
	one, _ := tc.CountTools(reg.Entries()[:1], registry.FormatOpenAI)
	fmt.Println(catalog > one, one > 0)
	// Output: true true
}
