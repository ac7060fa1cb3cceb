package rank

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

func schemaTool(name, desc, schema string) registry.Tool {
	return registry.NewTool(name, desc, json.RawMessage(schema))
}

const latLon = `{"type":"object","properties":{"latitude":{"type":"number"},"longitude":{"type":"number"},"radius":{"type":"number"}},"required":["latitude","longitude"]}`

// geoRegistry is a small map server, a chat server and an unrelated tool.
func geoRegistry(t testing.TB, mutate func([]registry.Tool)) *registry.Registry {
	t.Helper()
	tools := []registry.Tool{
		schemaTool("geo__find_parking", "Locate parking facilities near a location.", latLon),
		schemaTool("geo__find_schools", "Locate schools near a location.", latLon),
		schemaTool("geo__geocode_address", "Convert an address to geographic coordinates. Returns latitude and longitude.",
			`{"type":"object","properties":{"address":{"type":"string"}},"required":["address"]}`),
		schemaTool("geo__reverse_geocode", "Convert a latitude and longitude to an address.", latLon),
		schemaTool("chat__post_message", "Post a message to a chat channel.",
			`{"type":"object","properties":{"channel_id":{"type":"string"},"text":{"type":"string"}},"required":["channel_id","text"]}`),
		schemaTool("chat__list_channels", "List the channels of the workspace with their channel id and name.", `{"type":"object"}`),
		schemaTool("chat__search_text", "Search the text of messages.", `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
		schemaTool("chat__format_text", "Format text as markdown.", `{"type":"object","properties":{"markdown":{"type":"string"}},"required":["markdown"]}`),
		schemaTool("chat__spell_text", "Spell-check text.", `{"type":"object","properties":{"lang":{"type":"string"}},"required":["lang"]}`),
		schemaTool("weather_latitude_longitude", "Weather at a latitude and longitude.", `{"type":"object","properties":{"place":{"type":"string"}},"required":["place"]}`),
	}
	if mutate != nil {
		mutate(tools)
	}
	reg := registry.New(nil)
	if err := reg.RegisterAll(tools); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestPrerequisitesDerived(t *testing.T) {
	c := newCatalog(geoRegistry(t, nil).Entries())
	pre := prerequisites(c)
	names := func(tool string) []string {
		pos, _ := c.Pos(tool)
		var out []string
		for _, p := range pre.prereqsOf(pos) {
			out = append(out, c.Entries()[p.pos].Name()+"("+strings.Join(p.params, ",")+")")
		}
		return out
	}
	for tool, want := range map[string][]string{
		// geocode_address mentions latitude and longitude and takes neither;
		// reverse_geocode takes them, so it does not yield them; the tool
		// without a namespace is no sibling.
		"geo__find_parking": {"geo__geocode_address(latitude,longitude)"},
		"geo__find_schools": {"geo__geocode_address(latitude,longitude)"},
		// reverse_geocode needs the coordinates too.
		"geo__reverse_geocode": {"geo__geocode_address(latitude,longitude)"},
		// The text it requires is mentioned by three siblings: too generic
		// to say which one yields it, so only channel_id brings a tool.
		"chat__post_message": {"chat__list_channels(channel_id)"},
		// An address is what reverse_geocode yields.
		"geo__geocode_address": {"geo__reverse_geocode(address)"},
		// No sibling mentions a query.
		"chat__search_text": nil,
	} {
		if got := names(tool); !slices.Equal(got, want) {
			t.Errorf("prerequisites of %s = %q, want %q", tool, got, want)
		}
	}
}

// TestPrerequisitesFromIndex: read from the bm25 index or from the tools'
// own text, the prerequisites are the same.
func TestPrerequisitesFromIndex(t *testing.T) {
	c := newCatalog(geoRegistry(t, nil).Entries())
	fromText := newPrereqIndex(c.Entries()) // no catalog: analyses the text
	if _, err := (&BM25{}).index(c); err != nil {
		t.Fatal(err)
	}
	fromIndex := prerequisites(c)
	if fromIndex.bm25() == nil {
		t.Fatal("the bm25 index is not seen")
	}
	for pos := range c.Entries() {
		a, b := fromText.prereqsOf(pos), fromIndex.prereqsOf(pos)
		if len(a) != len(b) {
			t.Fatalf("%s: from text %v, from index %v", c.Entries()[pos].Name(), a, b)
		}
		for i := range a {
			if a[i].pos != b[i].pos || !slices.Equal(a[i].params, b[i].params) {
				t.Errorf("%s: from text %v, from index %v", c.Entries()[pos].Name(), a, b)
			}
		}
	}
}

func TestRankAddsPrerequisites(t *testing.T) {
	ctx := context.Background()
	reg := geoRegistry(t, nil)
	picks, err := For(reg).Rank(ctx, "where can I park my car", &Options{MaxCandidates: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(picks) < 2 || picks[0].Tool != "geo__find_parking" || picks[1].Tool != "geo__geocode_address" {
		t.Fatalf("picks %v, want find_parking then its prerequisite geocode_address", pickNames(picks))
	}
	pr := picks[1]
	if pr.Provenance.Source != SourcePrerequisite || pr.Provenance.RelatedTo != "geo__find_parking" ||
		pr.Reason != "yields latitude, longitude that geo__find_parking requires" || pr.Score != picks[0].Score/2 || pr.Provenance.Rank != 2 {
		t.Errorf("prerequisite pick %+v", pr)
	}

	// They count in MaxCandidates, unless PrerequisitesBeyond: then the
	// scored picks all stay, each followed by what it needs.
	picks, _ = For(reg).Rank(ctx, "where can I park my car", &Options{MaxCandidates: 1})
	if got := pickNames(picks); !slices.Equal(got, []string{"geo__find_parking"}) {
		t.Errorf("MaxCandidates 1: picks %v", got)
	}
	scored, _ := For(reg).Rank(ctx, "where can I park my car", &Options{MaxCandidates: 2, NoPrerequisites: true})
	picks, _ = For(reg).Rank(ctx, "where can I park my car", &Options{MaxCandidates: 2, PrerequisitesBeyond: true})
	var kept []string
	for _, p := range picks {
		if p.Provenance.Source != SourcePrerequisite {
			kept = append(kept, p.Tool)
		}
	}
	if !slices.Equal(kept, pickNames(scored)) || len(picks) <= len(scored) || picks[1].Provenance.Source != SourcePrerequisite {
		t.Errorf("PrerequisitesBeyond: picks %v, want the scored %v each followed by its prerequisites", pickNames(picks), pickNames(scored))
	}
	// NoPrerequisites turns them off.
	picks, _ = For(reg).Rank(ctx, "where can I park my car", &Options{MaxCandidates: 3, NoPrerequisites: true})
	for _, p := range picks {
		if p.Provenance.Source == SourcePrerequisite {
			t.Errorf("NoPrerequisites: got prerequisite %s", p.Tool)
		}
	}
	// An exact-name pick brings its prerequisites too.
	picks, _ = For(reg).Rank(ctx, "call chat__post_message", &Options{MaxCandidates: 2})
	if got := pickNames(picks); !slices.Equal(got, []string{"chat__post_message", "chat__list_channels"}) {
		t.Errorf("exact name: picks %v", got)
	}
}

// TestPrerequisitesObeyFilters: a prerequisite the caller may not use is
// not added.
func TestPrerequisitesObeyFilters(t *testing.T) {
	reg := geoRegistry(t, func(tools []registry.Tool) { tools[2].Safe = false })
	picks, err := For(reg).Rank(context.Background(), "where can I park my car", &Options{MaxCandidates: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range picks {
		if p.Tool == "geo__geocode_address" {
			t.Errorf("unsafe prerequisite offered: %v", pickNames(picks))
		}
	}
	picks, _ = For(reg).Rank(context.Background(), "where can I park my car", &Options{MaxCandidates: 3, AllowUnsafe: true})
	if got := pickNames(picks); len(got) < 2 || got[1] != "geo__geocode_address" {
		t.Errorf("AllowUnsafe: picks %v, want geocode_address second", got)
	}
}

// TestPrerequisitesSkipChosenParameters: a parameter whose value the caller
// chooses (a fixed list, a flag, a set of options) brings no tool, even when
// a sibling mentions it.
func TestPrerequisitesSkipChosenParameters(t *testing.T) {
	reg := registry.New(nil)
	if err := reg.RegisterAll([]registry.Tool{
		schemaTool("doc__format_text", "Format the text.",
			`{"type":"object","properties":{"operation":{"enum":["bold","italic"]},"strict":{"type":"boolean"},"options":{"type":"object"},"document_id":{"type":"string"}},"required":["operation","strict","options","document_id"]}`),
		schemaTool("doc__list_operations", "List every operation, strict mode and options, with the document id of each document.", `{"type":"object"}`),
	}); err != nil {
		t.Fatal(err)
	}
	c := newCatalog(reg.Entries())
	pre := prerequisites(c).prereqsOf(0)
	if len(pre) != 1 || strings.Join(pre[0].params, ",") != "document_id" {
		t.Errorf("prerequisites %v, want list_operations for document_id only", pre)
	}
}
