package selecteval_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/internal/testing/faultserver"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selecteval"
	"github.com/toolselect/toolselect/selector"
)

func call(tool string, args map[string]any) faultserver.Call {
	b, _ := json.Marshal(args)
	return faultserver.Call{Tool: tool, Args: b}
}

// The scripted fakes, by what each is known to score on testdata/tasks.jsonl.
var (
	oracle = []faultserver.Reply{
		{When: "weather in Paris", Calls: []faultserver.Call{call("get_weather", map[string]any{"city": "Paris"})}},
		{When: "Email bob", Calls: []faultserver.Call{call("send_email", map[string]any{"to": "bob@example.com", "subject": "Report late"})}},
		{When: "Berlin forecast", Calls: []faultserver.Call{call("get_weather", map[string]any{"city": "Berlin"}), call("send_email", map[string]any{"to": "ann@example.com", "subject": "Forecast", "body": "sunny"})}},
	}
	// right on weather and email, wrong tools on the other two.
	half = []faultserver.Reply{
		oracle[0], oracle[1],
		{When: "Berlin forecast", Calls: []faultserver.Call{call("get_weather", map[string]any{"city": "Berlin"})}},
		{When: "joke about owls", Calls: []faultserver.Call{call("search_web", map[string]any{"query": "owl jokes"})}},
	}
	// the right tools every time, an argument off in each task with calls.
	wrongArgs = []faultserver.Reply{
		{When: "weather in Paris", Calls: []faultserver.Call{call("get_weather", map[string]any{"city": "London"})}},
		{When: "Email bob", Calls: []faultserver.Call{call("send_email", map[string]any{"to": "bob@example.com", "subject": "Hello"})}},
		{When: "Berlin forecast", Calls: []faultserver.Call{call("get_weather", map[string]any{"city": "Berlin", "units": "celsius"}), call("send_email", map[string]any{"to": "ann@example.com", "subject": "Forecast"})}},
	}
)

func fake(t *testing.T, script []faultserver.Reply) *faultserver.Server {
	t.Helper()
	s, err := faultserver.Start(faultserver.Options{Script: script, Stall: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

func load(t *testing.T) (*registry.Registry, []selecteval.Task) {
	t.Helper()
	reg := registry.New(nil)
	require.NoError(t, reg.LoadFile("testdata/catalog.json"))
	tasks, err := selecteval.LoadTasks("testdata/tasks.jsonl")
	require.NoError(t, err)
	return reg, tasks
}

func candidate(name, url, model string) selecteval.Candidate {
	return selecteval.Candidate{Name: name, Config: selector.Config{Settings: selector.Settings{BaseURL: url, Model: model, Timeout: time.Second}}}
}

func TestRunScoresKnownFakes(t *testing.T) {
	reg, tasks := load(t)
	o, h, w := fake(t, oracle), fake(t, half), fake(t, wrongArgs)
	slow := fake(t, nil)
	var progress []selecteval.Progress
	rep, err := selecteval.Run(context.Background(), reg, tasks, []selecteval.Candidate{
		candidate("oracle", o.URL, "m-oracle"),
		candidate("half", h.URL, "m-half"),
		candidate("wrong-args", w.URL, "m-args"),
		candidate("timeout", slow.URL, "fault:"+faultserver.DelayHeaders),
	}, selecteval.Options{Parallel: 4, Prices: map[string]selecteval.Price{"m-oracle": {In: 1, Out: 2}}, Progress: func(p selecteval.Progress) {
		progress = append(progress, p)
	}})
	require.NoError(t, err)
	assert.False(t, rep.Interrupted)
	assert.Equal(t, 4, rep.Total)
	require.Len(t, progress, 16)
	assert.Equal(t, selecteval.Progress{Candidate: progress[15].Candidate, Done: 16, Total: 16}, progress[15])

	by := map[string]selecteval.Score{}
	for _, s := range rep.Candidates {
		by[s.Name] = s
		assert.Equal(t, 4, s.Tasks, s.Name)
		require.Len(t, s.Results, 4, s.Name)
		for i, r := range s.Results {
			assert.Equal(t, tasks[i].ID, r.ID, "results come in task order")
		}
	}
	verdicts := func(s selecteval.Score) []string {
		var out []string
		for _, r := range s.Results {
			out = append(out, r.Verdict)
		}
		return out
	}

	or := by["oracle"]
	assert.Equal(t, "m-oracle", or.Model)
	assert.Equal(t, []float64{1, 1, 0}, []float64{or.ToolAccuracy, or.Exact, or.FailClosed})
	assert.Equal(t, []string{"exact", "exact", "exact", "exact"}, verdicts(or))
	// The stand-in reports 100 prompt and 20 completion tokens an answer.
	assert.Equal(t, 400, or.PromptTokens)
	assert.Equal(t, 80, or.CompletionTokens)
	require.NotNil(t, or.Cost)
	assert.InDelta(t, (400*1+80*2)/1e6, *or.Cost, 1e-12)
	for _, r := range or.Results {
		assert.Equal(t, 100, r.PromptTokens)
		assert.Equal(t, 20, r.CompletionTokens)
		assert.Equal(t, 1, r.Attempts)
		assert.Empty(t, r.Difference)
		assert.Greater(t, r.LatencyMS, 0.0)
	}
	assert.Greater(t, or.Latency.P50, 0.0)
	assert.GreaterOrEqual(t, or.Latency.P95, or.Latency.P50)

	hf := by["half"]
	assert.Equal(t, []float64{0.5, 0.5, 0}, []float64{hf.ToolAccuracy, hf.Exact, hf.FailClosed})
	assert.Equal(t, []string{"exact", "exact", "wrong_tools", "wrong_tools"}, verdicts(hf))
	assert.Equal(t, "missing call to send_email", hf.Results[2].Difference)
	assert.Equal(t, `unexpected call to search_web {"query":"owl jokes"}`, hf.Results[3].Difference)
	assert.Nil(t, hf.Cost, "no price for m-half")

	wa := by["wrong-args"]
	// The no-call task is answered right (no scripted reply: no calls).
	assert.Equal(t, []float64{1, 0.25, 0}, []float64{wa.ToolAccuracy, wa.Exact, wa.FailClosed})
	assert.Equal(t, []string{"wrong_args", "wrong_args", "wrong_args", "exact"}, verdicts(wa))
	assert.Equal(t, `get_weather: parameter "city" is "London", gold accepts ["Paris"]`, wa.Results[0].Difference)
	assert.Equal(t, `send_email: parameter "subject" is "Hello", gold accepts ["Report","Report late"]`, wa.Results[1].Difference)
	assert.Equal(t, `get_weather: parameter "units" = "celsius" is not in the gold answer`, wa.Results[2].Difference)
	assert.Equal(t, 0, wa.Dropped)

	to := by["timeout"]
	assert.Equal(t, []float64{0, 0, 1}, []float64{to.ToolAccuracy, to.Exact, to.FailClosed})
	assert.Equal(t, map[string]int{"timeout": 4}, to.FailClosedKinds)
	for _, r := range to.Results {
		assert.Equal(t, "fail_closed", r.Verdict)
		assert.Equal(t, "timeout", r.FailKind)
		assert.Equal(t, 0, r.PromptTokens)
		assert.GreaterOrEqual(t, r.LatencyMS, 1000.0)
	}

	best := selecteval.Best(rep.Candidates)
	names := []string{}
	for _, s := range best {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"oracle", "half", "wrong-args", "timeout"}, names)
}

func TestRunInterruptedKeepsWhatWasScored(t *testing.T) {
	reg, tasks := load(t)
	o := fake(t, oracle)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := selecteval.Run(ctx, reg, tasks, []selecteval.Candidate{candidate("oracle", o.URL, "m")},
		selecteval.Options{Progress: func(p selecteval.Progress) {
			if p.Done == 2 {
				cancel()
			}
		}})
	require.NoError(t, err)
	assert.True(t, rep.Interrupted)
	assert.Equal(t, 4, rep.Total)
	s := rep.Candidates[0]
	assert.Equal(t, 2, s.Tasks)
	assert.Equal(t, 1.0, s.Exact)
	assert.Equal(t, 200, s.PromptTokens)
}

func TestRunRateBound(t *testing.T) {
	reg, tasks := load(t)
	o := fake(t, oracle)
	start := time.Now()
	_, err := selecteval.Run(context.Background(), reg, tasks, []selecteval.Candidate{candidate("oracle", o.URL, "m")},
		selecteval.Options{Parallel: 4, RPS: 10})
	require.NoError(t, err)
	// Four starts at ten a second: the last starts 300 ms after the first.
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
}

func TestRunRefusesUnknownGoldTool(t *testing.T) {
	reg, _ := load(t)
	tasks, err := selecteval.ReadTasks(strings.NewReader(`{"id":"x","task":"t","calls":[{"tool":"nope","args":{}}]}`), "t.jsonl")
	require.NoError(t, err)
	_, err = selecteval.Run(context.Background(), reg, tasks, []selecteval.Candidate{candidate("c", "http://127.0.0.1:1/v1", "m")}, selecteval.Options{})
	assert.EqualError(t, err, `line 1: task "x": calls[0] names "nope", which the catalog does not hold`)
}

func TestReadTasksNamesTheBadLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"{\"id\":\"a\",\"task\":\"t\",\"calls\":[]}\n\nnot json", "f line 3: not a task object: invalid character 'o' in literal null (expecting 'u')"},
		{`{"id":"a","task":"t"}`, `f line 1: task "a": "calls" is required ([] when the right answer is no call)`},
		{`{"task":"t","calls":[]}`, `f line 1: "id" is required`},
		{`{"id":"a","calls":[]}`, `f line 1: task "a": "task" is required`},
		{`{"id":"a","task":"t","calls":[],"call":[]}`, `f line 1: not a task object: json: unknown field "call"`},
		{"{\"id\":\"a\",\"task\":\"t\",\"calls\":[]}\n{\"id\":\"a\",\"task\":\"u\",\"calls\":[]}", `f line 2: id "a" is already the id of line 1`},
		{`{"id":"a","task":"t","calls":[{"args":{}}]}`, `f line 1: task "a": calls[0] has no "tool"`},
		{`{"id":"a","task":"t","calls":[{"tool":"x","args":{"p":[]}}]}`, `f line 1: task "a": calls[0] (x): parameter "p" lists no acceptable value (add "" to let it be omitted)`},
		{`{"id":"a","task":"t","calls":[]} {}`, `f line 1: more than one JSON value on the line`},
		{"\n\n", `f: no task (want one JSON object a line)`},
	} {
		_, err := selecteval.ReadTasks(strings.NewReader(c.in), "f")
		assert.EqualError(t, err, c.want, c.in)
	}
}

func TestCheck(t *testing.T) {
	gold := func(s string) *selecteval.Task {
		ts, err := selecteval.ReadTasks(strings.NewReader(s), "g")
		require.NoError(t, err)
		return &ts[0]
	}
	calls := func(pairs ...string) []selector.ToolCall {
		var out []selector.ToolCall
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, selector.ToolCall{Tool: pairs[i], Args: json.RawMessage(pairs[i+1])})
		}
		return out
	}
	two := gold(`{"id":"a","task":"t","calls":[{"tool":"f","args":{"n":[1],"s":["x",""]}},{"tool":"g","args":{}}]}`)
	for _, c := range []struct {
		name         string
		task         *selecteval.Task
		calls        []selector.ToolCall
		tools, exact bool
		diff         string
	}{
		{"both, any order, number by value", two, calls("g", `{}`, "f", `{"n":1.0}`), true, true, ""},
		{"optional given", two, calls("f", `{"n":1,"s":"x"}`, "g", `{}`), true, true, ""},
		{"wrong value", two, calls("f", `{"n":2}`, "g", `{}`), true, false, `f: parameter "n" is 2, gold accepts [1]`},
		{"required missing", two, calls("f", `{}`, "g", `{}`), true, false, `f: parameter "n" is missing (gold accepts [1])`},
		{"unnamed parameter", two, calls("f", `{"n":1}`, "g", `{"z":true}`), true, false, `g: parameter "z" = true is not in the gold answer`},
		{"missing tool", two, calls("f", `{"n":1}`), false, false, "missing call to g"},
		{"extra tool", two, calls("f", `{"n":1}`, "g", `{}`, "h", `{}`), false, false, "unexpected call to h {}"},
		{"same tool twice", two, calls("f", `{"n":1}`, "f", `{"n":1}`, "g", `{}`), true, false, "2 call(s) to f, gold has 1"},
		{"no call wanted", gold(`{"id":"a","task":"t","calls":[]}`), nil, true, true, ""},
		{"no call wanted, one made", gold(`{"id":"a","task":"t","calls":[]}`), calls("f", `{}`), false, false, "unexpected call to f {}"},
		{"ordered, out of order", gold(`{"id":"a","task":"t","ordered":true,"calls":[{"tool":"f","args":{}},{"tool":"g","args":{}}]}`),
			calls("g", `{}`, "f", `{}`), true, false, "call 1 is g, gold has f there (the task is ordered)"},
		{"one tool twice, pairs found", gold(`{"id":"a","task":"t","calls":[{"tool":"f","args":{"n":[1,2]}},{"tool":"f","args":{"n":[1]}}]}`),
			calls("f", `{"n":1}`, "f", `{"n":2}`), true, true, ""},
		{"nested value", gold(`{"id":"a","task":"t","calls":[{"tool":"f","args":{"o":[{"a":[1,2]}]}}]}`),
			calls("f", `{"o":{"a":[1,2]}}`), true, true, ""},
	} {
		tools, exact, diff := selecteval.Check(c.task, c.calls)
		assert.Equal(t, c.tools, tools, c.name)
		assert.Equal(t, c.exact, exact, c.name)
		assert.Equal(t, c.diff, diff, c.name)
	}
}

func TestSpecOverridesTheBase(t *testing.T) {
	keyFile := t.TempDir() + "/key"
	require.NoError(t, os.WriteFile(keyFile, []byte("sk-from-file\n"), 0o600))
	specs, err := selecteval.ParseSpecs([]byte(`[
		{"name": "a", "model": "m-a", "mode": "native", "top_k": 7, "offer_tokens": 500, "api_key_file": "` + keyFile + `"},
		{"name": "b", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "K"}]`))
	require.NoError(t, err)
	base := selector.Settings{BaseURL: "http://127.0.0.1:8/v1", Model: "base", APIKey: "sk-base", Timeout: 7 * time.Second}
	a, err := specs[0].Candidate(base, func(string) string { return "" })
	require.NoError(t, err)
	assert.Equal(t, "a", a.Name)
	assert.Equal(t, "m-a", a.Config.Model)
	assert.Equal(t, "native", string(a.Config.Mode))
	assert.Equal(t, 7, a.Config.TopK)
	assert.Equal(t, 500, a.Config.OfferTokens)
	assert.Equal(t, "sk-from-file", a.Config.APIKey)
	assert.Equal(t, "http://127.0.0.1:8/v1", a.Config.BaseURL, "kept from the base")
	assert.Equal(t, 7*time.Second, a.Config.Timeout, "kept from the base")
	b, err := specs[1].Candidate(base, func(k string) string { return map[string]string{"K": "sk-env"}[k] })
	require.NoError(t, err)
	assert.Equal(t, "base", b.Config.Model)
	assert.Equal(t, "http://127.0.0.1:9/v1", b.Config.BaseURL)
	assert.Equal(t, "sk-env", b.Config.APIKey)

	for in, want := range map[string]string{
		`[{"model":"x"}]`:                                     `candidate #1 has no "name"`,
		`[{"name":"a"},{"name":"a"}]`:                         `candidate #2: the name "a" is taken`,
		`[{"name":"a","api_key_file":"f","api_key_env":"E"}]`: `candidate "a": give api_key_file or api_key_env, not both`,
		`[]`:           "no candidate in the list",
		`{"name":"a"}`: "want a JSON array of candidates",
	} {
		_, err := selecteval.ParseSpecs([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
	bad, _ := selecteval.ParseSpecs([]byte(`[{"name":"a","mode":"telepathy"}]`))
	_, err = bad[0].Candidate(base, nil)
	assert.ErrorContains(t, err, `candidate "a":`)
	assert.ErrorIs(t, err, selector.ErrInvalidConfig)
}
