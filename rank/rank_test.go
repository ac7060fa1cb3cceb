package rank

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolselect/toolselect/registry"
)

func tool(name, desc string) registry.Tool {
	return registry.NewTool(name, desc, json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"input"}}}`))
}

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg := registry.New(nil)
	tools := []registry.Tool{
		tool("weather.get_forecast", "Get the weather forecast for a city."),
		tool("weather.get_current", "Get the current weather conditions in a city."),
		tool("mail__send_email", "Send an email message to a recipient."),
		tool("files__delete_file", "Delete a file from disk."),
		tool("calendar__create_event", "Create a calendar event with a title and time."),
		tool("stream_logs", "Stream the logs of a running service."),
		tool("add", "Add two numbers."),
		tool("getHTTPResponse", "Fetch a URL and return the HTTP response body."),
	}
	tools[3].Safe = false
	tools[4].Roles = []string{"admin"}
	tools[5].Capabilities = []string{registry.CapabilityStreaming}
	if err := reg.RegisterAll(tools); err != nil {
		t.Fatal(err)
	}
	return reg
}

func rankNames(t *testing.T, reg *registry.Registry, input any, o *Options) []string {
	t.Helper()
	picks, err := For(reg).Rank(context.Background(), input, o)
	if err != nil {
		t.Fatal(err)
	}
	return pickNames(picks)
}

func TestTerms(t *testing.T) {
	for in, want := range map[string][]string{
		"getHTTPResponse2":        {"get", "http", "respons", "2"},
		"weather.get_forecast":    {"weather", "get", "forecast"},
		"The running of the dogs": {"run", "dog"},
		"搜索关键词":                   {"搜索", "索关", "关键", "键词", "search", "keyword"},
	} {
		if got := indexTerms(in); !slices.Equal(got, want) {
			t.Errorf("indexTerms(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDefaultsAndScores(t *testing.T) {
	reg := testRegistry(t)
	picks, err := For(reg).Rank(context.Background(), "weather forecast for Paris", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(picks) == 0 || len(picks) > DefaultMaxCandidates {
		t.Fatalf("got %d picks, want 1..%d", len(picks), DefaultMaxCandidates)
	}
	if picks[0].Tool != "weather.get_forecast" {
		t.Fatalf("first pick %s", picks[0].Tool)
	}
	for _, p := range picks {
		if p.Score < DefaultMinScore || p.Score > 1 {
			t.Errorf("%s score %v out of range", p.Tool, p.Score)
		}
		if p.Provenance.Scorer != "bm25" || p.Provenance.Source != SourceScore || p.Reason == "" {
			t.Errorf("provenance %+v reason %q", p.Provenance, p.Reason)
		}
		if p.Provenance.Matched != nil {
			t.Errorf("matched terms without Debug")
		}
	}
	if got := rankNames(t, reg, "weather", &Options{MaxCandidates: 1}); len(got) != 1 {
		t.Errorf("MaxCandidates 1: %v", got)
	}
	if got := rankNames(t, reg, "weather forecast", &Options{MinScore: 0.99}); len(got) != 0 {
		t.Errorf("MinScore 0.99 kept %v", got)
	}
	if got := rankNames(t, reg, "zebra quantum", nil); len(got) != 0 {
		t.Errorf("unrelated query picked %v", got)
	}
}

func TestFilters(t *testing.T) {
	reg := testRegistry(t)
	if got := rankNames(t, reg, "delete a file", nil); slices.Contains(got, "files__delete_file") {
		t.Errorf("unsafe tool offered: %v", got)
	}
	if got := rankNames(t, reg, "delete a file", &Options{AllowUnsafe: true}); !slices.Contains(got, "files__delete_file") {
		t.Errorf("AllowUnsafe: %v", got)
	}
	if got := rankNames(t, reg, "create a calendar event", nil); slices.Contains(got, "calendar__create_event") {
		t.Errorf("role-restricted tool offered without the role: %v", got)
	}
	if got := rankNames(t, reg, "create a calendar event", &Options{Roles: []string{"admin"}}); !slices.Contains(got, "calendar__create_event") {
		t.Errorf("Roles admin: %v", got)
	}
	got := rankNames(t, reg, "logs weather", &Options{Capabilities: []string{registry.CapabilityStreaming}})
	if !slices.Equal(got, []string{"stream_logs"}) {
		t.Errorf("Capabilities streaming: %v", got)
	}
}

func TestExactNameFirst(t *testing.T) {
	reg := testRegistry(t)
	got := rankNames(t, reg, "use mail__send_email to tell me the weather forecast", nil)
	if len(got) == 0 || got[0] != "mail__send_email" {
		t.Fatalf("exact name not first: %v", got)
	}
	picks, _ := For(reg).Rank(context.Background(), "call `getHTTPResponse`", nil)
	if picks[0].Tool != "getHTTPResponse" || picks[0].Score != 1 || picks[0].Provenance.Source != SourceExactName {
		t.Errorf("exact pick %+v", picks[0])
	}
	// A plain-word name counts only when marked as code.
	if picks, _ := For(reg).Rank(context.Background(), "add weather to my email", nil); len(picks) > 0 && picks[0].Provenance.Source == SourceExactName {
		t.Errorf("plain word treated as a name: %+v", picks[0])
	}
	if got := rankNames(t, reg, "please run add(2, 3)", nil); len(got) == 0 || got[0] != "add" {
		t.Errorf("add(…) not found first: %v", got)
	}
	if got := rankNames(t, reg, "use mail__send_email", &Options{NoExactName: true, MinScore: -1}); slices.Contains(got, "x") {
		t.Error(got)
	}
	// An exact name still obeys the filters.
	if got := rankNames(t, reg, "files__delete_file", nil); slices.Contains(got, "files__delete_file") {
		t.Errorf("unsafe exact name offered: %v", got)
	}
}

func TestAlwaysActiveAndRelated(t *testing.T) {
	reg := testRegistry(t)
	picks, err := For(reg).Rank(context.Background(), "weather forecast", &Options{
		MaxCandidates: 1,
		AlwaysActive:  []string{"add", "files__delete_file"},
		Related:       map[string][]string{"weather.get_forecast": {"mail__send_email"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"weather.get_forecast", "mail__send_email", "add"}
	if !slices.Equal(pickNames(picks), want) {
		t.Fatalf("got %v, want %v (unsafe always-active tool must stay out)", pickNames(picks), want)
	}
	if picks[1].Provenance.Source != SourceRelated || picks[1].Provenance.RelatedTo != "weather.get_forecast" || picks[1].Reason != "related to weather.get_forecast" {
		t.Errorf("related pick %+v", picks[1])
	}
	if picks[2].Provenance.Source != SourceAlwaysActive {
		t.Errorf("always-active pick %+v", picks[2])
	}
}

func TestDebugProvenance(t *testing.T) {
	reg := testRegistry(t)
	picks, _ := For(reg).Rank(context.Background(), "current weather", &Options{Debug: true})
	p := picks[0]
	if len(p.Provenance.Matched) == 0 || p.Provenance.Components["name"] <= 0 || p.Provenance.Components["term:weather"] <= 0 {
		t.Errorf("debug provenance %+v", p.Provenance)
	}
}

func TestJSONInput(t *testing.T) {
	reg := testRegistry(t)
	in := map[string]any{"task": "send email", "to": []any{"bob"}}
	if got := rankNames(t, reg, in, nil); len(got) == 0 || got[0] != "mail__send_email" {
		t.Errorf("map input: %v", got)
	}
	if got := rankNames(t, reg, json.RawMessage(`{"city":"Paris","want":"forecast"}`), nil); len(got) == 0 || got[0] != "weather.get_forecast" {
		t.Errorf("raw JSON input: %v", got)
	}
	if inputText(json.RawMessage(`{"b":1,"a":"x"}`)) != "a x b 1" {
		t.Errorf("InputText = %q", inputText(json.RawMessage(`{"b":1,"a":"x"}`)))
	}
}

type scorerFunc struct {
	name string
	fn   func(ctx context.Context, c *Catalog, q *Query, k int, keep func(int) bool) ([]Hit, error)
}

func (s scorerFunc) Name() string { return s.name }
func (s scorerFunc) Score(ctx context.Context, c *Catalog, q *Query, k int, keep func(int) bool) ([]Hit, error) {
	return s.fn(ctx, c, q, k, keep)
}

func TestCustomScorerAndTimeout(t *testing.T) {
	reg := testRegistry(t)
	last := scorerFunc{name: "last", fn: func(_ context.Context, c *Catalog, _ *Query, k int, keep func(int) bool) ([]Hit, error) {
		var out []Hit
		for p := c.Len() - 1; p >= 0 && len(out) < k; p-- {
			if keep(p) {
				out = append(out, Hit{Pos: p, Score: 0.5})
			}
		}
		return out, nil
	}}
	if got := rankNames(t, reg, "anything", &Options{Scorer: last, MaxCandidates: 2}); !slices.Equal(got, []string{"getHTTPResponse", "add"}) {
		t.Errorf("custom scorer: %v", got)
	}
	slow := scorerFunc{name: "slow", fn: func(ctx context.Context, _ *Catalog, _ *Query, _ int, _ func(int) bool) ([]Hit, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	picks, err := For(reg).Rank(context.Background(), "weather", &Options{Scorer: slow, Timeout: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The first three eligible tools in registration order (delete_file is unsafe).
	if want := []string{"weather.get_forecast", "weather.get_current", "mail__send_email"}; !slices.Equal(pickNames(picks), want) {
		t.Errorf("timeout picks %v, want %v", pickNames(picks), want)
	}
	for _, p := range picks {
		if !p.Provenance.TimedOut || p.Provenance.Source != SourceTimeout {
			t.Errorf("timeout provenance %+v", p.Provenance)
		}
	}
	// The default scorers too: bm25 looks at the clock only every few query
	// terms, so a two-word query under an expired timeout used to be scored.
	for _, sc := range []Scorer{nil, Keyword{}} {
		picks, err := For(reg).Rank(context.Background(), "weather forecast", &Options{Scorer: sc, Timeout: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		if len(picks) == 0 || !picks[0].Provenance.TimedOut {
			t.Errorf("%v under a 1ns timeout: %+v", sc, picks)
		}
	}
	// A cancelled caller context is an error, not a timeout fallback.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := For(reg).Rank(ctx, "weather", &Options{Scorer: slow, Timeout: time.Second}); err == nil {
		t.Error("cancelled context: no error")
	}
}

func TestKeywordScorer(t *testing.T) {
	reg := testRegistry(t)
	picks, err := For(reg).Rank(context.Background(), "send email now", &Options{Scorer: Keyword{}})
	if err != nil {
		t.Fatal(err)
	}
	if picks[0].Tool != "mail__send_email" || picks[0].Provenance.Scorer != "keyword" {
		t.Fatalf("%+v", picks[0])
	}
	// "now" is not in the tool: 2 of 3 terms.
	if got := picks[0].Score; got < 0.66 || got > 0.67 {
		t.Errorf("keyword score %v, want 2/3", got)
	}
}

// TestIncrementalUpdate checks that an index updated through registry
// changes ranks like one built from scratch.
func TestIncrementalUpdate(t *testing.T) {
	reg := testRegistry(t)
	r := newRanker(reg)
	ctx := context.Background()
	o := &Options{MaxCandidates: 5, MinScore: -1, Debug: true}
	if _, err := r.Rank(ctx, "weather", o); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(tool("translate_text", "Translate text into another language.")); err != nil {
		t.Fatal(err)
	}
	if err := reg.Replace(tool("weather.get_current", "Translate weather reports between languages.")); err != nil {
		t.Fatal(err)
	}
	reg.Unregister("add")
	for _, q := range []string{"translate text", "weather", "language", "add numbers"} {
		a, err := r.Rank(ctx, q, o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := rankEntries(ctx, reg.Entries(), q, o)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(pickNames(a)) != fmt.Sprint(pickNames(b)) {
			t.Errorf("%q: incremental %v, fresh %v", q, pickNames(a), pickNames(b))
		}
		for i := range a {
			if d := a[i].Score - b[i].Score; d > 1e-6 || d < -1e-6 {
				t.Errorf("%q: %s score %v vs %v", q, a[i].Tool, a[i].Score, b[i].Score)
			}
		}
	}
	if got := rankNames(t, reg, "translate", nil); len(got) < 2 {
		t.Errorf("new and replaced tools not found: %v", got)
	}
}

func TestConcurrentQueries(t *testing.T) {
	reg := testRegistry(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				if i == 0 && j%10 == 0 {
					reg.Replace(tool(fmt.Sprintf("extra_%d", j), "weather extra"))
				}
				if _, err := For(reg).Rank(context.Background(), "weather forecast email", nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

type reverseReranker struct{}

func (reverseReranker) Rerank(_ context.Context, _ string, picks []Pick) ([]Pick, error) {
	slices.Reverse(picks)
	return picks, nil
}

func TestReranker(t *testing.T) {
	reg := testRegistry(t)
	base := rankNames(t, reg, "weather", &Options{MaxCandidates: 2})
	got := rankNames(t, reg, "weather", &Options{MaxCandidates: 2, Reranker: reverseReranker{}, RerankTop: 2})
	if len(base) != 2 || !slices.Equal(got, []string{base[1], base[0]}) {
		t.Errorf("reranked %v, base %v", got, base)
	}
	llm := &LLMReranker{Chat: func(_ context.Context, system, user string) (string, error) {
		return "```json\n{\"order\":[\"weather.get_current\",\"invented\"]}\n```", nil
	}}
	picks, err := For(reg).Rank(context.Background(), "weather forecast", &Options{MaxCandidates: 2, Reranker: llm})
	if err != nil {
		t.Fatal(err)
	}
	if picks[0].Tool != "weather.get_current" || picks[0].Provenance.Source != SourceReranked {
		t.Errorf("LLM reranker: %+v", picks[0])
	}
}

func TestPrefilter(t *testing.T) {
	reg := testRegistry(t)
	ctx := context.Background()
	eligible := reg.Entries()
	for _, pf := range []prefilterFunc{
		For(reg).Prefilter(&Options{MaxCandidates: 2, AlwaysActive: []string{"add"}}),
		prefilter(&Options{MaxCandidates: 2, AlwaysActive: []string{"add"}}),
	} {
		got, err := pf(ctx, "current weather forecast", eligible)
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, len(got))
		for i, e := range got {
			names[i] = e.Name()
		}
		// Catalog order, not score order; the always-active tool comes along.
		if want := []string{"weather.get_forecast", "weather.get_current", "add"}; !slices.Equal(names, want) {
			t.Errorf("prefilter %v, want %v", names, want)
		}
		// Only eligible tools come back.
		got, _ = pf(ctx, "current weather forecast", eligible[1:3])
		if len(got) != 1 || got[0].Name() != "weather.get_current" {
			t.Errorf("subset: %v", got)
		}
	}
}

func TestStepTools(t *testing.T) {
	reg := testRegistry(t)
	got, err := For(reg).StepTools(context.Background(), []Turn{
		{Role: "user", Content: "what is the weather forecast?"},
		{Role: "assistant", Content: "calling weather"},
		{Role: "tool", Tool: "weather.get_forecast", Content: "sunny"},
		{Role: "user", Content: "now send an email about it"},
	}, &StepOptions{Options: Options{MaxCandidates: 2}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Name())
	}
	if !slices.Contains(names, "mail__send_email") || !slices.Contains(names, "weather.get_forecast") {
		t.Errorf("step tools %v", names)
	}
}

func TestTokens(t *testing.T) {
	reg := testRegistry(t)
	tc, err := NewTokenCounter(EncodingCl100k)
	if err != nil {
		t.Fatal(err)
	}
	if n := tc.Count("hello world"); n != 2 {
		t.Errorf("Count = %d", n)
	}
	all, err := tc.CountTools(reg.Entries(), registry.FormatOpenAI)
	if err != nil {
		t.Fatal(err)
	}
	two, _ := tc.CountTools(reg.Entries()[:2], registry.FormatOpenAI)
	meta, _ := MetaToolEntries()
	metaN, _ := tc.CountTools(meta, registry.FormatOpenAI)
	if !(all > two && two > 0 && metaN > 0) {
		t.Errorf("catalog %d tokens, two tools %d, meta-tools %d", all, two, metaN)
	}
	picks, _ := For(reg).Rank(context.Background(), "weather", &Options{MaxCandidates: 3})
	one, _ := tc.CountTools([]*registry.Entry{picks[0].Entry}, registry.FormatOpenAI)
	kept, used, err := tc.FitBudget(picks, registry.FormatOpenAI, one+1)
	if err != nil || len(kept) != 1 || used != one {
		t.Errorf("FitBudget kept %d using %d (one tool = %d), err %v", len(kept), used, one, err)
	}
	if _, err := NewTokenCounter("p50k_base"); err == nil {
		t.Error("unknown encoding accepted")
	}
	for _, m := range metaTools() {
		if err := registry.New(nil).Register(m); err != nil {
			t.Errorf("meta-tool %s: %v", m.Name, err)
		}
	}
}

func TestScoreRanking(t *testing.T) {
	m := scoreRanking([]string{"a", "x", "b"}, []string{"b", "a"})
	if m.R1 != 0.5 || m.R5 != 1 || m.MRR != 1 {
		t.Errorf("%+v", m)
	}
}

// Each set of bm25 parameters ranks with its own view of a shared catalog:
// a scorer with other weights must not reuse the default scorer's view.
func TestBM25ParametersKeepTheirOwnView(t *testing.T) {
	reg := testRegistry(t)
	custom := &BM25{Weights: [numFields]float64{0.1, 5, 0.6, 0.5}}
	o := &Options{MaxCandidates: 1, MinScore: -1, Debug: true}
	def, err := For(reg).Rank(context.Background(), "weather forecast", o)
	if err != nil {
		t.Fatal(err)
	}
	o.Scorer = custom
	got, err := For(reg).Rank(context.Background(), "weather forecast", o)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := rankEntries(context.Background(), reg.Entries(), "weather forecast", o)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Score != alone[0].Score {
		t.Fatalf("custom parameters on the shared ranker score %v, on their own %v (the default scores %v)",
			got[0].Score, alone[0].Score, def[0].Score)
	}
	if got[0].Score == def[0].Score {
		t.Fatalf("custom parameters score like the default: %v", got[0].Score)
	}
}

// A reason names the tool's own words, not the stems the index matches on.
func TestReasonShowsWordsAsWritten(t *testing.T) {
	reg := registry.New(nil)
	if err := reg.Register(registry.Tool{Name: "restart_service", Description: "Restart a running service", Safe: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"services":{"type":"string"}}}`)}); err != nil {
		t.Fatal(err)
	}
	picks, err := For(reg).Rank(context.Background(), "restarting the services", nil)
	if err != nil || len(picks) != 1 {
		t.Fatalf("picks %v, err %v", picks, err)
	}
	if r := picks[0].Reason; !strings.Contains(r, "matched restart, service") {
		t.Fatalf("reason %q: want the words as the tool writes them", r)
	}
}

// NoReasons drops only the explanations: the same tools, order and scores
// come back, and Debug still explains.
func TestNoReasonsKeepsPicks(t *testing.T) {
	reg := testRegistry(t)
	for _, q := range []string{"current weather", "send an email", "weather.get_forecast for Paris", "nothing matches zzz"} {
		full, err := For(reg).Rank(context.Background(), q, &Options{MaxCandidates: 5})
		if err != nil {
			t.Fatal(err)
		}
		bare, err := For(reg).Rank(context.Background(), q, &Options{MaxCandidates: 5, NoReasons: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(full) != len(bare) {
			t.Fatalf("%q: %d picks with reasons, %d without", q, len(full), len(bare))
		}
		for i := range full {
			if full[i].Tool != bare[i].Tool || full[i].Score != bare[i].Score || full[i].Provenance.Source != bare[i].Provenance.Source {
				t.Errorf("%q pick %d: %+v vs %+v", q, i, full[i], bare[i])
			}
			if full[i].Provenance.Source == SourceScore && (full[i].Reason == "" || bare[i].Reason != "") {
				t.Errorf("%q pick %d: reasons %q / %q", q, i, full[i].Reason, bare[i].Reason)
			}
		}
	}
	dbg, _ := For(reg).Rank(context.Background(), "current weather", &Options{NoReasons: true, Debug: true})
	if len(dbg) == 0 || dbg[0].Reason == "" || len(dbg[0].Provenance.Matched) == 0 {
		t.Errorf("Debug must win over NoReasons: %+v", dbg)
	}
}

// Names that hold spaces match as a run of whole words, the longest first at
// each word, and only from the word that starts them (a name inside a longer
// one still counts where its own first word stands).
func TestExactNamesOfSeveralWords(t *testing.T) {
	reg := registry.New(nil)
	for _, n := range []string{"Web Search", "Web Search Pro", "Get Weather", "Search"} {
		if err := reg.Register(tool(n, "a tool")); err != nil {
			t.Fatal(err)
		}
	}
	c := newStatic(reg.Entries()).Catalog()
	names := func(text string) []string {
		var out []string
		for _, pos := range exactNames(c, text) {
			out = append(out, c.entries[pos].Name())
		}
		return out
	}
	for text, want := range map[string][]string{
		"use Web Search Pro now":           {"Web Search Pro", "Search"},
		"use Web Search, then Get Weather": {"Web Search", "Search", "Get Weather"},
		"a Web page; Search it":            {"Search"},
		"Pro Search Web":                   {"Search"},
		"Get  Weather twice: Get Weather.": {"Get Weather"},
	} {
		if got := names(text); !slices.Equal(got, want) {
			t.Errorf("%q: got %v, want %v", text, got, want)
		}
	}
}

// Prepare builds the lexical index of every scorer that keeps one, also
// under feedback, so the first query does not pay for it.
func TestPrepareBuildsTheIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *Options
		key  string
	}{
		{"bm25", &Options{}, "bm25"},
		{"bm25+feedback", &Options{Feedback: NewFeedback(nil)}, "bm25"},
		{"keyword", &Options{Scorer: Keyword{}}, "keyword"},
		{"keyword+feedback", &Options{Scorer: Keyword{}, Feedback: NewFeedback(nil)}, "keyword"},
		{"hybrid", &Options{Scorer: &Hybrid{Embedding: &Embedding{}}}, "bm25"},
	} {
		r := newRanker(testRegistry(t))
		if err := r.Prepare(tc.opts); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Catalog().built(tc.key) == nil {
			t.Errorf("%s: no %s index after Prepare", tc.name, tc.key)
		}
	}
}

// The keyword scorer's reasons show the words as the tool writes them, as
// bm25's do, without reading the tool again.
func TestKeywordWordsAreSurfaceWords(t *testing.T) {
	reg := testRegistry(t)
	c := newRanker(reg).Catalog()
	hits, err := Keyword{}.Score(context.Background(), c, newQuery("getting the current weather conditions and forecasts"), 5, nil)
	if err != nil || len(hits) == 0 {
		t.Fatalf("hits %v, err %v", hits, err)
	}
	for _, h := range hits {
		if want := surfaceWords(c.entries[h.Pos], h.Matched); !slices.Equal(h.Words, want) {
			t.Errorf("%s: words %q, surfaceWords %q", c.entries[h.Pos].Name(), h.Words, want)
		}
	}
}
