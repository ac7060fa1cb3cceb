package metatool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/executor/metatool"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

const cityArgs = `{"type":"object","properties":{"city":{"type":"string","minLength":1},"days":{"type":"integer","minimum":1,"maximum":10}},"required":["city"],"additionalProperties":false}`

// metaFixture is a small weather/mail catalog: eight weather tools so that
// limits bite, an unsafe one, a role-restricted one, an unbound one, and a
// mailer. Every tool but weather_unbound is bound; the handlers count runs.
func metaFixture(t *testing.T, opts *executor.Options) (*executor.Executor, *atomic.Int64) {
	t.Helper()
	reg := registry.New(nil)
	var tools []registry.Tool
	for i, what := range []string{"forecast", "current conditions", "radar", "alerts", "history", "uv index", "pollen", "humidity"} {
		tools = append(tools, registry.NewTool(fmt.Sprintf("weather_%d", i), "Weather "+what+" for a city.", json.RawMessage(cityArgs)))
	}
	unsafe := registry.NewTool("weather_station_reset", "Reset a weather station of a city.", json.RawMessage(cityArgs))
	unsafe.Safe = false
	admin := registry.NewTool("weather_admin", "Administer the weather service for a city.", json.RawMessage(cityArgs))
	admin.Roles = []string{"admin"}
	tools = append(tools, unsafe, admin,
		registry.NewTool("weather_unbound", "Weather satellite images for a city.", json.RawMessage(cityArgs)),
		registry.NewTool("send_email", "Send an email message.", json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}`)))
	require.NoError(t, reg.RegisterAll(tools))
	ex := executor.New(reg, opts)
	var runs atomic.Int64
	for _, tl := range tools {
		if tl.Name == "weather_unbound" {
			continue
		}
		require.NoError(t, ex.Handle(tl.Name, func(_ context.Context, args json.RawMessage) (any, error) {
			runs.Add(1)
			return json.RawMessage(args), nil
		}))
	}
	return ex, &runs
}

// meta is ex's meta-tools with rank's default ranking.
func meta(ex *executor.Executor) *metatool.Tools { return metatool.New(ex, nil) }

func names(found []metatool.FoundTool) []string {
	var out []string
	for _, f := range found {
		out = append(out, f.Name)
	}
	return out
}

func TestFindToolLimitAndFields(t *testing.T) {
	ex, _ := metaFixture(t, nil)
	ctx := context.Background()
	found, err := meta(ex).Find(ctx, "weather for a city", 0)
	require.NoError(t, err)
	assert.Len(t, found, rank.DefaultFindLimit, "limit 0 means 5")
	for _, f := range found {
		assert.GreaterOrEqual(t, f.Score, 0.0)
		assert.LessOrEqual(t, f.Score, 1.0)
		assert.NotEmpty(t, f.Description)
		assert.JSONEq(t, cityArgs, string(f.Parameters))
	}
	for i := 1; i < len(found); i++ {
		assert.GreaterOrEqual(t, found[i-1].Score, found[i].Score, "best first")
	}

	found, err = meta(ex).Find(ctx, "weather for a city", 2)
	require.NoError(t, err)
	assert.Len(t, found, 2)
	found, err = meta(ex).Find(ctx, "weather for a city", 1000)
	require.NoError(t, err)
	assert.Len(t, found, 8, "every runnable weather tool, capped at rank.MaxFindLimit")

	found, err = meta(ex).Find(ctx, "send an email", 3)
	require.NoError(t, err)
	require.NotEmpty(t, found)
	assert.Equal(t, "send_email", found[0].Name)

	found, err = meta(ex).Find(ctx, "quantum chromodynamics", 3)
	require.NoError(t, err)
	assert.Empty(t, found)
}

func TestFindToolHidesWhatTheExecutorRefuses(t *testing.T) {
	ctx := context.Background()
	hiddenByDefault := []string{"weather_station_reset", "weather_admin", "weather_unbound"}
	ex, _ := metaFixture(t, nil)
	for _, q := range []string{"weather station reset", "administer the weather service", "satellite images", "weather"} {
		found, err := meta(ex).Find(ctx, q, rank.MaxFindLimit)
		require.NoError(t, err)
		for _, h := range hiddenByDefault {
			assert.NotContains(t, names(found), h, "query %q", q)
		}
	}
	// Named exactly, still hidden.
	found, err := meta(ex).Find(ctx, "weather_station_reset", 5)
	require.NoError(t, err)
	assert.NotContains(t, names(found), "weather_station_reset")

	// The executor's own options reveal what it would run; never the unbound tool.
	ex, _ = metaFixture(t, &executor.Options{AllowUnsafe: true, Roles: []string{"admin"}})
	found, err = meta(ex).Find(ctx, "reset a weather station", 5)
	require.NoError(t, err)
	assert.Contains(t, names(found), "weather_station_reset")
	found, err = meta(ex).Find(ctx, "administer the weather service", 5)
	require.NoError(t, err)
	assert.Contains(t, names(found), "weather_admin")
	found, err = meta(ex).Find(ctx, "weather satellite images", 50)
	require.NoError(t, err)
	assert.NotContains(t, names(found), "weather_unbound")

	// Hidden tools do not eat into the limit.
	found, err = meta(ex).Find(ctx, "weather", 8)
	require.NoError(t, err)
	assert.Len(t, found, 8)

	// Binding later reveals the tool (the hidden set follows bindings).
	require.NoError(t, ex.Handle("weather_unbound", echo))
	found, err = meta(ex).Find(ctx, "weather satellite images", 3)
	require.NoError(t, err)
	assert.Contains(t, names(found), "weather_unbound")
}

func TestFindToolOptions(t *testing.T) {
	// New's ranking options tune the ranking but cannot widen what is shown.
	ex, _ := metaFixture(t, nil)
	tools := metatool.New(ex, &rank.Options{
		Scorer: rank.Keyword{}, AllowUnsafe: true, AlwaysActive: []string{"send_email", "weather_station_reset"},
	})
	found, err := tools.Find(context.Background(), "radar", 5)
	require.NoError(t, err)
	assert.Equal(t, []string{"weather_2", "send_email"}, names(found))
}

// The hidden tools are filtered before ranking, not after: a FindTool
// reranker is shown runnable tools only, and no more than its usual top
// (2 x limit) of them.
func TestFindToolRerankerSeesOnlyRunnableTools(t *testing.T) {
	var seen [][]string
	rr := rerankFunc(func(_ context.Context, _ string, picks []rank.Pick) ([]rank.Pick, error) {
		var names []string
		for _, p := range picks {
			names = append(names, p.Tool)
		}
		seen = append(seen, names)
		return picks, nil
	})
	ex, _ := metaFixture(t, nil)
	found, err := metatool.New(ex, &rank.Options{Reranker: rr, MinScore: -1}).Find(context.Background(), "weather radar and satellite images", 2)
	require.NoError(t, err)
	assert.Len(t, found, 2)
	require.Len(t, seen, 1)
	assert.LessOrEqual(t, len(seen[0]), 4, "%v", seen[0])
	for _, h := range []string{"weather_station_reset", "weather_admin", "weather_unbound"} {
		assert.NotContains(t, seen[0], h)
	}
}

type rerankFunc func(ctx context.Context, query string, picks []rank.Pick) ([]rank.Pick, error)

func (f rerankFunc) Rerank(ctx context.Context, query string, picks []rank.Pick) ([]rank.Pick, error) {
	return f(ctx, query, picks)
}

func TestCallTool(t *testing.T) {
	ctx := context.Background()
	sink := &recordSink{}
	ex, runs := metaFixture(t, &executor.Options{Audit: sink.Audit})

	res, err := meta(ex).Call(ctx, "weather_0", json.RawMessage(`{"city":"Lyon","days":3}`))
	require.NoError(t, err)
	assert.Equal(t, executor.OutcomeOK, res.Outcome)
	assert.JSONEq(t, `{"city":"Lyon","days":3}`, res.Content())
	assert.EqualValues(t, 1, runs.Load())

	// Invalid arguments: the handler never runs; the model gets every violation and the schema.
	res, err = meta(ex).Call(ctx, "weather_0", json.RawMessage(`{"days":30,"town":"Lyon"}`))
	ce := callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
	assert.Len(t, ce.Violations, 3, "%v", ce.Violations)
	assert.EqualValues(t, 1, runs.Load(), "the handler never ran")
	assert.True(t, res.IsError)
	assert.Equal(t, executor.OutcomeInvalid, res.Outcome)
	var me metatool.MetaError
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &me), res.Content())
	assert.Equal(t, "weather_0", me.Tool)
	assert.Equal(t, executor.OutcomeInvalid, me.Outcome)
	assert.Len(t, me.Violations, 3)
	rules := map[string]bool{}
	for _, v := range me.Violations {
		rules[v.Rule] = true
		assert.NotEmpty(t, v.Message)
	}
	assert.True(t, rules["required"] && rules["maximum"] && rules["additionalProperties"], "%v", me.Violations)
	assert.JSONEq(t, cityArgs, string(me.Parameters))
	assert.Contains(t, me.Hint, "fix the arguments")

	// Unknown tool: points the model at find_tool.
	res, err = meta(ex).Call(ctx, "weather_forecast_pro", json.RawMessage(`{}`))
	callError(t, err, executor.OutcomeInvalid, executor.ErrUnknownTool)
	me = metatool.MetaError{}
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &me))
	assert.Contains(t, me.Hint, "find_tool")
	assert.Empty(t, me.Parameters)

	// Refused by policy, and not a way around it.
	res, err = meta(ex).Call(ctx, "weather_station_reset", json.RawMessage(`{"city":"Lyon"}`))
	callError(t, err, executor.OutcomeRefused, executor.ErrUnsafe)
	me = metatool.MetaError{}
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &me))
	assert.Equal(t, executor.OutcomeRefused, me.Outcome)

	// call_tool does not call meta-tools.
	_, err = meta(ex).Call(ctx, "find_tool", json.RawMessage(`{"query":"x"}`))
	callError(t, err, executor.OutcomeInvalid, executor.ErrUnknownTool)

	assert.EqualValues(t, 1, runs.Load())
	// One audit record per call that reached the executor, under the inner tool's name.
	var tools []string
	for _, r := range sink.Records() {
		tools = append(tools, r.Tool)
	}
	assert.Equal(t, []string{"weather_0", "weather_0", "weather_forecast_pro", "weather_station_reset"}, tools)
}

func TestHandleMeta(t *testing.T) {
	ctx := context.Background()
	ex, runs := metaFixture(t, nil)

	// Not a meta-tool: not handled.
	_, handled, err := meta(ex).Handle(ctx, call("weather_0", `{"city":"Lyon"}`))
	assert.False(t, handled)
	assert.NoError(t, err)
	assert.Zero(t, runs.Load())

	// find_tool, as a provider delivers it (arguments as a JSON string), default limit.
	res, handled, err := meta(ex).Handle(ctx, executor.Call{ID: "c1", Tool: "find_tool", Args: json.RawMessage(`{"query":"weather for a city"}`)})
	require.True(t, handled)
	require.NoError(t, err)
	assert.Equal(t, "c1", res.ID)
	var found []metatool.FoundTool
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &found), res.Content())
	assert.Len(t, found, 5)
	res, _, err = meta(ex).Handle(ctx, call("find_tool", `{"query":"email","limit":1}`))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &found))
	assert.Equal(t, []string{"send_email"}, names(found))
	res, _, err = meta(ex).Handle(ctx, call("find_tool", `{"query":"nothing matches zzz"}`))
	require.NoError(t, err)
	assert.Equal(t, "[]", res.Content(), "an empty result is an empty array, not null")

	// Invalid find_tool arguments.
	res, handled, err = meta(ex).Handle(ctx, call("find_tool", `{"limit":500}`))
	require.True(t, handled)
	callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
	var me metatool.MetaError
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &me))
	assert.Equal(t, "find_tool", me.Tool)
	assert.Len(t, me.Violations, 2, "%v", me.Violations)
	assert.Contains(t, string(me.Parameters), `"query"`)

	// An empty query: its violation, and the schema the hint points at.
	for _, q := range []string{`{"query":""}`, `{"query":"   ","limit":3}`} {
		res, _, err = meta(ex).Handle(ctx, call("find_tool", q))
		callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
		me = metatool.MetaError{}
		require.NoError(t, json.Unmarshal([]byte(res.Content()), &me), q)
		assert.Equal(t, "find_tool", me.Tool)
		require.Len(t, me.Violations, 1)
		assert.Equal(t, "/query", me.Violations[0].Pointer)
		entries, err := rank.MetaToolEntries()
		require.NoError(t, err)
		assert.JSONEq(t, string(entries[0].Def().Parameters), string(me.Parameters), q)
		assert.Contains(t, me.Hint, "query")
	}

	// call_tool dispatches; arguments may be an object or a string holding one.
	for _, args := range []string{
		`{"name":"weather_1","arguments":{"city":"Oslo"}}`,
		`{"name":"weather_1","arguments":"{\"city\":\"Oslo\"}"}`,
	} {
		res, handled, err = meta(ex).Handle(ctx, call("call_tool", args))
		require.True(t, handled)
		require.NoError(t, err, args)
		assert.JSONEq(t, `{"city":"Oslo"}`, res.Content())
		assert.Equal(t, "weather_1", res.Tool)
	}
	assert.EqualValues(t, 2, runs.Load())

	// call_tool with invalid inner arguments: violations, no run.
	res, _, err = meta(ex).Handle(ctx, call("call_tool", `{"name":"weather_1","arguments":{"city":""}}`))
	ce := callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
	assert.Equal(t, "weather_1", ce.Tool)
	me = metatool.MetaError{}
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &me))
	require.Len(t, me.Violations, 1)
	assert.Equal(t, "/city", me.Violations[0].Pointer)
	assert.EqualValues(t, 2, runs.Load())

	// call_tool without a name: the meta call itself is invalid.
	_, _, err = meta(ex).Handle(ctx, call("call_tool", `{"arguments":{}}`))
	ce = callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
	assert.Equal(t, "call_tool", ce.Tool)

	// call_tool of an unknown tool.
	res, _, err = meta(ex).Handle(ctx, call("call_tool", `{"name":"nope","arguments":{}}`))
	callError(t, err, executor.OutcomeInvalid, executor.ErrUnknownTool)
	assert.Contains(t, res.Content(), "find_tool")
	assert.EqualValues(t, 2, runs.Load())
}

// call_tool's arguments are optional, as in MCP's tools/call: missing means
// {}, which the tool's own schema still checks.
func TestCallToolArgumentsOptional(t *testing.T) {
	ctx := context.Background()
	reg := registry.New(nil)
	require.NoError(t, reg.RegisterAll([]registry.Tool{
		registry.NewTool("ping", "Answer pong.", json.RawMessage(`{"type":"object","properties":{"loud":{"type":"boolean"}},"additionalProperties":false}`)),
		registry.NewTool("weather", "Weather for a city.", json.RawMessage(cityArgs)),
	}))
	ex := executor.New(reg, nil)
	var got []string
	for _, name := range []string{"ping", "weather"} {
		require.NoError(t, ex.Handle(name, func(_ context.Context, args json.RawMessage) (any, error) {
			got = append(got, string(args))
			return "pong", nil
		}))
	}

	res, handled, err := meta(ex).Handle(ctx, call("call_tool", `{"name":"ping"}`))
	require.True(t, handled)
	require.NoError(t, err, res.Content())
	assert.Equal(t, "ping", res.Tool)
	assert.Equal(t, []string{"{}"}, got, "missing arguments run the tool with {}")

	// A tool whose schema requires something: its own violations, not call_tool's.
	res, _, err = meta(ex).Handle(ctx, call("call_tool", `{"name":"weather"}`))
	ce := callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
	assert.Equal(t, "weather", ce.Tool)
	var me metatool.MetaError
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &me))
	require.Len(t, me.Violations, 1, "%v", me.Violations)
	assert.Equal(t, "required", me.Violations[0].Rule)
	assert.JSONEq(t, cityArgs, string(me.Parameters))
	assert.Len(t, got, 1, "an invalid call does not run")

	// The definition says so.
	entries, err := rank.MetaToolEntries()
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() == rank.CallToolName {
			var schema struct{ Required []string }
			require.NoError(t, json.Unmarshal(e.Def().Parameters, &schema))
			assert.Equal(t, []string{"name"}, schema.Required)
		}
	}
}

func TestMetaToolViews(t *testing.T) {
	entries, err := rank.MetaToolEntries()
	require.NoError(t, err)
	want := []registry.Tool{entries[0].Tool(), entries[1].Tool()}
	for _, f := range registry.Formats() {
		t.Run(string(f), func(t *testing.T) {
			b, err := registry.MarshalView(entries, f, nil)
			require.NoError(t, err)
			tools, _, err := registry.ParseCatalog(b)
			require.NoError(t, err, "%s", b)
			require.Len(t, tools, 2)
			for i, tl := range tools {
				assert.Equal(t, want[i].Name, tl.Name)
				assert.Equal(t, want[i].Description, tl.Description)
				assert.JSONEq(t, string(want[i].Parameters), string(tl.Parameters))
				// And they register: the views are usable catalogs.
				require.NoError(t, registry.New(nil).Register(tl))
			}
		})
	}
	_, err = registry.MarshalView(entries, "xml", nil)
	assert.Error(t, err)
}

// A model loop: meta-tool calls go to HandleMeta, anything else to Call.
func TestMetaLoopDispatch(t *testing.T) {
	ex, runs := metaFixture(t, nil)
	ctx := context.Background()
	var contents []string
	for _, c := range []executor.Call{
		call("find_tool", `{"query":"weather radar","limit":1}`),
		call("call_tool", `{"name":"weather_2","arguments":{"city":"Paris"}}`),
		call("send_email", `{"to":"bob@example.com"}`),
	} {
		res, handled, err := meta(ex).Handle(ctx, c)
		if !handled {
			res, err = ex.Call(ctx, c)
		}
		require.NoError(t, err)
		contents = append(contents, res.Content())
	}
	assert.Contains(t, contents[0], `"name":"weather_2"`)
	assert.JSONEq(t, `{"city":"Paris"}`, contents[1])
	assert.JSONEq(t, `{"to":"bob@example.com"}`, contents[2])
	assert.EqualValues(t, 2, runs.Load())
	assert.False(t, slices.Contains(contents, ""))
}

// TestAllowedMatchesFindTool: Allowed is nil exactly for the tools find_tool
// may return, and names why for the others.
func TestAllowedMatchesFindTool(t *testing.T) {
	ex, _ := metaFixture(t, nil)
	found, err := meta(ex).Find(context.Background(), "weather city satellite station admin email", rank.MaxFindLimit)
	require.NoError(t, err)
	entries, _ := ex.Registry().Snapshot()
	require.NotEmpty(t, found)
	for _, e := range entries {
		if ex.Allowed(e.Name()) != nil {
			assert.NotContains(t, names(found), e.Name(), "find_tool returned a tool Allowed refuses")
		}
	}
	for _, f := range found {
		assert.NoError(t, ex.Allowed(f.Name), "find_tool returned %s", f.Name)
	}
	assert.ErrorIs(t, ex.Allowed("weather_station_reset"), executor.ErrUnsafe)
	assert.ErrorIs(t, ex.Allowed("weather_admin"), executor.ErrRoleDenied)
	assert.ErrorIs(t, ex.Allowed("weather_unbound"), executor.ErrNoHandler)
	assert.ErrorIs(t, ex.Allowed("nope"), executor.ErrUnknownTool)
	assert.NoError(t, ex.Allowed("send_email"))
}

// TestMetaUnknownSuggestsAndBlankQueryRefused: an unknown name gets
// didYouMean suggestions among findable tools; a blank query is invalid.
func TestMetaUnknownSuggestsAndBlankQueryRefused(t *testing.T) {
	ex, runs := metaFixture(t, nil)
	ctx := context.Background()
	res, err := meta(ex).Call(ctx, "send_mail", json.RawMessage(`{"to":"a"}`))
	require.ErrorIs(t, err, executor.ErrUnknownTool)
	var me metatool.MetaError
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &me))
	assert.Contains(t, me.DidYouMean, "send_email")
	assert.NotContains(t, me.DidYouMean, "weather_station_reset")
	// The tool name without its namespace prefix, or with a word cut
	// short, comes first; an unrunnable tool is never suggested.
	for name, want := range map[string]string{"email": "send_email", "weather_7x": "weather_7", "station_reset": ""} {
		res, err = meta(ex).Call(ctx, name, nil)
		require.ErrorIs(t, err, executor.ErrUnknownTool)
		me = metatool.MetaError{}
		require.NoError(t, json.Unmarshal([]byte(res.Content()), &me))
		if want != "" {
			require.NotEmpty(t, me.DidYouMean, name)
			assert.Equal(t, want, me.DidYouMean[0], name)
		}
		assert.NotContains(t, me.DidYouMean, "weather_station_reset", name)
		assert.NotContains(t, me.DidYouMean, "weather_unbound", name)
	}

	res, _, err = meta(ex).Handle(ctx, executor.Call{Tool: rank.FindToolName, Args: json.RawMessage(`{"query":"  "}`)})
	require.ErrorIs(t, err, executor.ErrInvalidArgs)
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &me))
	require.Len(t, me.Violations, 1)
	assert.Equal(t, "/query", me.Violations[0].Pointer)
	assert.Zero(t, runs.Load())
}

// TestHandlerValueKeptOnError: a handler that returns a value with its error
// fails the call and the value stays as the failure's detail.
func TestHandlerValueKeptOnError(t *testing.T) {
	reg := registry.New(nil)
	ex := executor.New(reg, nil)
	require.NoError(t, ex.Register(registry.NewTool("flaky", "Fails with detail.", json.RawMessage(`{"type":"object"}`)),
		func(context.Context, json.RawMessage) (any, error) {
			return map[string]any{"detail": "disk full"}, fmt.Errorf("write failed")
		}))
	res, err := ex.Call(context.Background(), executor.Call{Tool: "flaky"})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, executor.OutcomeToolError, res.Outcome)
	assert.Equal(t, "write failed", res.Error)
	assert.Equal(t, map[string]any{"detail": "disk full"}, res.Value)
}

// TestFindToolPrerequisites: a prerequisite is marked with the tool that
// needs it and why, comes right after that tool with a lower score, and
// never takes the place of a tool found for the query.
func TestFindToolPrerequisites(t *testing.T) {
	path := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	tools := []registry.Tool{
		registry.NewTool("fs__read_text_file", "Read the complete contents of a text file.", path),
		registry.NewTool("fs__read_media_file", "Read an image or audio file.", path),
		registry.NewTool("fs__get_file_info", "Retrieve metadata about a file: size, times, permissions.", path),
		registry.NewTool("fs__list_allowed_directories", "Returns the directories this server may access. Use it to learn which paths are available.", json.RawMessage(`{"type":"object"}`)),
	}
	reg := registry.New(nil)
	require.NoError(t, reg.RegisterAll(tools))
	ex := executor.New(reg, nil)
	for _, tl := range tools {
		require.NoError(t, ex.Handle(tl.Name, func(context.Context, json.RawMessage) (any, error) { return "ok", nil }))
	}
	ctx := context.Background()
	without := metatool.New(ex, &rank.Options{NoPrerequisites: true})
	for _, limit := range []int{1, 2, 3} {
		found, err := meta(ex).Find(ctx, "read a text file", limit)
		require.NoError(t, err)
		scored, err := without.Find(ctx, "read a text file", limit)
		require.NoError(t, err)
		var kept []string
		var prereqs []metatool.FoundTool
		for i, f := range found {
			if f.PrerequisiteOf == "" {
				kept = append(kept, f.Name)
				continue
			}
			prereqs = append(prereqs, f)
			require.Positive(t, i, "a prerequisite comes after the tool that needs it")
			before := found[i-1]
			assert.Contains(t, []string{before.Name, before.PrerequisiteOf}, f.PrerequisiteOf)
			assert.Less(t, f.Score, before.Score+1e-9)
			assert.Equal(t, "yields path that "+f.PrerequisiteOf+" requires", f.Reason)
		}
		assert.Equal(t, names(scored), kept, "limit %d: the tools found for the query", limit)
		require.Len(t, prereqs, 1, "limit %d: %v", limit, names(found))
		assert.Equal(t, "fs__list_allowed_directories", prereqs[0].Name)
		assert.Equal(t, "fs__read_text_file", prereqs[0].PrerequisiteOf)
		assert.Less(t, prereqs[0].Score, found[0].Score)
	}
}

// Withheld counts, by rule, the matches the policy kept out of find_tool:
// never the unbound tool, nothing once the policy allows them.
func TestFindToolWithheld(t *testing.T) {
	ctx := context.Background()
	ex, _ := metaFixture(t, nil)
	for q, want := range map[string]map[registry.Rule]int{
		"reset a weather station":        {registry.RuleUnsafe: 1},
		"administer the weather service": {registry.RuleRole: 1},
		"weather satellite images":       nil, // only the unbound tool: nothing runs it
		"quantum chromodynamics":         nil,
	} {
		found, err := meta(ex).Find(ctx, q, 5)
		require.NoError(t, err)
		got, err := meta(ex).Withheld(ctx, q, 5, found)
		require.NoError(t, err)
		assert.Equal(t, want, got, "query %q", q)
	}
	// A limit of 1 counts only what would have been the one result.
	found, err := meta(ex).Find(ctx, "reset a weather station", 1)
	require.NoError(t, err)
	got, err := meta(ex).Withheld(ctx, "reset a weather station", 1, found)
	require.NoError(t, err)
	assert.Equal(t, map[registry.Rule]int{registry.RuleUnsafe: 1}, got)

	ex, _ = metaFixture(t, &executor.Options{AllowUnsafe: true, Roles: []string{"admin"}})
	for _, q := range []string{"reset a weather station", "administer the weather service"} {
		found, err := meta(ex).Find(ctx, q, 5)
		require.NoError(t, err)
		got, err := meta(ex).Withheld(ctx, q, 5, found)
		require.NoError(t, err)
		assert.Empty(t, got, "query %q with the policy allowing it", q)
	}
}

// find_tool leaves out a schema's top-level "$schema" (the dialect's URI,
// repeated by every tool of a server and of no use to a model), keeping
// every other member, nested "$schema" included, in its order.
func TestFindToolDropsSchemaKeyword(t *testing.T) {
	reg := registry.New(nil)
	schema := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`
	require.NoError(t, reg.Register(registry.NewTool("read_text_file", "Read a text file from disk.", json.RawMessage(schema))))
	ex := executor.New(reg, nil)
	require.NoError(t, ex.Handle("read_text_file", echo))
	found, err := meta(ex).Find(context.Background(), "read a text file", 1)
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`, string(found[0].Parameters))
	// The registry still validates with the dialect it named.
	_, err = meta(ex).Call(context.Background(), "read_text_file", json.RawMessage(`{"path":"/x","extra":1}`))
	assert.Error(t, err)
}
