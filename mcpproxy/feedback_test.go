package mcpproxy

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/internal/testing/redistest"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/rank/feedbackstore"
)

// echoQuery is the query every echo tool matches equally (they share one
// description): their order is the ranking's tie-break until feedback
// speaks.
const echoQuery = "echo the arguments received"

// records reads the feedback log spec names.
func records(t *testing.T, spec string) []feedbackstore.Record {
	t.Helper()
	st, err := feedbackstore.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []feedbackstore.Record
	if _, err := st.Read(context.Background(), feedbackstore.Cursor{}, func(r feedbackstore.Record) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// selections is toolselect_mcp_feedback_selections_total{result} on p's
// /metrics registry.
func selections(t *testing.T, p *Proxy, result string) float64 {
	t.Helper()
	mfs, err := p.metrics.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "toolselect_mcp_feedback_selections_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// Two replicas on one Redis (--state): a selection made through one (its
// find_tool, then call_tool of the last tool it returned) is recorded in
// the state's "toolselect:feedback" list and reorders find_tool on the
// other within the re-read interval.
func TestFeedbackSharedByReplicas(t *testing.T) {
	addr := redistest.Start(t)
	state := "redis://" + addr + "/0"
	ups := []Upstream{echoUpstream(t, "ops", "alpha", "beta", "gamma")}
	a := startProxy(t, &Config{Upstreams: ups, State: state})
	b := startProxy(t, &Config{Upstreams: ups, State: state})
	ca, cb := connectMemory(t, a, ""), connectMemory(t, b, "")
	before := find(t, cb, echoQuery, 3)
	if len(before) != 3 {
		t.Fatalf("find_tool on the second replica: %v", before)
	}
	got := find(t, ca, echoQuery, 3)
	pick := got[len(got)-1]
	if pick == before[0] {
		t.Fatalf("the test needs a tool that is not first already: %v", got)
	}
	if r := call(t, ca, rank.CallToolName, map[string]any{"name": pick, "arguments": map[string]any{}}); r.IsError {
		t.Fatalf("call_tool %s: %s", pick, text(r))
	}
	selected := time.Now()
	for {
		now := find(t, cb, echoQuery, 3)
		if now[0] == pick {
			t.Logf("the other replica ranks %s first %v after the selection", pick, time.Since(selected))
			break
		}
		if time.Since(selected) > 3*time.Second {
			t.Fatalf("the selection of %s on one replica did not reach the other: %v", pick, now)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The log is the one `toolselect rank --feedback redis://...` reads.
	recs := records(t, state)
	if len(recs) != 1 || recs[0].Query != echoQuery || !slices.Equal(recs[0].Tools, []string{pick}) {
		t.Fatalf("the shared log holds %+v", recs)
	}
	// The find_tool calls of the other replica's own session selected
	// nothing: nothing more was recorded.
	if n := selections(t, b, "recorded"); n != 0 {
		t.Fatalf("the replica that only found recorded %v selections", n)
	}
}

// The attacker's side: one session repeating find_tool / call_tool pairs
// records feedbackPerSession selections at most (the rest are counted as
// limited); a call that was refused or invalid records nothing; a file log
// is private.
func TestFeedbackBoundedPerSessionAndOnlyForCallsThatRan(t *testing.T) {
	log := filepath.Join(t.TempDir(), "feedback.jsonl")
	p := startProxy(t, &Config{Upstreams: []Upstream{echoUpstream(t, "ops", "alpha", "!danger")}, Feedback: log}) // Close (idempotent) waits for the appends below
	cs := connectMemory(t, p, "")
	// Invalid arguments (the schema allows paths under /safe/ only) and a
	// destructive tool the proxy refuses: neither ran, nothing is learned.
	if got := find(t, cs, "echo the arguments for a path", 5); !slices.Equal(got, []string{"ops__alpha"}) {
		t.Fatalf("find_tool: %v", got)
	}
	if r := call(t, cs, rank.CallToolName, map[string]any{"name": "ops__alpha", "arguments": map[string]any{"path": "/etc/passwd"}}); !r.IsError {
		t.Fatalf("invalid arguments ran: %s", text(r))
	}
	if r := call(t, cs, "ops__danger", map[string]any{}); !r.IsError {
		t.Fatalf("a destructive tool ran: %s", text(r))
	}
	if r := call(t, cs, rank.CallToolName, map[string]any{"name": "ops__danger", "arguments": map[string]any{}}); !r.IsError {
		t.Fatalf("a destructive tool ran through call_tool: %s", text(r))
	}
	const flood = 60
	for i := range flood {
		q := "echo the arguments, take " + itoa(i)
		if got := find(t, cs, q, 5); len(got) != 1 {
			t.Fatalf("find_tool %q: %v", q, got)
		}
		// Half directly, half through call_tool: both are selections.
		name, args := rank.CallToolName, map[string]any{"name": "ops__alpha", "arguments": map[string]any{}}
		if i%2 == 1 {
			name, args = "ops__alpha", map[string]any{}
		}
		if r := call(t, cs, name, args); r.IsError {
			t.Fatalf("call %d: %s", i, text(r))
		}
	}
	limited := selections(t, p, "limited")
	p.Close() // waits for the appends
	recs := records(t, log)
	if len(recs) != feedbackPerSession {
		t.Fatalf("one session recorded %d selections (bound %d)", len(recs), feedbackPerSession)
	}
	for _, r := range recs {
		if !strings.HasPrefix(r.Query, "echo the arguments, take ") || !slices.Equal(r.Tools, []string{"ops__alpha"}) {
			t.Fatalf("a record no successful selection made: %+v", r)
		}
	}
	if limited != flood-feedbackPerSession {
		t.Fatalf("limited selections counted: %v, want %d", limited, flood-feedbackPerSession)
	}
	fi, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("the log of users' queries is readable by others: %v", fi.Mode())
	}
}

// Feedback only reorders what find_tool may show: a tool one replica
// selected (it runs destructive tools) stays hidden on a replica whose
// policy refuses it, however well the shared log says it fits.
func TestFeedbackNeverShowsWhatPolicyHides(t *testing.T) {
	addr := redistest.Start(t)
	state := "redis://" + addr + "/0"
	ups := []Upstream{echoUpstream(t, "ops", "alpha", "!danger")}
	open := startProxy(t, &Config{Upstreams: ups, State: state, Destructive: destructiveAllow})
	strict := startProxy(t, &Config{Upstreams: ups, State: state})
	co := connectMemory(t, open, "")
	if got := find(t, co, echoQuery, 5); !slices.Contains(got, "ops__danger") {
		t.Fatalf("the open replica does not find the destructive tool: %v", got)
	}
	if r := call(t, co, rank.CallToolName, map[string]any{"name": "ops__danger", "arguments": map[string]any{}}); r.IsError {
		t.Fatalf("call_tool danger on the open replica: %s", text(r))
	}
	deadline := time.Now().Add(3 * time.Second)
	for strict.learn.l.Feedback().Holds(echoQuery, "ops__danger") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the strict replica did not learn the selection")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := find(t, connectMemory(t, strict, ""), echoQuery, 5); slices.Contains(got, "ops__danger") {
		t.Fatalf("feedback made a refused tool findable: %v", got)
	}
}

// Without --state the proxy learns nothing unless told where; "off" turns
// the shared log off; a URL of another scheme is refused.
func TestFeedbackSetting(t *testing.T) {
	if (&Config{}).learns() || (&Config{State: "redis://x:1/0", Feedback: "off"}).learns() {
		t.Fatal("learning on by default without a store, or despite off")
	}
	if !(&Config{State: "redis://x:1/0"}).learns() || !(&Config{Feedback: "f.jsonl"}).learns() {
		t.Fatal("learning off with a store")
	}
	err := (&Config{Feedback: "http://example.com/log"}).Validate()
	if err == nil || !strings.Contains(err.Error(), "feedback") {
		t.Fatalf("Validate: %v", err)
	}
	// A log anyone may write would let anyone steer find_tool: refused at
	// start, as a log that does not read; Redis away is no error.
	dir := t.TempDir()
	open := filepath.Join(dir, "open.jsonl")
	os.WriteFile(open, nil, 0o600)
	os.Chmod(open, 0o666)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("not json\n"), 0o600)
	for file, want := range map[string]string{open: "chmod go-w", bad: "line 1"} {
		if _, err := New(&Config{Feedback: file}, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New with feedback %s: %v, want %q", filepath.Base(file), err, want)
		}
	}
	p, err := New(&Config{Feedback: "redis://127.0.0.1:1/0"}, nil)
	if err != nil {
		t.Fatalf("Redis away at start: %v", err)
	}
	p.Close()
}

// Over streamable HTTP a session (protocol up to 2025-11-25) pairs its
// find_tool and its call as over stdio; stateless requests (2026-07-28, no
// session) never share one, so they teach nothing.
func TestFeedbackOverHTTPSessions(t *testing.T) {
	log := filepath.Join(t.TempDir(), "feedback.jsonl")
	p := startProxy(t, &Config{Upstreams: []Upstream{echoUpstream(t, "ops", "alpha", "beta")}, Feedback: log}) // Close (idempotent) waits for the appends below
	srv := httptest.NewServer(p.HTTPHandler(nil))
	defer srv.Close()
	ctx := context.Background()
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		c := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		q := "echo the arguments over " + version
		if got := find(t, cs, q, 5); len(got) != 2 {
			t.Fatalf("%s: find_tool: %v", version, got)
		}
		if r := call(t, cs, "ops__beta", map[string]any{}); r.IsError {
			t.Fatalf("%s: %s", version, text(r))
		}
		cs.Close()
	}
	p.Close()
	recs := records(t, log)
	if len(recs) != 1 || recs[0].Query != "echo the arguments over 2025-11-25" || !slices.Equal(recs[0].Tools, []string{"ops__beta"}) {
		t.Fatalf("recorded %+v, want the session's selection alone", recs)
	}
}

// The proxy is a front door of testdata/feedback-doors too: find_tool
// over its catalog, with its log, ranks as the Go API ranks with the same
// log (rank.For with a feedbackstore learner), names and scores.
func TestFeedbackRanksAsTheOtherDoors(t *testing.T) {
	doors := filepath.Join("..", "testdata", "feedback-doors")
	log, err := os.ReadFile(filepath.Join(doors, "past.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(t.TempDir(), "past.jsonl")
	if err := os.WriteFile(store, log, 0o600); err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Join(doors, "tools.jsonl")
	p := startProxy(t, &Config{Catalogs: []string{catalog}, Feedback: store, Destructive: destructiveAllow})
	ctx := context.Background()
	l, err := feedbackstore.OpenLearner(ctx, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	data, err := os.ReadFile(filepath.Join(doors, "queries.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lifted := 0
	for q := range strings.Lines(string(data)) {
		if q = strings.TrimSpace(q); q == "" {
			continue
		}
		found, err := p.FindTool(ctx, q, 5)
		if err != nil {
			t.Fatal(err)
		}
		picks, err := rank.For(p.Registry()).Rank(ctx, q, &rank.Options{MaxCandidates: 5, Feedback: l.Feedback()})
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, f := range found {
			if f.PrerequisiteOf == "" {
				got = append(got, f.Name+" "+strconv.FormatFloat(f.Score, 'f', 3, 64))
			}
		}
		for _, pk := range picks {
			want = append(want, pk.Entry.Name()+" "+strconv.FormatFloat(min(max(pk.Score, 0), 1), 'f', 3, 64))
			if pk.Provenance.Scorer == "bm25+feedback" && strings.Contains(pk.Reason, "past task") {
				lifted++
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: find_tool %v, the Go API %v", q, got, want)
		}
	}
	if lifted == 0 {
		t.Fatal("no query was lifted by the log: the comparison says nothing about feedback")
	}
}
