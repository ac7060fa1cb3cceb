package rank_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// opsRegistry is a small operations catalog.
func opsRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	obj := func(props ...string) json.RawMessage {
		m := map[string]any{}
		for _, p := range props {
			m[p] = map[string]any{"type": "string"}
		}
		b, _ := json.Marshal(map[string]any{"type": "object", "properties": m})
		return b
	}
	reg := registry.New(nil)
	deploy := registry.NewTool("deploy_release", "Deploy a released version of a service to an environment.", obj("service", "version"))
	deploy.Roles = []string{"release-manager"}
	if err := reg.RegisterAll([]registry.Tool{
		registry.NewTool("search_logs", "Search a service's application logs for errors. Returns matching lines, newest first.", obj("service", "query")),
		registry.NewTool("get_metrics", "Read a time series for a service: CPU, memory, latency or error rate.", obj("service", "metric")),
		registry.NewTool("list_incidents", "List open incidents by status and severity.", obj("status")),
		registry.NewTool("page_oncall", "Page the on-call engineer of a team.", obj("team", "message")),
		registry.NewTool("send_slack_message", "Post a message to a Slack channel so the team sees it.", obj("channel", "text")),
		registry.NewTool("get_ci_status", "Show the CI pipeline status of a branch, tag or commit in a repository.", obj("repo", "ref")),
		registry.NewTool("search_code", "Search source code in a repository by text.", obj("repo", "text")),
		registry.NewTool("rollback_release", "Roll back a service to its previous release.", obj("service")),
		deploy,
		registry.NewTool("translate_text", "Translate text between languages.", obj("text", "to")),
	}); err != nil {
		t.Fatal(err)
	}
	return reg
}

func entryNames(es []*registry.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func pickSources(picks []rank.Pick) map[string]rank.Source {
	m := map[string]rank.Source{}
	for _, p := range picks {
		m[p.Tool] = p.Provenance.Source
	}
	return m
}

// A three-step workflow: the user never mentions CI, commits or releases; the
// logs found in step 1 point at a commit, so step 2 can check its CI status,
// and the CI result points at a rollback for step 3.
func TestStepThreeStepWorkflow(t *testing.T) {
	reg := opsRegistry(t)
	r := rank.For(reg)
	ctx := context.Background()
	opts := &rank.StepOptions{Options: rank.Options{MaxCandidates: 3}}
	turns := []rank.Turn{{Role: "user", Content: "Checkout is failing with errors since 14:02: find out why in the logs and tell the team on Slack."}}

	// Step 1: only what the user's words reach.
	step1, err := r.StepTools(ctx, turns, opts)
	if err != nil {
		t.Fatal(err)
	}
	n1 := entryNames(step1)
	if !slices.Contains(n1, "search_logs") || slices.Contains(n1, "get_ci_status") || slices.Contains(n1, "rollback_release") {
		t.Fatalf("step 1 tools %v: want search_logs, not get_ci_status or rollback_release", n1)
	}

	// The model calls search_logs; its result mentions a commit on a branch.
	turns = append(turns,
		rank.Turn{Role: "assistant", Content: "", Calls: []string{"search_logs"}},
		rank.Turn{Role: "tool", Tool: "search_logs", Content: `[{"ts":"2025-05-02T14:02:11Z","level":"error","msg":"PaymentClient: TLS handshake failed; first seen after commit 9f3c2ab landed on branch main"}]`})

	// Step 2: get_ci_status is reachable only through that result.
	picks, err := r.Step(ctx, turns, opts)
	if err != nil {
		t.Fatal(err)
	}
	src := pickSources(picks)
	for _, p := range picks {
		t.Logf("step 2: %-18s %-12s %s", p.Tool, p.Provenance.Source, p.Reason)
	}
	if src["get_ci_status"] != rank.SourceToolResult {
		t.Fatalf("step 2 picks %v: want get_ci_status found in the tool result", src)
	}
	if _, ok := src["search_logs"]; !ok {
		t.Errorf("step 2 picks %v: the tool just called stays available", src)
	}
	scored := 0
	for _, p := range picks {
		if p.Provenance.Source != rank.SourceCalled && p.Provenance.Source != rank.SourceRelated && p.Provenance.Source != rank.SourceAlwaysActive {
			scored++
		}
	}
	if scored > 3 {
		t.Errorf("step 2: %d scored picks, K is 3: %v", scored, src)
	}
	for _, p := range picks {
		if p.Tool == "get_ci_status" && (p.Reason == "" || p.Provenance.Rank == 0) {
			t.Errorf("pick without reason or rank: %+v", p)
		}
	}
	// Without reading tool results, step 2 could not reach it.
	noResults := *opts
	noResults.Results = -1
	without, _ := r.StepTools(ctx, turns, &noResults)
	if slices.Contains(entryNames(without), "get_ci_status") {
		t.Fatalf("get_ci_status reached without the tool result: %v", entryNames(without))
	}

	// The model calls get_ci_status; the pipeline says to roll back the release.
	turns = append(turns,
		rank.Turn{Role: "assistant", Content: "The errors started with commit 9f3c2ab; checking its pipeline.", Calls: []string{"get_ci_status"}},
		rank.Turn{Role: "tool", Tool: "get_ci_status", Content: `{"ref":"9f3c2ab","status":"failed","stage":"integration","note":"certificate bundle missing; roll back the release"}`})

	// Step 3: the rollback is reachable, the CI tool just called stays, and the
	// user's request (tell the team on Slack) still counts.
	step3, err := r.Step(ctx, turns, opts)
	if err != nil {
		t.Fatal(err)
	}
	src = pickSources(step3)
	for _, p := range step3 {
		t.Logf("step 3: %-18s %-12s %s", p.Tool, p.Provenance.Source, p.Reason)
	}
	if src["rollback_release"] != rank.SourceToolResult {
		t.Errorf("step 3 picks %v: want rollback_release from the CI result", src)
	}
	if _, ok := src["get_ci_status"]; !ok {
		t.Errorf("step 3 picks %v: get_ci_status was just called", src)
	}
	if _, ok := src["send_slack_message"]; !ok {
		t.Errorf("step 3 picks %v: the latest user message still asks to tell the team", src)
	}
	// Filters hold in every part: deploy_release needs a role.
	if _, ok := src["deploy_release"]; ok {
		t.Errorf("role-restricted tool offered: %v", src)
	}

	// Catalog order and determinism.
	a, _ := r.StepTools(ctx, turns, opts)
	b, _ := r.StepTools(ctx, turns, opts)
	if !slices.Equal(entryNames(a), entryNames(b)) {
		t.Errorf("not deterministic: %v vs %v", entryNames(a), entryNames(b))
	}
	var seqs []uint64
	for _, e := range a {
		seqs = append(seqs, e.Seq())
	}
	if !slices.IsSorted(seqs) {
		t.Errorf("not in catalog order: %v", entryNames(a))
	}
}

func TestStepOptions(t *testing.T) {
	reg := opsRegistry(t)
	r := rank.For(reg)
	ctx := context.Background()
	turns := []rank.Turn{
		{Role: "user", Content: "Checkout errors: look in the logs."},
		{Role: "assistant", Calls: []string{"search_logs"}},
		{Role: "tool", Tool: "search_logs", Content: "error after commit 1a2b3c on branch main"},
		{Role: "assistant", Content: "Paging the team.", Calls: []string{"page_oncall"}},
		{Role: "tool", Tool: "page_oncall", Content: "paged"},
	}
	names := func(o *rank.StepOptions) []string {
		t.Helper()
		es, err := r.StepTools(ctx, turns, o)
		if err != nil {
			t.Fatal(err)
		}
		return entryNames(es)
	}
	// KeepCalled 1 keeps page_oncall (the last step); 2 also search_logs; -1 none of them.
	base := rank.Options{MaxCandidates: 1, Related: nil}
	if got := names(&rank.StepOptions{Options: base, Results: -1}); !slices.Contains(got, "page_oncall") {
		t.Errorf("KeepCalled default: %v", got)
	}
	got := names(&rank.StepOptions{Options: base, Results: -1, KeepCalled: 2})
	if !slices.Contains(got, "page_oncall") || !slices.Contains(got, "search_logs") {
		t.Errorf("KeepCalled 2: %v", got)
	}
	got = names(&rank.StepOptions{Options: base, Results: -1, KeepCalled: -1})
	if slices.Contains(got, "page_oncall") || len(got) != 1 {
		t.Errorf("KeepCalled -1: %v", got)
	}
	// With K=1 and a reserved slot the result's tool takes the only place;
	// with ResultSlots -1 the conversation keeps it.
	got = names(&rank.StepOptions{Options: base, KeepCalled: -1, Results: 3})
	if !slices.Equal(got, []string{"get_ci_status"}) {
		t.Errorf("K=1, one result slot: %v", got)
	}
	got = names(&rank.StepOptions{Options: base, KeepCalled: -1, ResultSlots: -1})
	if !slices.Equal(got, []string{"search_logs"}) {
		t.Errorf("K=1, no result slot: %v", got)
	}
	// Related and always-active tools come along; filters apply to them too.
	picks, err := r.Step(ctx, turns, &rank.StepOptions{Options: rank.Options{MaxCandidates: 2,
		Related:      map[string][]string{"get_ci_status": {"search_code", "deploy_release"}},
		AlwaysActive: []string{"translate_text", "deploy_release"}}})
	if err != nil {
		t.Fatal(err)
	}
	src := pickSources(picks)
	if src["search_code"] != rank.SourceRelated || src["translate_text"] != rank.SourceAlwaysActive || src["page_oncall"] != rank.SourceCalled {
		t.Errorf("extras %v", src)
	}
	if _, ok := src["deploy_release"]; ok {
		t.Errorf("role filter skipped for extras: %v", src)
	}
	for i, p := range picks {
		if p.Provenance.Rank != i+1 {
			t.Errorf("rank %d at %d", p.Provenance.Rank, i)
		}
	}
	// Unknown tool names in the turns are ignored.
	if _, err := r.Step(ctx, []rank.Turn{{Role: "tool", Tool: "no such tool", Content: "x"}}, nil); err != nil {
		t.Error(err)
	}
	// An empty conversation gives no scored tools, only always-active ones.
	es, err := r.StepTools(ctx, nil, &rank.StepOptions{Options: rank.Options{AlwaysActive: []string{"translate_text"}}})
	if err != nil || !slices.Equal(entryNames(es), []string{"translate_text"}) {
		t.Errorf("empty conversation: %v %v", entryNames(es), err)
	}
}
