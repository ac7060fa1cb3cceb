package selector

// The offer budget, the search round and the empty-result kinds, through the
// real go-openai client against a loopback server speaking the OpenAI wire
// format, with rank's Offering as the Ranker.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// umbrellaTask shares no word with get_weather, nor a word WordNet relates to
// one of its words: only the search round reaches it.
const umbrellaTask = "Do I pack a parapluie for Lyon?"

// assistantRegistry is examples/assistant.json: 24 tools, none sharing a
// word with the umbrella task.
func assistantRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	tools, _, err := registry.LoadCatalogFile("../examples/assistant.json")
	require.NoError(t, err)
	reg := registry.New(nil)
	require.NoError(t, reg.RegisterAll(tools))
	require.Equal(t, 24, reg.Len())
	return reg
}

// offeredIn returns the tool names a request body offers: the JSON mode's
// system prompt list, or native mode's tools.
func offeredIn(t testing.TB, body map[string]any) []string {
	t.Helper()
	var names []string
	if tools, ok := body["tools"].([]any); ok {
		for _, tl := range tools {
			names = append(names, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
		}
		return names
	}
	system := body["messages"].([]any)[0].(map[string]any)["content"].(string)
	i := strings.LastIndex(system, "\nTools:\n")
	require.GreaterOrEqual(t, i, 0)
	var tools []struct{ Name string }
	require.NoError(t, json.Unmarshal([]byte(system[i+len("\nTools:\n"):]), &tools))
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

// weatherModel is a model that calls get_weather when it is offered and
// otherwise searches for it (always, when searchAlways is set).
func weatherModel(t testing.TB, native, searchAlways bool) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, raw []byte) {
		var body map[string]any
		require.NoError(t, json.Unmarshal(raw, &body))
		offered := false
		for _, n := range offeredIn(t, body) {
			offered = offered || n == "get_weather"
		}
		name, args := "get_weather", `{"city":"Lyon","days":2}`
		if !offered || searchAlways {
			name, args = SearchToolName, `{"query":"weather forecast rain"}`
		}
		if !native {
			reply := `{"calls":[{"tool":"get_weather","args":{"city":"Lyon","days":2}}]}`
			if name == SearchToolName {
				reply = `{"calls":[],"search":"weather forecast rain"}`
			}
			completion(w, reply)
			return
		}
		writeJSON(w, 200, map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{
				"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "1", "type": "function",
					"function": map[string]any{"name": name, "arguments": args}}}}}},
			"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 10}})
	}
}

func umbrellaRequest(reg *registry.Registry) Request {
	return Request{Task: Task{Description: umbrellaTask}, Registry: reg}
}

func TestSmallCatalogIsOfferedWhole(t *testing.T) {
	reg := assistantRegistry(t)
	for _, mode := range []Mode{ModeJSON, ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			ws := newWire(t, weatherModel(t, mode == ModeNative, false))
			sel := wireSelector(t, ws, func(c *Config) { c.Mode = mode }, withRanker(&rank.Offering{}))
			res, err := sel.Select(context.Background(), umbrellaRequest(reg))
			require.NoError(t, err)
			require.Len(t, res.Calls, 1)
			assert.Equal(t, "get_weather", res.Calls[0].Tool)
			reqs := ws.requests()
			require.Len(t, reqs, 1, "one request")
			assert.Equal(t, reg.Names(), offeredIn(t, reqs[0]), "all 24 tools fit the default budget: offered whole, no search function")
			assert.Equal(t, reg.Names(), res.Offered)
			assert.Empty(t, res.Attempts[0].Searches)
			assert.NotContains(t, reqs[0]["messages"].([]any)[0].(map[string]any)["content"], `"search"`)
		})
	}
}

func TestOverBudgetSearchRoundFindsTheTool(t *testing.T) {
	reg := assistantRegistry(t)
	for _, mode := range []Mode{ModeJSON, ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			ws := newWire(t, weatherModel(t, mode == ModeNative, false))
			sel := wireSelector(t, ws, func(c *Config) { c.Mode = mode; c.OfferTokens = 300; c.TopK = 3 },
				withRanker(&rank.Offering{}))
			res, err := sel.Select(context.Background(), umbrellaRequest(reg))
			require.NoError(t, err)
			require.Len(t, res.Calls, 1)
			assert.Equal(t, "get_weather", res.Calls[0].Tool)
			assert.JSONEq(t, `{"city":"Lyon","days":2}`, string(res.Calls[0].Args))

			reqs := ws.requests()
			require.Len(t, reqs, 2, "the search round asks the same model again")
			first, second := offeredIn(t, reqs[0]), offeredIn(t, reqs[1])
			assert.NotContains(t, first, "get_weather")
			assert.Contains(t, second, "get_weather")
			assert.Equal(t, reqs[0]["model"], reqs[1]["model"])
			if mode == ModeNative {
				assert.Equal(t, SearchToolName, first[len(first)-1], "the search function is offered while a round is left")
				assert.NotContains(t, second, SearchToolName, "one round (the default): none left")
			} else {
				assert.Contains(t, reqs[0]["messages"].([]any)[0].(map[string]any)["content"], `"search"`)
				assert.NotContains(t, reqs[1]["messages"].([]any)[0].(map[string]any)["content"], `{"calls":[],"search"`)
			}
			assert.Contains(t, reqs[1]["messages"].([]any)[1].(map[string]any)["content"], `You searched the catalog for "weather forecast rain"`)

			require.Len(t, res.Attempts, 1)
			a := res.Attempts[0]
			assert.True(t, a.OK)
			require.Len(t, a.Searches, 1)
			assert.Equal(t, "weather forecast rain", a.Searches[0].Query)
			assert.Equal(t, a.Searches[0].Offered, res.Offered, "offered: the final request's tools")
			assert.Contains(t, res.Offered, "get_weather")
			perRequest := 120 // completion()
			if mode == ModeNative {
				perRequest = 100
			}
			assert.Equal(t, 2*perRequest, a.PromptTokens, "tokens cover both rounds")
			b, err := json.Marshal(a)
			require.NoError(t, err)
			assert.Contains(t, string(b), `"searches":[{"query":"weather forecast rain","offered":[`)
		})
	}
}

func TestLexicalHitCostsOneRequest(t *testing.T) {
	reg := assistantRegistry(t)
	ws := newWire(t, weatherModel(t, false, false))
	sel := wireSelector(t, ws, func(c *Config) { c.OfferTokens = 300; c.TopK = 3 }, withRanker(&rank.Offering{}))
	res, err := sel.Select(context.Background(), Request{Task: Task{Description: "What is the weather forecast in Lyon?"}, Registry: reg})
	require.NoError(t, err)
	require.Len(t, res.Calls, 1)
	assert.Len(t, ws.requests(), 1)
	assert.Empty(t, res.Attempts[0].Searches)
	assert.Less(t, len(res.Offered), 24, "a ranked subset")
	assert.Contains(t, res.Offered, "get_weather")
}

func TestSearchBeyondTheLastRoundIsNoCalls(t *testing.T) {
	reg := assistantRegistry(t)
	for _, searches := range []int{1, 2} {
		ws := newWire(t, weatherModel(t, false, true))
		sel := wireSelector(t, ws, func(c *Config) { c.OfferTokens = 300; c.TopK = 3; c.MaxSearches = searches },
			withRanker(&rank.Offering{}))
		res, err := sel.Select(context.Background(), umbrellaRequest(reg))
		require.NoError(t, err, "the model's decision, not a failure")
		assert.Empty(t, res.Calls)
		assert.Len(t, ws.requests(), searches+1)
		require.Len(t, res.Attempts, 1, "no fallback")
		a := res.Attempts[0]
		assert.True(t, a.OK)
		assert.Len(t, a.Searches, searches)
		assert.Equal(t, "weather forecast rain", a.UnansweredSearch)
	}
}

func TestSearchWhenEverythingIsOfferedIsNoCalls(t *testing.T) {
	reg := assistantRegistry(t)
	ws := newWire(t, weatherModel(t, false, true))
	sel := wireSelector(t, ws, nil, withRanker(&rank.Offering{}))
	res, err := sel.Select(context.Background(), umbrellaRequest(reg))
	require.NoError(t, err)
	assert.Empty(t, res.Calls)
	assert.Len(t, ws.requests(), 1)
	assert.Equal(t, "weather forecast rain", res.Attempts[0].UnansweredSearch)
}

func TestNothingRankedWithoutSearchIsAKind(t *testing.T) {
	reg := assistantRegistry(t)
	ws := newWire(t, weatherModel(t, false, false))
	sel := wireSelector(t, ws, func(c *Config) { c.OfferTokens = 300; c.NoSearch = true }, withRanker(&rank.Offering{}))
	res, err := sel.Select(context.Background(), umbrellaRequest(reg))
	require.ErrorIs(t, err, ErrNoRankedTools)
	assert.Equal(t, string(EmptyNoRankedTools), ErrorKind(err))
	assert.Empty(t, res.Calls)
	assert.Empty(t, ws.requests(), "no request")
	// With the search round on (the default), the model is asked, with no
	// tool but the search.
	ws = newWire(t, weatherModel(t, false, false))
	sel = wireSelector(t, ws, func(c *Config) { c.OfferTokens = 300 }, withRanker(&rank.Offering{}))
	res, err = sel.Select(context.Background(), umbrellaRequest(reg))
	require.NoError(t, err)
	assert.Len(t, ws.requests(), 2)
	assert.Empty(t, offeredIn(t, ws.requests()[0]))
	assert.Equal(t, "get_weather", res.Calls[0].Tool)
}

// manualClock advances only when told.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manualClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestSearchRoundsShareTheAttemptTimeout(t *testing.T) {
	reg := assistantRegistry(t)
	clock := &manualClock{t: time.Unix(1000, 0)}
	sel := newSel(t, nil, cfgWith(func(c *Config) { c.OfferTokens = 300; c.TopK = 3; c.Timeout = 30 * time.Second; c.MaxSearches = 3 }),
		withRanker(&rank.Offering{}), withClock(clock.now))
	ss, err := sel.Begin(context.Background(), umbrellaRequest(reg))
	require.NoError(t, err)
	act := ss.Next()
	assert.Equal(t, 30*time.Second, act.Chat.Timeout)
	clock.add(12 * time.Second)
	act = ss.Feed(context.Background(), ChatResponse{Content: `{"calls":[],"search":"weather forecast"}`}, nil)
	require.Equal(t, ActionChat, act.Kind)
	assert.Equal(t, "primary", act.Chat.Model)
	assert.Equal(t, 18*time.Second, act.Chat.Timeout, "the round gets what is left of the attempt")
	clock.add(18 * time.Second)
	act = ss.Feed(context.Background(), ChatResponse{Content: `{"calls":[],"search":"rain"}`}, nil)
	require.Equal(t, ActionChat, act.Kind)
	assert.Equal(t, "fallback", act.Chat.Model, "out of time: the attempt fails, the fallback starts afresh")
	assert.Equal(t, 30*time.Second, act.Chat.Timeout)
	assert.NotContains(t, offeredIn(t, mustMap(t, act.JSON())), "get_weather", "the fallback starts from the first offer")
	require.Len(t, ss.attempts, 1)
	assert.Equal(t, KindTimeout, ss.attempts[0].Kind)
	assert.Len(t, ss.attempts[0].Searches, 2)
}

func mustMap(t testing.TB, b []byte) map[string]any {
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	if p, ok := m["params"].(map[string]any); ok && p["tools"] != nil {
		m["tools"] = p["tools"]
	}
	return m
}

func TestDeepRejectedArgumentsAreClipped(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	ws := newWire(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		completion(w, `{"calls":[{"tool":"get_weather","args":{"city":"Lyon","x":`+deep+`}}]}`)
	})
	sel := wireSelector(t, ws, func(c *Config) { c.FallbackModel = "" })
	res, err := sel.Select(context.Background(), testRequest(t))
	require.ErrorIs(t, err, ErrFailClosed)
	out, jerr := json.Marshal(Action{Kind: ActionDone, Result: res, Err: err})
	require.NoError(t, jerr)
	assert.Less(t, maxDepth(out), 80, "readable by parsers with a small nesting limit")
	assert.Contains(t, string(out), "nests deeper than 64 levels")
	assert.Less(t, len(out), 8000)
}

// maxDepth returns how deeply a JSON document nests.
func maxDepth(b []byte) int {
	depth, most, inStr := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '{' || c == '['):
			depth++
			most = max(most, depth)
		case !inStr && (c == '}' || c == ']'):
			depth--
		}
	}
	return most
}

// ctxRanker is the offering ranker, except that a search ranking reports the
// context's error once the context is done.
type ctxRanker struct{ Ranker }

func (r ctxRanker) Rank(ctx context.Context, reg *registry.Registry, query string, eligible []*registry.Entry, k int) ([]*registry.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r.Ranker.Rank(ctx, reg, query, eligible, k)
}

// Feed's context bounds the search ranking it runs: cancelled, the round
// fails as a search failure naming the cancellation, and the session goes on
// (the fallback model starts afresh); Begin's context is not the one used.
func TestFeedContextBoundsTheSearchRound(t *testing.T) {
	reg := assistantRegistry(t)
	sel := newSel(t, nil, cfgWith(func(c *Config) { c.OfferTokens = 300; c.TopK = 3 }),
		withRanker(ctxRanker{&rank.Offering{}}))
	ss, err := sel.Begin(context.Background(), umbrellaRequest(reg))
	require.NoError(t, err)
	require.Equal(t, ActionChat, ss.Next().Kind)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	act := ss.Feed(ctx, ChatResponse{Content: `{"calls":[],"search":"weather forecast"}`}, nil)
	require.Equal(t, ActionChat, act.Kind)
	assert.Equal(t, "fallback", act.Chat.Model)
	require.Len(t, ss.attempts, 1)
	assert.Equal(t, KindSearch, ss.attempts[0].Kind)
	assert.Contains(t, ss.attempts[0].Message, context.Canceled.Error())

	// A live context: the same search round runs.
	act = ss.Feed(context.Background(), ChatResponse{Content: `{"calls":[],"search":"weather forecast"}`}, nil)
	require.Equal(t, ActionChat, act.Kind)
	assert.Equal(t, "fallback", act.Chat.Model)
	assert.Contains(t, offeredIn(t, mustMap(t, act.JSON())), "get_weather")
}
