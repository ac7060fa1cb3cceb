package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/toolselect/toolselect/executor/metatool"
	"github.com/toolselect/toolselect/rank"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/executor"
)

// TestRealPeers drives the proxy in front of the three reference servers
// with the Go SDK client.
func TestRealPeers(t *testing.T) {
	ups, fsDir := realPeers(t)
	p := startProxy(t, &Config{Upstreams: ups, Keep: []string{"everything__echo", "memory__delete_entities"}})
	cs := connectMemory(t, p, "")

	t.Run("list", func(t *testing.T) {
		names := listNames(t, cs)
		slices.Sort(names)
		// memory__delete_entities is on the keep-list but destructive: not exposed.
		want := []string{"call_tool", "everything__echo", "find_tool"}
		if !slices.Equal(names, want) {
			t.Fatalf("tools/list = %v, want %v", names, want)
		}
	})

	t.Run("import", func(t *testing.T) {
		st := p.Stats(context.Background())
		for _, u := range st.Upstreams {
			if u.State != StateReady || u.Imported == 0 || u.Imported != u.Listed {
				t.Errorf("upstream %s: state %s, imported %d of %d (%s)", u.Name, u.State, u.Imported, u.Listed, u.LastError)
			}
		}
		e, ok := p.Registry().Get("memory__delete_entities")
		if !ok || e.Def().Safe {
			t.Fatalf("memory__delete_entities should be imported and unsafe (destructiveHint)")
		}
		e, ok = p.Registry().Get("memory__read_graph")
		if !ok || !e.Def().ReadOnly() {
			t.Fatalf("memory__read_graph should carry the readOnly capability (readOnlyHint)")
		}
		if st.Tokens.FullCatalog <= st.Tokens.Exposed || st.Tokens.Exposed == 0 {
			t.Fatalf("tokens: full %d, exposed %d", st.Tokens.FullCatalog, st.Tokens.Exposed)
		}
	})

	t.Run("find", func(t *testing.T) {
		cases := map[string]string{
			"add two numbers":                    "everything__get-sum",
			"read the contents of a text file":   "filesystem__read_text_file",
			"create entities in knowledge graph": "memory__create_entities",
		}
		for q, want := range cases {
			got := find(t, cs, q, 5)
			if !slices.Contains(got, want) {
				t.Errorf("find_tool(%q) = %v, want %s among them", q, got, want)
			}
		}
	})

	t.Run("destructive hidden", func(t *testing.T) {
		for _, q := range []string{"delete entities from the knowledge graph", "delete observations", "memory__delete_relations"} {
			for _, n := range find(t, cs, q, 50) {
				if strings.HasPrefix(n, "memory__delete_") {
					t.Errorf("find_tool(%q) returned destructive %s", q, n)
				}
			}
		}
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "memory__delete_entities", "arguments": map[string]any{"entityNames": []string{"x"}}})
		if !res.IsError || !strings.Contains(text(res), "unsafe tool not allowed") || !strings.Contains(text(res), "--allow-destructive") {
			t.Fatalf("calling a destructive tool: %s", text(res))
		}
	})

	t.Run("call everything", func(t *testing.T) {
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "everything__get-sum", "arguments": map[string]any{"a": 2, "b": 3}})
		if res.IsError || !strings.Contains(text(res), "5") {
			t.Fatalf("get-sum: %s", text(res))
		}
		// The keep-list tool is callable directly.
		res = call(t, cs, "everything__echo", map[string]any{"message": "hi there"})
		if res.IsError || !strings.Contains(text(res), "hi there") {
			t.Fatalf("echo: %s", text(res))
		}
	})

	t.Run("call filesystem", func(t *testing.T) {
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "filesystem__read_text_file", "arguments": map[string]any{"path": filepath.Join(fsDir, "hello.txt")}})
		if res.IsError || !strings.Contains(text(res), "hello from the filesystem upstream") {
			t.Fatalf("read_text_file: %s", text(res))
		}
		// An upstream's own error is relayed as is.
		res = call(t, cs, rank.CallToolName, map[string]any{"name": "filesystem__read_text_file", "arguments": map[string]any{"path": "/etc/passwd"}})
		if !res.IsError {
			t.Fatalf("reading outside the allowed directory should be the upstream's tool error: %s", text(res))
		}
		// write_file is destructive: refused by the proxy, file not created.
		res = call(t, cs, rank.CallToolName, map[string]any{"name": "filesystem__write_file", "arguments": map[string]any{"path": filepath.Join(fsDir, "new.txt"), "content": "x"}})
		if !res.IsError {
			t.Fatalf("write_file should be refused")
		}
		if _, err := os.Stat(filepath.Join(fsDir, "new.txt")); err == nil {
			t.Fatalf("write_file reached the upstream")
		}
	})

	t.Run("call memory", func(t *testing.T) {
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "memory__create_entities", "arguments": map[string]any{
			"entities": []any{map[string]any{"name": "Ada", "entityType": "person", "observations": []string{"wrote the first program"}}},
		}})
		if res.IsError {
			t.Fatalf("create_entities: %s", text(res))
		}
		res = call(t, cs, rank.CallToolName, map[string]any{"name": "memory__read_graph", "arguments": map[string]any{}})
		if res.IsError || !strings.Contains(text(res), "Ada") {
			t.Fatalf("read_graph: %s", text(res))
		}
	})

	t.Run("invalid arguments never reach the upstream", func(t *testing.T) {
		before := p.Stats(context.Background())
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "memory__create_entities", "arguments": map[string]any{
			"entities": []any{map[string]any{"name": "Bob"}}, // entityType and observations missing
		}})
		if !res.IsError {
			t.Fatalf("invalid arguments accepted: %s", text(res))
		}
		sc, _ := json.Marshal(res.StructuredContent)
		if !strings.Contains(string(sc), `"outcome":"invalid"`) || !strings.Contains(string(sc), "/entities/0") || !strings.Contains(string(sc), "required") {
			t.Fatalf("violations not reported: %s", sc)
		}
		res = call(t, cs, rank.CallToolName, map[string]any{"name": "memory__read_graph", "arguments": map[string]any{}})
		if strings.Contains(text(res), "Bob") {
			t.Fatalf("the invalid call reached the upstream: %s", text(res))
		}
		res = call(t, cs, rank.CallToolName, map[string]any{"name": "everything__get-sum", "arguments": map[string]any{"a": "two", "b": 3}})
		if !res.IsError || !strings.Contains(text(res), "/a") {
			t.Fatalf("get-sum with a string: %s", text(res))
		}
		after := p.Stats(context.Background())
		if got := after.CallTool.Outcomes[string(executor.OutcomeInvalid)] - before.CallTool.Outcomes[string(executor.OutcomeInvalid)]; got != 2 {
			t.Fatalf("invalid outcomes counted: %d, want 2", got)
		}
		if upCalls(after, "everything") != upCalls(before, "everything") {
			t.Fatalf("an invalid call was forwarded to everything")
		}
	})

	t.Run("arguments optional", func(t *testing.T) {
		// As in tools/call, call_tool's arguments may be left out: {} is sent.
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "memory__read_graph"})
		if res.IsError {
			t.Fatalf("read_graph without arguments: %s", text(res))
		}
		// The tool's own schema still applies to the {}.
		res = call(t, cs, rank.CallToolName, map[string]any{"name": "everything__get-sum"})
		sc, _ := json.Marshal(res.StructuredContent)
		if !res.IsError || !strings.Contains(string(sc), `"tool":"everything__get-sum"`) || !strings.Contains(string(sc), `"rule":"required"`) {
			t.Fatalf("get-sum without arguments: %s", sc)
		}
	})

	t.Run("unknown tool", func(t *testing.T) {
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "nope__nothing", "arguments": map[string]any{}})
		if !res.IsError || !strings.Contains(text(res), "unknown tool") {
			t.Fatalf("unknown tool: %s", text(res))
		}
		res = call(t, cs, rank.CallToolName, map[string]any{"arguments": map[string]any{}})
		if !res.IsError || !strings.Contains(text(res), `missing property 'name'`) {
			t.Fatalf("missing name: %s", text(res))
		}
		res = call(t, cs, rank.FindToolName, map[string]any{"query": ""})
		if !res.IsError {
			t.Fatalf("empty query accepted")
		}
	})

	t.Run("stats resource", func(t *testing.T) {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: StatsURI})
		if err != nil {
			t.Fatal(err)
		}
		var st Stats
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &st); err != nil {
			t.Fatal(err)
		}
		if st.FindTool.Count == 0 || st.CallTool.Count == 0 || len(st.Upstreams) != 3 || st.Tools.Exposed != 3 {
			t.Fatalf("stats: %+v", st)
		}
		if st.CallTool.Outcomes[string(executor.OutcomeInvalid)] == 0 || st.CallTool.Outcomes[string(executor.OutcomeRefused)] == 0 {
			t.Fatalf("outcomes: %v", st.CallTool.Outcomes)
		}
	})
}

func upCalls(s Stats, name string) int {
	for _, u := range s.Upstreams {
		if u.Name == name {
			return u.Calls
		}
	}
	return -1
}

// TestAllowDestructive: with the option on, destructive tools are found and run.
func TestAllowDestructive(t *testing.T) {
	mem := peerBin(t, "mcp-server-memory")
	dir := t.TempDir()
	p := startProxy(t, &Config{AllowDestructive: true, Separator: ".", Upstreams: []Upstream{
		{Name: "mem", Command: mem, Env: peerEnv(mem, map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "m.jsonl")})},
	}})
	cs := connectMemory(t, p, "")
	if got := find(t, cs, "delete entities", 3); !slices.Contains(got, "mem.delete_entities") {
		t.Fatalf("find_tool = %v, want mem.delete_entities", got)
	}
	res := call(t, cs, rank.CallToolName, map[string]any{"name": "mem.delete_entities", "arguments": map[string]any{"entityNames": []string{"nobody"}}})
	if res.IsError {
		t.Fatalf("delete_entities: %s", text(res))
	}
}

// TestExposeTop: the meta-tools are hidden and the top K tools served in full.
func TestExposeTop(t *testing.T) {
	ups, _ := realPeers(t)
	p := startProxy(t, &Config{Upstreams: ups[:2], Expose: Exposure{Mode: "top", TopK: 3, Query: "read a text file from disk"}})
	cs := connectMemory(t, p, "")
	names := listNames(t, cs)
	if len(names) != 3 || slices.Contains(names, rank.FindToolName) || !slices.Contains(names, "filesystem__read_text_file") {
		t.Fatalf("tools/list = %v", names)
	}
	res := call(t, cs, "filesystem__read_text_file", map[string]any{"path": "relative/nowhere"})
	if !res.IsError { // the upstream refuses a path outside its directory
		t.Fatalf("expected the upstream's error, got %s", text(res))
	}
	// The meta-tools are not served here, and the answer says what is.
	for _, name := range []string{rank.FindToolName, rank.CallToolName} {
		res = call(t, cs, name, map[string]any{"query": "read a file"})
		var me metatool.MetaError
		if err := json.Unmarshal([]byte(text(res)), &me); err != nil || !res.IsError {
			t.Fatalf("%s in top mode: %v %s", name, err, text(res))
		}
		if me.Outcome != executor.OutcomeInvalid || !strings.Contains(me.Error, "lists only the tools that best fit its configured task (top 3") ||
			strings.Contains(text(res), "not meta-tools") || !slices.Contains(me.DidYouMean, "filesystem__read_text_file") || len(me.DidYouMean) != 3 {
			t.Fatalf("%s in top mode: %s", name, text(res))
		}
	}
	if got := p.Stats(context.Background()).CallTool.Outcomes["invalid"]; got != 2 {
		t.Fatalf("invalid outcomes: %d, want 2", got)
	}
}

// TestCrashHangAndListChanged uses the test binary as a misbehaving upstream
// next to a healthy one.
func TestCrashHangAndListChanged(t *testing.T) {
	every := peerBin(t, "mcp-server-everything")
	p := startProxy(t, &Config{Timeout: 1500 * time.Millisecond, Upstreams: []Upstream{
		testUpstream(t, "flaky"),
		{Name: "everything", Command: every, Env: peerEnv(every, nil)},
	}})
	cs := connectMemory(t, p, "")

	st := p.Stats(context.Background())
	flaky := st.Upstreams[0]
	if len(flaky.Refused) != 1 || flaky.Refused[0].Tool != "bad_schema" {
		t.Fatalf("bad_schema should be refused and counted: %+v", flaky)
	}
	if _, ok := p.Registry().Get("flaky__bad_schema"); ok {
		t.Fatalf("bad_schema was imported")
	}

	healthy := func() {
		t.Helper()
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "everything__get-sum", "arguments": map[string]any{"a": 1, "b": 1}})
		if res.IsError {
			t.Fatalf("healthy upstream failed: %s", text(res))
		}
	}

	t.Run("slow call times out", func(t *testing.T) {
		start := time.Now()
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "flaky__sleep", "arguments": map[string]any{"ms": 10000}})
		if !res.IsError || !strings.Contains(text(res), "timed out") {
			t.Fatalf("slow call: %s", text(res))
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("timeout took %v", d)
		}
		healthy()
		// The slow upstream still answers pings, so it is kept.
		res = call(t, cs, rank.CallToolName, map[string]any{"name": "flaky__sleep", "arguments": map[string]any{"ms": 1}})
		if res.IsError {
			t.Fatalf("fast call after a timeout: %s", text(res))
		}
	})

	t.Run("killed mid-session restarts on next use", func(t *testing.T) {
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "flaky__crash", "arguments": map[string]any{}})
		// The crash closes the upstream's stdout (EOF) before the SDK
		// reports the connection closed: still "went down", never "refused".
		// What the upstream wrote on stderr goes to the log, not to the model.
		for _, want := range []string{`upstream "flaky" went down during the call to "crash"`, "restarts on next use"} {
			if !res.IsError || !strings.Contains(text(res), want) {
				t.Fatalf("crash: %s; want %q in it", text(res), want)
			}
		}
		if strings.Contains(text(res), "crashing on request") {
			t.Fatalf("the upstream's stderr reached the result: %s", text(res))
		}
		if strings.Contains(text(res), "refused") {
			t.Fatalf("a crash is not a refusal: %s", text(res))
		}
		if sc, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(sc), `"outcome":"tool_error"`) {
			t.Fatalf("crash outcome: %s", sc)
		}
		healthy()
		waitFor(t, func() bool { return p.Stats(context.Background()).Upstreams[0].State == StateDown })
		res = call(t, cs, rank.CallToolName, map[string]any{"name": "flaky__sleep", "arguments": map[string]any{"ms": 1}})
		if res.IsError || text(res) != "done" {
			t.Fatalf("call after crash: %s", text(res))
		}
		u := p.Stats(context.Background()).Upstreams[0]
		if u.Connects != 2 || u.Crashes != 1 || u.State != StateReady {
			t.Fatalf("after restart: %+v", u)
		}
	})

	t.Run("a stuck handler times out, the upstream stays", func(t *testing.T) {
		// hang blocks one handler; pings still answer, so the session is kept.
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "flaky__hang", "arguments": map[string]any{}})
		if !res.IsError || !strings.Contains(text(res), "timed out") {
			t.Fatalf("hang: %s", text(res))
		}
		healthy()
		if u := p.Stats(context.Background()).Upstreams[0]; u.State != StateReady {
			t.Fatalf("upstream dropped after one stuck handler: %+v", u)
		}
	})

	t.Run("a frozen upstream is dropped and restarted", func(t *testing.T) {
		connects := p.Stats(context.Background()).Upstreams[0].Connects
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "flaky__freeze", "arguments": map[string]any{}})
		if !res.IsError || !strings.Contains(text(res), "timed out") {
			t.Fatalf("freeze: %s", text(res))
		}
		healthy()
		waitFor(t, func() bool { return p.Stats(context.Background()).Upstreams[0].State == StateDown })
		res = call(t, cs, rank.CallToolName, map[string]any{"name": "flaky__sleep", "arguments": map[string]any{"ms": 1}})
		if res.IsError || text(res) != "done" {
			t.Fatalf("call after freeze: %s", text(res))
		}
		if u := p.Stats(context.Background()).Upstreams[0]; u.Connects != connects+1 {
			t.Fatalf("not restarted: %+v", u)
		}
	})

	t.Run("list_changed refreshes the index", func(t *testing.T) {
		if got := find(t, cs, "zebra stripes", 3); slices.Contains(got, "flaky__zebra_stripes_counter") {
			t.Fatalf("tool present too early")
		}
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "flaky__grow", "arguments": map[string]any{}})
		if res.IsError {
			t.Fatalf("grow: %s", text(res))
		}
		waitFor(t, func() bool {
			_, added := p.Registry().Get("flaky__zebra_stripes_counter")
			_, kept := p.Registry().Get("flaky__grow")
			return added && !kept
		})
		if got := find(t, cs, "zebra stripes", 3); !slices.Contains(got, "flaky__zebra_stripes_counter") {
			t.Fatalf("find_tool after list_changed = %v", got)
		}
		res = call(t, cs, rank.CallToolName, map[string]any{"name": "flaky__zebra_stripes_counter", "arguments": map[string]any{}})
		if res.IsError || text(res) != "42" {
			t.Fatalf("new tool: %s", text(res))
		}
	})
}

// TestCrashDuringRead: an upstream that exits while reading a resource
// makes the read fail saying it went down (its last stderr line goes to the
// log only), and the next read restarts it.
func TestCrashDuringRead(t *testing.T) {
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	cs := connectMemory(t, p, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "zoo://t__animals/phoenix"})
	if err == nil || !strings.Contains(err.Error(), `upstream "t" went down during resources/read`) || strings.Contains(err.Error(), "burning on read") {
		t.Fatalf("read of a crashing resource: %v; want it to say it went down, without the upstream's stderr", err)
	}
	waitFor(t, func() bool { return p.Stats(context.Background()).Upstreams[0].State == StateDown })
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "zoo://t__animals/lion"})
	if err != nil || read.Contents[0].Text != "mane" {
		t.Fatalf("read after the crash: %v %v", read, err)
	}
}

// TestUnreachableUpstream: a command that cannot start does not stop the proxy.
func TestUnreachableUpstream(t *testing.T) {
	p := startProxy(t, &Config{Upstreams: []Upstream{
		{Name: "ghost", Command: filepath.Join(t.TempDir(), "no-such-server")},
		testUpstream(t, "ok"),
	}})
	cs := connectMemory(t, p, "")
	st := p.Stats(context.Background())
	if st.Upstreams[0].State != StateDown || st.Upstreams[0].LastError == "" || st.Upstreams[1].State != StateReady {
		t.Fatalf("stats: %+v", st.Upstreams)
	}
	res := call(t, cs, rank.CallToolName, map[string]any{"name": "ghost__anything", "arguments": map[string]any{}})
	if !res.IsError || !strings.Contains(text(res), "ghost") {
		t.Fatalf("unknown tool of a down upstream: %s", text(res))
	}
	res = call(t, cs, rank.CallToolName, map[string]any{"name": "ok__sleep", "arguments": map[string]any{"ms": 1}})
	if res.IsError {
		t.Fatalf("healthy upstream: %s", text(res))
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 15s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// "top" mode asks for at most as many tools as a ranking returns.
func TestExposeTopKBounds(t *testing.T) {
	for _, k := range []int{0, rank.MaxFindLimit + 1} {
		c := &Config{Upstreams: []Upstream{{Name: "a", Command: "x"}}, Expose: Exposure{Mode: "top", TopK: k, Query: "q"}}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "expose.topK must be 1..50") {
			t.Errorf("topK %d: %v", k, err)
		}
	}
	c := &Config{Upstreams: []Upstream{{Name: "a", Command: "x"}}, Expose: Exposure{Mode: "top", TopK: rank.MaxFindLimit, Query: "q"}}
	if err := c.Validate(); err != nil {
		t.Errorf("topK %d: %v", rank.MaxFindLimit, err)
	}
}

// An error result always says what went wrong, even when the executor's
// result carries no text of its own.
func TestRenderNeverAnEmptyError(t *testing.T) {
	p := &Proxy{}
	out := p.render(executor.Result{Tool: "t"}, errors.New("boom: the meta entry could not be built"))
	if !out.IsError || len(out.Content) == 0 || out.Content[0].(*mcp.TextContent).Text != "boom: the meta entry could not be built" {
		t.Fatalf("render: %+v", out)
	}
}

// find_tool with nothing to offer says why instead of a bare empty list.
func TestRenderEmptyFindSaysWhy(t *testing.T) {
	p := &Proxy{}
	out := p.render(executor.Result{Tool: rank.FindToolName, Value: []metatool.FoundTool{}}, nil)
	if out.IsError || !strings.Contains(out.Content[0].(*mcp.TextContent).Text, `"note":"no tool this proxy would run matched`) {
		t.Fatalf("render: %+v", out.Content[0])
	}
	out = p.render(executor.Result{Tool: rank.FindToolName, Value: []metatool.FoundTool{{Name: "a"}}}, nil)
	if strings.Contains(out.Content[0].(*mcp.TextContent).Text, "note") {
		t.Fatalf("a list with tools needs no note: %+v", out.Content[0])
	}
}

// The stats keep one shape: upstreams is [] (not null) with none, and
// callTool.outcomes has every outcome of the executor's vocabulary, 0
// included, before any call and after some.
func TestStatsShape(t *testing.T) {
	p := startProxy(t, nil)
	outcomes := func(st Stats) map[string]json.RawMessage {
		t.Helper()
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Upstreams json.RawMessage `json:"upstreams"`
			CallTool  struct {
				Outcomes map[string]json.RawMessage `json:"outcomes"`
			} `json:"callTool"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		if string(raw.Upstreams) != "[]" {
			t.Errorf("upstreams = %s, want []", raw.Upstreams)
		}
		return raw.CallTool.Outcomes
	}
	want := []string{"canceled", "invalid", "ok", "refused", "timeout", "tool_error"}
	got := outcomes(p.Stats(context.Background()))
	keys := make([]string, 0, len(got))
	for k, v := range got {
		keys = append(keys, k)
		if string(v) != "0" {
			t.Errorf("outcome %s = %s before any call", k, v)
		}
	}
	slices.Sort(keys)
	if !slices.Equal(keys, want) {
		t.Fatalf("outcome keys %v, want %v", keys, want)
	}
	p.CallTool(context.Background(), "nope", nil)
	got = outcomes(p.Stats(context.Background()))
	if len(got) != len(want) || string(got["invalid"]) != "1" || string(got["ok"]) != "0" {
		t.Fatalf("outcomes after an unknown tool: %v", got)
	}
}

// A keep-list name that matches no tool is named in a warning, with why,
// instead of being left out of tools/list in silence.
func TestKeepListNameMatchingNoTool(t *testing.T) {
	var logs syncBuffer
	p := startProxyWith(t, &Config{
		Upstreams: []Upstream{testUpstream(t, "t"), {Name: "ghost", Command: filepath.Join(t.TempDir(), "no-such-server")}},
		Keep:      []string{"t__sleep", "t__slep", "t__bad_schema", "ghost__x", "nope__x"},
	}, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	out := logs.String()
	for _, want := range []string{
		`tool=t__slep reason="upstream \"t\" lists no tool \"slep\"; check the spelling"`,
		`tool=t__bad_schema reason="upstream \"t\" has it, but it was refused at import`,
		`tool=ghost__x reason="its upstream \"ghost\" is not running`,
		`tool=nope__x reason="no upstream or catalog has a tool of this name`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no warning %s in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "tool=t__sleep ") {
		t.Errorf("a keep-list name that matches was warned about:\n%s", out)
	}
	if names := listNames(t, connectMemory(t, p, "")); !slices.Contains(names, "t__sleep") || len(names) != 3 {
		t.Fatalf("tools/list = %v", names)
	}
}
