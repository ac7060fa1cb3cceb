package rank

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

func TestTermsSkipBlobs(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	raw := make([]byte, 300)
	r.Read(raw)
	b64 := base64.StdEncoding.EncodeToString(raw)
	for in, want := range map[string][]string{
		"What does this base64 image mean? " + b64:                                   {"base", "64", "imag", "mean"},
		"data:image/png;base64," + b64 + " describe it":                              {"data", "imag", "png", "base", "64", "describ"},
		"digest e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 ok": {"digest", "ok"},
		// Long identifiers are words, not blobs.
		"getDirectoryToWatchFromFailedLookupLocationDirectory": {"get", "directori", "watch", "fail", "lookup", "locat", "directori"},
		"dynamicCredentialsScheduledExecutorService2024":       {"dynam", "credenti", "schedul", "executor", "servic", "2024"},
		"short aB3xY9 mixed": {"short", "b", "3", "x", "y", "9", "mix"},
	} {
		if got := indexTerms(in); !slices.Equal(got, want) {
			t.Errorf("indexTerms(%.60q) = %q, want %q", in, got, want)
		}
	}
}

// TestTokenizerBoundaries pins the word splitting rules on mixed scripts.
func TestTokenizerBoundaries(t *testing.T) {
	for in, want := range map[string][]string{
		"XMLHttpRequest":   {"xml", "http", "request"},
		"ÉTATSUnis":        {"états", "unis"},
		"über9Ü":           {"über", "9", "ü"},
		"aあbいc":            {"a", "あ", "b", "い", "c"},
		"なまえName2x":        {"なま", "まえ", "name", "2", "x"},
		"sha256_v2beta":    {"sha", "256", "v", "2", "beta"},
		"foo-bar/baz.qux":  {"foo", "bar", "baz", "qux"},
		"HTTPServer ABCDe": {"http", "server", "abc", "de"},
	} {
		var got []string
		words(in, func(w []byte) { got = append(got, string(w)) })
		if !slices.Equal(got, want) {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTermsChineseGlosses: a run of Chinese characters gives its bigrams and
// then the English gloss words of its dictionary words, so English and
// Chinese text meet on the same terms.
func TestTermsChineseGlosses(t *testing.T) {
	got := indexTerms("获取微博热搜榜")
	for _, want := range []string{"获取", "微博", "热搜", "搜榜", "get", "weibo", "microblog", "popular", "search"} {
		if !slices.Contains(got, want) {
			t.Errorf("indexTerms(获取微博热搜榜) = %q, want it to hold %q", got, want)
		}
	}
	// Traditional characters are glossed too; kana and hangul are not.
	if got := indexTerms("新聞"); !slices.Contains(got, "news") {
		t.Errorf("indexTerms(新聞) = %q, want news among them", got)
	}
	if got := indexTerms("テスト 뉴스"); !slices.Equal(got, []string{"テス", "スト", "뉴스"}) {
		t.Errorf("indexTerms(テスト 뉴스) = %q, want only the bigrams", got)
	}
}

// TestRankAcrossLanguages: an English query finds a tool described only in
// Chinese, and a Chinese query finds a tool described only in English.
func TestRankAcrossLanguages(t *testing.T) {
	reg := registry.New(nil)
	for _, tl := range []registry.Tool{
		registry.NewTool("hub__get_weibo", "获取微博热搜榜，包含时事热点、娱乐新闻及网络热议话题", []byte(`{"type":"object"}`)),
		registry.NewTool("hub__get_recipes", "根据菜谱名称查询菜谱的完整详情，包括食材、步骤", []byte(`{"type":"object"}`)),
		registry.NewTool("geo__weather", "Get the weather forecast for a city.", []byte(`{"type":"object"}`)),
		registry.NewTool("geo__route", "Plan a driving route between two places.", []byte(`{"type":"object"}`)),
	} {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	r := newRanker(reg)
	for query, want := range map[string]string{
		"what are the trending topics and entertainment news": "hub__get_weibo",
		"which ingredients and steps does this recipe need":   "hub__get_recipes",
		"明天北京的天气预报":                                           "geo__weather",
	} {
		picks, err := r.Rank(context.Background(), query, &Options{MaxCandidates: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(picks) != 1 || picks[0].Tool != want {
			t.Errorf("Rank(%q) = %v, want %s first", query, picks, want)
		}
	}
}

// TestBuildAllocations guards the index build against per-token
// allocations: it allocates per distinct word and per large array only.
func TestBuildAllocations(t *testing.T) {
	var tools []registry.Tool
	for i := range 2000 {
		tools = append(tools, registry.NewTool(fmt.Sprintf("server%d__get_item_%d", i%50, i),
			fmt.Sprintf("Get the item number %d from the store, with its price and stock level.", i%97),
			[]byte(`{"type":"object","properties":{"item_id":{"type":"string","description":"The \"id\" of the item"},"fields":{"type":"array","items":{"type":"string","enum":["price","stock"]}}}}`)))
	}
	reg := registry.New(nil)
	if err := reg.RegisterAll(tools); err != nil {
		t.Fatal(err)
	}
	entries := reg.Entries()
	allocs := testing.AllocsPerRun(3, func() { buildIndex(entries) })
	perTool := allocs / float64(len(entries))
	t.Logf("index build over %d tools: %.0f allocations (%.2f per tool)", len(entries), allocs, perTool)
	if perTool > 1.5 {
		t.Errorf("index build: %.0f allocations, %.2f per tool, want <= 1.5", allocs, perTool)
	}
	// The index still answers.
	picks, err := rankEntries(context.Background(), entries, "stock level of item 5", &Options{MaxCandidates: 1})
	if err != nil || len(picks) != 1 || !strings.Contains(picks[0].Tool, "get_item") {
		t.Fatalf("picks %v, err %v", picks, err)
	}
}

// Indexing reads a schema in place; it must never write to it. A string
// without escapes followed by one with escapes used to have the decoded
// second string written over the first, inside the registry's schema.
func TestSchemaTextLeavesSchemaIntact(t *testing.T) {
	raw := []byte(`{"properties":{"city":{"description":"plain words here","title":"a \"quoted\" x"},"u\u00e9":{"enum":["one","t\"wo"]}}}`)
	orig := string(raw)
	var got []string
	collect := func(s []byte) { got = append(got, string(s)) }
	var buf []byte
	schemaText(raw, &buf, collect, collect)
	if string(raw) != orig {
		t.Fatalf("schemaText modified its input:\n got %s\nwant %s", raw, orig)
	}
	want := []string{"city", "plain words here", `a "quoted" x`, "ué", "one", `t"wo`}
	if !slices.Equal(got, want) {
		t.Fatalf("schemaText read %q, want %q", got, want)
	}

	reg := registry.New(nil)
	if err := reg.Register(registry.NewTool("weather", "Weather for a city.", []byte(orig))); err != nil {
		t.Fatal(err)
	}
	if _, err := For(reg).Rank(context.Background(), "weather in Paris", nil); err != nil {
		t.Fatal(err)
	}
	e, _ := reg.Get("weather")
	if string(e.Def().Parameters) != orig {
		t.Fatalf("ranking modified the registered schema:\n got %s\nwant %s", e.Def().Parameters, orig)
	}
}

// FuzzTerms: the analyser never panics, gives the same terms twice (its
// caches hold), and never gives an empty term.
func FuzzTerms(f *testing.F) {
	for _, s := range []string{"getHTTPResponse2", "获取微博热搜榜 weather", "ÉTATSUnis über9Ü", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "\xff中\x00文"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a, b := indexTerms(text), indexTerms(text)
		if !slices.Equal(a, b) {
			t.Fatalf("indexTerms(%q) differs between calls: %q then %q", text, a, b)
		}
		for _, term := range a {
			if term == "" {
				t.Fatalf("indexTerms(%q) holds an empty term: %q", text, a)
			}
		}
	})
}
