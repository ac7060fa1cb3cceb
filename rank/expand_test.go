package rank

import (
	"context"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// rankOne ranks input over tools and returns the picks.
func rankOne(t *testing.T, tools []registry.Tool, input string, o *Options) []Pick {
	t.Helper()
	reg := registry.New(nil)
	if err := reg.RegisterAll(tools); err != nil {
		t.Fatal(err)
	}
	if o == nil {
		o = &Options{}
	}
	o.MaxCandidates = 5
	o.MinScore = -1
	picks, err := For(reg).Rank(context.Background(), input, o)
	if err != nil {
		t.Fatal(err)
	}
	return picks
}

func pickOf(picks []Pick, name string) (Pick, bool) {
	for _, p := range picks {
		if p.Tool == name {
			return p, true
		}
	}
	return Pick{}, false
}

// Each way of widening a query finds a tool the query's own words miss, says
// so in the reason, and is gone when its switch is off.
func TestQueryExpansions(t *testing.T) {
	tools := []registry.Tool{
		tool("getrandomquote", "Return a famous quote."),
		tool("github_search", "Search repositories on github."),
		tool("get_weather", "Current conditions for a city."),
		tool("list_cars", "List the cars for sale in a dealership."),
		tool("send_email", "Send an email message."),
		tool("shuffle_list", "Put a list in random order."),
	}
	for _, c := range []struct {
		name, input, tool, reason string
		off                       Options
	}{
		{"a name holds the query's word", "a random line please", "getrandomquote",
			"getrandomquote (holds 'random')", Options{NoNameWords: true}},
		{"query words joined", "look up git hub projects", "github_search",
			"github (joined from 'git hub')", Options{NoNameWords: true}},
		{"a query word split", "call getweather for Lyon", "get_weather",
			"weather (split from 'getweather')", Options{NoNameWords: true}},
		{"a word no tool has brings its relatives", "which automobile can I buy", "list_cars",
			"cars (related to 'automobile')", Options{NoRelatedWords: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ok := pickOf(rankOne(t, tools, c.input, nil), c.tool)
			if !ok {
				t.Fatalf("%q: %s not picked", c.input, c.tool)
			}
			if !strings.Contains(p.Reason, c.reason) {
				t.Errorf("reason %q lacks %q", p.Reason, c.reason)
			}
			off := c.off
			if _, ok := pickOf(rankOne(t, tools, c.input, &off), c.tool); ok {
				t.Errorf("%q: %s picked with the expansion off", c.input, c.tool)
			}
		})
	}
}

// A word the catalog has is never expanded, and an English word in a name is
// not read as a concatenation (download is not down + load).
func TestExpansionsLeaveKnownWords(t *testing.T) {
	tools := []registry.Tool{
		tool("download_file", "Fetch a file over HTTP."),
		tool("load_config", "Read the configuration."),
		tool("list_cars", "List the cars for sale."),
		tool("rent_vehicle", "Rent a vehicle for a day."),
	}
	if p, ok := pickOf(rankOne(t, tools, "load the settings", nil), "download_file"); ok {
		t.Errorf("download_file picked for load: %s", p.Reason)
	}
	// cars is in the catalog: its relatives (vehicle, ...) are not added.
	if p, ok := pickOf(rankOne(t, tools, "cars", nil), "rent_vehicle"); ok {
		t.Errorf("rent_vehicle picked for a word the catalog has: %s", p.Reason)
	}
}

// A tool gains a share of its server's match, named in its reason; a tool of
// a server that matches nothing gains nothing; dotted names are not servers.
func TestNamespaceScore(t *testing.T) {
	tools := []registry.Tool{
		tool("weather__get_forecast", "Forecast for a city."),
		tool("weather__radar_image", "Radar image of rain clouds over a region."),
		tool("weather__alerts", "Storm and rain warnings."),
		tool("maps__geocode", "Coordinates of an address."),
		tool("maps__route", "Directions between two places."),
		tool("calc.rain_gauge", "Convert millimetres of rain."),
		tool("calc.add", "Add two numbers."),
	}
	picks := rankOne(t, tools, "will rain storms reach the city", &Options{Debug: true})
	p, ok := pickOf(picks, "weather__get_forecast")
	if !ok {
		t.Fatalf("weather__get_forecast not picked: %v", pickNames(picks))
	}
	if !strings.Contains(p.Reason, "server weather matches") || p.Provenance.Components["namespace"] <= 0 {
		t.Errorf("no namespace share in %q / %v", p.Reason, p.Provenance.Components)
	}
	for _, name := range []string{"maps__geocode", "calc.add"} {
		if p, ok := pickOf(picks, name); ok && strings.Contains(p.Reason, "server") {
			t.Errorf("%s gained a server share: %s", name, p.Reason)
		}
	}
	off := rankOne(t, tools, "will rain storms reach the city", &Options{NoNamespace: true})
	if p, ok := pickOf(off, "weather__get_forecast"); ok && strings.Contains(p.Reason, "server") {
		t.Errorf("server share with NoNamespace: %s", p.Reason)
	}
	if q, ok := pickOf(off, "weather__get_forecast"); ok && q.Score >= p.Score {
		t.Errorf("score %v without the server share, %v with it", q.Score, p.Score)
	}
}

func TestSplitWord(t *testing.T) {
	known := func(w string) bool {
		switch w {
		case "get", "random", "quote", "ran", "dom", "getrandom", "rand":
			return true
		}
		return false
	}
	for in, want := range map[string]string{
		"getrandomquote": "getrandom quote", // fewest words
		"randomquote":    "random quote",
		"getran":         "get ran",
		"quotes":         "",
		"getx":           "",
	} {
		if got := strings.Join(splitWord(in, known), " "); got != want {
			t.Errorf("splitWord(%q) = %q, want %q", in, got, want)
		}
	}
}

// The compounds of an index are worked out again after an update: a tool
// registered later is met by the words of its concatenated name.
func TestCompoundsAfterUpdate(t *testing.T) {
	reg := registry.New(nil)
	if err := reg.RegisterAll([]registry.Tool{tool("list_quotes", "Get stored quotes."), tool("random_pick", "Pick at random.")}); err != nil {
		t.Fatal(err)
	}
	r := For(reg)
	if _, err := r.Rank(context.Background(), "random quote", nil); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(tool("getrandomquote", "Return a quotation.")); err != nil {
		t.Fatal(err)
	}
	picks, err := r.Rank(context.Background(), "random", &Options{MaxCandidates: 5, MinScore: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pickOf(picks, "getrandomquote"); !ok {
		t.Errorf("getrandomquote not picked after the update: %v", pickNames(picks))
	}
}
