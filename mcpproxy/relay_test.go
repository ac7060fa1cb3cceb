package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/toolselect/toolselect/rank"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notes collects what the proxy sends a client besides replies.
type notes struct {
	mu       sync.Mutex
	updated  []string
	progress []*mcp.ProgressNotificationParams
	logs     []*mcp.LoggingMessageParams
	changed  int
	// tools counts notifications/tools/list_changed.
	tools int
}

func (n *notes) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			n.mu.Lock()
			n.updated = append(n.updated, r.Params.URI)
			n.mu.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			n.mu.Lock()
			n.progress = append(n.progress, r.Params)
			n.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			n.mu.Lock()
			n.logs = append(n.logs, r.Params)
			n.mu.Unlock()
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			n.mu.Lock()
			n.changed++
			n.mu.Unlock()
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			n.mu.Lock()
			n.changed += 100
			n.mu.Unlock()
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			n.mu.Lock()
			n.tools++
			n.mu.Unlock()
		},
	}
}

func (n *notes) snapshot() (updated []string, progress []*mcp.ProgressNotificationParams, logs []*mcp.LoggingMessageParams) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.updated), slices.Clone(n.progress), slices.Clone(n.logs)
}

// connectWith connects an SDK client with handlers to the proxy in memory.
func connectWith(t *testing.T, p *Proxy, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectSession(t, p, opts, "2025-11-25")
}

// TestRelayRealPeers: resources, templates, prompts, completion,
// subscriptions, progress and log messages of server-everything reach the
// client through the proxy, next to filesystem and memory.
func TestRelayRealPeers(t *testing.T) {
	ups, _ := realPeers(t)
	p := startProxy(t, &Config{Upstreams: ups, Timeout: 30 * time.Second})
	var n notes
	cs := connectWith(t, p, n.options())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	t.Run("resources listed and read", func(t *testing.T) {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if !slices.Contains(uris, StatsURI) {
			t.Fatalf("stats resource missing: %v", uris)
		}
		var doc string
		for _, u := range uris {
			if strings.HasPrefix(u, "demo://everything__resource/") {
				doc = u
				break
			}
		}
		if doc == "" {
			t.Fatalf("no namespaced server-everything resource in %v", uris)
		}
		read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: doc})
		if err != nil {
			t.Fatal(err)
		}
		if len(read.Contents) == 0 || read.Contents[0].URI != doc || read.Contents[0].Text == "" && len(read.Contents[0].Blob) == 0 {
			t.Fatalf("read %s: %+v", doc, read.Contents)
		}
		// A URI that names no upstream is the spec's "resource not found"
		// (-32602 since SEP-2164, the URI in data).
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/static/document/architecture.md"})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(string(je.Data), "architecture.md") {
			t.Fatalf("un-namespaced read: %v", err)
		}
	})

	t.Run("resource links in a tool result are readable", func(t *testing.T) {
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "everything__get-resource-links", "arguments": map[string]any{"count": 2}})
		var links []string
		for _, c := range res.Content {
			if l, ok := c.(*mcp.ResourceLink); ok {
				links = append(links, l.URI)
			}
		}
		if len(links) == 0 {
			t.Fatalf("no resource links: %s", text(res))
		}
		for _, l := range links {
			if !strings.Contains(l, "everything__") {
				t.Fatalf("link %s not mapped to the proxy's namespace", l)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: l}); err != nil {
				t.Fatalf("reading link %s: %v", l, err)
			}
		}
	})

	t.Run("templates listed and read", func(t *testing.T) {
		res, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var tmpl string
		for _, rt := range res.ResourceTemplates {
			if strings.HasPrefix(rt.URITemplate, "demo://everything__resource/dynamic/text/") {
				tmpl = rt.URITemplate
			}
		}
		if tmpl == "" {
			t.Fatalf("no namespaced text template in %+v", res.ResourceTemplates)
		}
		uri := tmpl[:strings.Index(tmpl, "{")] + "7"
		read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		if len(read.Contents) != 1 || read.Contents[0].URI != uri || !strings.Contains(read.Contents[0].Text, "7") {
			t.Fatalf("template read %s: %+v", uri, read.Contents[0])
		}
	})

	t.Run("prompts listed, fetched and completed", func(t *testing.T) {
		res, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, pr := range res.Prompts {
			names = append(names, pr.Name)
		}
		for _, want := range []string{"everything__simple-prompt", "everything__args-prompt", "everything__completable-prompt"} {
			if !slices.Contains(names, want) {
				t.Fatalf("prompt %s missing from %v", want, names)
			}
		}
		got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "everything__args-prompt", Arguments: map[string]string{"city": "Lyon", "state": "Rhône"}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(got.Messages)
		if !strings.Contains(string(b), "Lyon") {
			t.Fatalf("args-prompt: %s", b)
		}
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "simple-prompt"}); err == nil {
			t.Fatalf("an un-namespaced prompt name was accepted")
		}
		comp, err := cs.Complete(ctx, &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "everything__completable-prompt"},
			Argument: mcp.CompleteParamsArgument{Name: "department", Value: "S"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(comp.Completion.Values, []string{"Sales", "Support"}) {
			t.Fatalf("completion: %v", comp.Completion.Values)
		}
	})

	t.Run("subscribed, update relayed, unsubscribed", func(t *testing.T) {
		uri := "demo://everything__resource/static/document/architecture.md"
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		// server-everything sends updates of subscribed resources once
		// this tool is on (one at once, then every 5 s).
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "everything__toggle-subscriber-updates", "arguments": map[string]any{}})
		if res.IsError {
			t.Fatalf("toggle-subscriber-updates: %s", text(res))
		}
		waitFor(t, func() bool { u, _, _ := n.snapshot(); return slices.Contains(u, uri) })
		if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		if got := p.relay.subscribed(p.byName["everything"]); len(got) != 0 {
			t.Fatalf("upstream still subscribed to %v", got)
		}
	})

	t.Run("progress of trigger-long-running-operation", func(t *testing.T) {
		params := &mcp.CallToolParams{Name: rank.CallToolName, Arguments: map[string]any{
			"name": "everything__trigger-long-running-operation", "arguments": map[string]any{"duration": 0.6, "steps": 3}}}
		params.SetProgressToken("client-token-1")
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			t.Fatalf("long running operation: %v %v", err, res)
		}
		steps := func() []float64 {
			_, prog, _ := n.snapshot()
			var steps []float64
			for _, pr := range prog {
				if pr.ProgressToken == "client-token-1" && pr.Total == 3 {
					steps = append(steps, pr.Progress)
				}
			}
			return steps
		}
		// The last notification may be handled after the reply.
		waitFor(t, func() bool { return slices.Equal(steps(), []float64{1, 2, 3}) })
	})

	t.Run("log messages of an upstream call", func(t *testing.T) {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
		// The tool logs once at once, during the call, then every 5 s.
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "everything__toggle-simulated-logging", "arguments": map[string]any{}})
		if res.IsError {
			t.Fatalf("toggle-simulated-logging: %s", text(res))
		}
		waitFor(t, func() bool {
			_, _, logs := n.snapshot()
			for _, l := range logs {
				if strings.HasPrefix(l.Logger, "everything") && strings.Contains(l.Data.(string), "message") {
					return true
				}
			}
			return false
		})
		call(t, cs, rank.CallToolName, map[string]any{"name": "everything__toggle-simulated-logging", "arguments": map[string]any{}})
	})

	t.Run("tools/call of any name", func(t *testing.T) {
		// Not listed (no keep-list), found with find_tool: callable by name.
		res := call(t, cs, "everything__get-sum", map[string]any{"a": 19, "b": 23})
		if res.IsError || !strings.Contains(text(res), "42") {
			t.Fatalf("direct call of a found tool: %s", text(res))
		}
		// An unknown name is a tool result with isError, not a JSON-RPC error.
		res = call(t, cs, "everything__get-summ", map[string]any{"a": 1})
		sc, _ := json.Marshal(res.StructuredContent)
		if !res.IsError || !strings.Contains(text(res), "unknown tool") || !strings.Contains(string(sc), `"everything__get-sum"`) {
			t.Fatalf("unknown tool: %s / %s", text(res), sc)
		}
	})

	t.Run("filesystem and memory add no foreign names", func(t *testing.T) {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Resources {
			if r.URI != StatsURI && !strings.Contains(r.URI, "everything__") && !strings.Contains(r.URI, "filesystem__") && !strings.Contains(r.URI, "memory__") {
				t.Errorf("resource %s is not namespaced", r.URI)
			}
		}
	})
}

// TestCancellationReachesUpstream: a client's cancellation of a call_tool
// cancels the upstream handler (a Go SDK server in its own process that
// counts the cancellations it saw), and server-everything's progress for
// the cancelled call stops being relayed.
func TestCancellationReachesUpstream(t *testing.T) {
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}, Timeout: 30 * time.Second})
	cs := connectWith(t, p, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: rank.CallToolName, Arguments: map[string]any{"name": "t__sleep", "arguments": map[string]any{"ms": 20000}}})
	if err == nil {
		t.Fatalf("the cancelled call returned a result")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancellation took %v", d)
	}
	waitFor(t, func() bool {
		res := call(t, cs, rank.CallToolName, map[string]any{"name": "t__cancelled", "arguments": map[string]any{}})
		return text(res) == "1"
	})
}

// TestListChangedRelayed: an upstream that adds a prompt and a resource, or
// a tool, sends list_changed; the proxy re-lists them, serves them
// namespaced and tells its client, also of the tools in "meta" mode, where
// tools/list itself still shows find_tool and call_tool but find_tool's
// answers changed.
func TestListChangedRelayed(t *testing.T) {
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	var n notes
	cs := connectWith(t, p, n.options())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if res := call(t, cs, rank.CallToolName, map[string]any{"name": "t__add_prompt_and_resource", "arguments": map[string]any{}}); res.IsError {
		t.Fatalf("add: %s", text(res))
	}
	waitFor(t, func() bool { n.mu.Lock(); defer n.mu.Unlock(); return n.changed >= 101 })
	n.mu.Lock()
	tools := n.tools
	n.mu.Unlock()
	if tools != 0 {
		t.Fatalf("%d tools/list_changed before any tool changed", tools)
	}

	if got := find(t, cs, "zebra stripes", 3); slices.Contains(got, "t__zebra_stripes_counter") {
		t.Fatalf("find_tool found the tool before it was added: %v", got)
	}
	if res := call(t, cs, rank.CallToolName, map[string]any{"name": "t__grow", "arguments": map[string]any{}}); res.IsError {
		t.Fatalf("grow: %s", text(res))
	}
	waitFor(t, func() bool { n.mu.Lock(); defer n.mu.Unlock(); return n.tools >= 1 })
	// What a client does on the notification: list again, and search again.
	if names := listNames(t, cs); !slices.Equal(names, []string{rank.CallToolName, rank.FindToolName}) && !slices.Equal(names, []string{rank.FindToolName, rank.CallToolName}) {
		t.Fatalf("tools/list after list_changed = %v, want the meta-tools", names)
	}
	if got := find(t, cs, "zebra stripes", 3); !slices.Contains(got, "t__zebra_stripes_counter") {
		t.Fatalf("find_tool after the relayed list_changed = %v, want t__zebra_stripes_counter", got)
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "t__zebra_prompt"})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("t__zebra_prompt: %v %v", got, err)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "zoo://t__animals/zebra"})
	if err != nil || read.Contents[0].Text != "stripes" || read.Contents[0].URI != "zoo://t__animals/zebra" {
		t.Fatalf("zoo://t__animals/zebra: %v %v", read, err)
	}
}

// TestUpstreamWithoutTools: an upstream that offers prompts and resources
// but not the tools capability is served for what it offers, not treated as
// down because it has no tools/list.
func TestUpstreamWithoutTools(t *testing.T) {
	up := testUpstream(t, "owls")
	up.Env["TOOLSELECT_TEST_VARIANT"] = "no-tools"
	p := startProxy(t, &Config{Upstreams: []Upstream{up}})
	st := p.Stats(context.Background())
	if u := st.Upstreams[0]; u.State != StateReady || u.LastError != "" || u.Listed != 0 || u.Imported != 0 {
		t.Fatalf("an upstream without tools: %+v", u)
	}
	cs := connectMemory(t, p, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "owls__greet" {
		t.Fatalf("prompts/list: %v %v", prompts, err)
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "owls__greet"})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("owls__greet: %v %v", got, err)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "zoo://owls__animals/owl"})
	if err != nil || read.Contents[0].Text != "hoot" {
		t.Fatalf("zoo://owls__animals/owl: %v %v", read, err)
	}
	if names := listNames(t, cs); len(names) != 2 {
		t.Fatalf("tools/list = %v, want the meta-tools", names)
	}
	// A tool call names the upstream as up, with nothing of that name.
	res := call(t, cs, rank.CallToolName, map[string]any{"name": "owls__hoot", "arguments": map[string]any{}})
	if !res.IsError || !strings.Contains(text(res), "unknown tool") || strings.Contains(text(res), "down") {
		t.Fatalf("calling a tool of an upstream without tools: %s", text(res))
	}
}

// TestFailedListingKeepsWhatIsServed: when the upstream's prompts or
// resources cannot be listed after it announced a change, the proxy keeps
// serving what it served (as a failed tools refresh keeps the tools).
func TestFailedListingKeepsWhatIsServed(t *testing.T) {
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	var n notes
	cs := connectWith(t, p, n.options())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if res := call(t, cs, rank.CallToolName, map[string]any{"name": "t__break_lists", "arguments": map[string]any{}}); res.IsError {
		t.Fatalf("break_lists: %s", text(res))
	}
	// The upstream announced both changes; give the proxy its (failing) re-listings.
	time.Sleep(300 * time.Millisecond)
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "t__hello_prompt"})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("t__hello_prompt after a failed listing: %v %v", got, err)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "zoo://t__animals/lion"})
	if err != nil || read.Contents[0].Text != "mane" {
		t.Fatalf("zoo://t__animals/lion after a failed listing: %v %v", read, err)
	}
}

// TestProgressOverHTTP: over streamable HTTP the upstream's progress travels
// on the client request's own stream.
func TestProgressOverHTTP(t *testing.T) {
	every := peerBin(t, "mcp-server-everything")
	p := startProxy(t, &Config{Upstreams: []Upstream{{Name: "everything", Command: every, Env: peerEnv(every, nil)}}})
	srv := httptest.NewServer(p.HTTPHandler(nil))
	t.Cleanup(srv.Close)
	var n notes
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-progress", Version: "1"}, n.options()).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: rank.CallToolName, Arguments: map[string]any{
		"name": "everything__trigger-long-running-operation", "arguments": map[string]any{"duration": 0.4, "steps": 2}}}
	params.SetProgressToken(42)
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	waitFor(t, func() bool { _, prog, _ := n.snapshot(); return len(prog) == 2 })
	_, prog, _ := n.snapshot()
	for _, pr := range prog {
		if tok, ok := pr.ProgressToken.(float64); !ok || tok != 42 {
			t.Fatalf("progress token %v (%T), want the client's 42", pr.ProgressToken, pr.ProgressToken)
		}
	}
}

// Unknown prompts and completion references are -32602 errors that name
// what the client asked for: an unknown prompt in the SDK's own words
// (unknown prompt "NAME"; the spec's "Invalid prompt name" case), a
// completion reference under no upstream with the name or URI given.
func TestUnknownPromptAndCompletionErrors(t *testing.T) {
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	cs := connectMemory(t, p, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := func(what string, err error, want string) {
		t.Helper()
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || je.Message != want {
			t.Errorf("%s: %v, want -32602 %q", what, err, want)
		}
	}
	_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "nosuch"})
	check("unknown prompt", err, `unknown prompt "nosuch"`)
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "t__nosuch"})
	check("unknown prompt of an upstream", err, `unknown prompt "t__nosuch"`)
	_, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "nosuch"},
		Argument: mcp.CompleteParamsArgument{Name: "x", Value: "y"}})
	check("completion of an unknown prompt", err, `completion: prompt "nosuch" names no upstream (prompts are listed as UPSTREAM__NAME)`)
	_, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "zoo://nowhere/{x}"},
		Argument: mcp.CompleteParamsArgument{Name: "x", Value: "y"}})
	check("completion of an unknown template", err, `completion: resource template "zoo://nowhere/{x}" names no upstream (templates are listed as scheme://UPSTREAM__...)`)
}
