package capi

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/rank/feedbackstore"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// doors is testdata/feedback-doors: a catalog, a feedback log that also
// names tools the catalog does not hold (another registry's, removed ones),
// and queries.
var doors, _ = filepath.Abs(filepath.Join("..", "..", "..", "testdata", "feedback-doors"))

// One feedback log, one ranking, whichever front door ranks with it (past
// selections teach the same whoever reads them): `toolselect rank
// --feedback` (which drops names its catalog lacks as it reads the log),
// the Go API (rank.For with a feedbackstore learner,
// which keeps every name) and the C ABI (the learner a selector's "feedback"
// config opens, shared between the registries of every selector naming the
// store) give the same picks, scores and reasons, byte for byte, and the C
// ABI's top_k offer is the CLI's top k.
func TestFeedbackRankingsAgreeAcrossFrontDoors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	dir := t.TempDir()
	// The store is a copy: a learner may append to it.
	catalog, store := filepath.Join(doors, "tools.jsonl"), filepath.Join(dir, "past.jsonl")
	log, err := os.ReadFile(filepath.Join(doors, "past.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(store, log, 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(doors, "queries.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var queries []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			queries = append(queries, line)
		}
	}
	bin := filepath.Join(dir, "toolselect")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/toolselect/toolselect/cmd/toolselect").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cli := func(q string, args ...string) []rank.Pick {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"rank", "--catalog", catalog, "--feedback", store, "--json"}, append(args, q)...)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("toolselect rank %q: %v", q, err)
		}
		var picks []rank.Pick
		if err := json.Unmarshal(out, &picks); err != nil {
			t.Fatalf("toolselect rank %q: %v\n%s", q, err, out)
		}
		return picks
	}
	ctx := context.Background()
	all := &rank.Options{MaxCandidates: 10, MinScore: -1}

	// The Go API.
	tools, _, err := registry.LoadCatalogFile(catalog)
	if err != nil {
		t.Fatal(err)
	}
	goReg := registry.New(nil)
	if errs := goReg.RegisterValid(tools); len(errs) > 0 {
		t.Fatal(errs)
	}
	l, err := feedbackstore.OpenLearner(ctx, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Feedback().Stats().Unknown != 0 {
		t.Fatal("the Go API's learner should keep every name")
	}

	// The C ABI: a registry loaded from the file, and a selector naming the
	// store; a second selector on another registry shares its learner.
	reg := newRegistry(t)
	if r := RegistryLoadCatalogFile(reg, []byte(catalog), true); r.Code != OK {
		t.Fatal(string(r.Body))
	}
	cfg := []byte(`{"model":"m","feedback":` + strconv.Quote(store) + `}`)
	sel := handleOf(t, SelectorNew(cfg, true))
	defer SelectorClose(sel)
	other := handleOf(t, SelectorNew(cfg, true))
	defer SelectorClose(other)
	v, _ := table.get(sel, KindSelector)
	cFeedback := learnerOf(v.(*selector.ToolSelector)).Feedback()
	cReg, _ := getRegistry(reg)
	offered := func(q string, k int) []string {
		t.Helper()
		req, _ := json.Marshal(map[string]any{"task": map[string]any{"description": q}, "top_k": k})
		r := SessionBegin(sel, reg, req, true)
		if r.Code != OK {
			t.Fatalf("begin: %s", r.Body)
		}
		sess := uint64(decode(t, r)["session"].(float64))
		defer SessionClose(sess)
		done := decode(t, SessionFeed(sess, []byte(`{"error":{"kind":"transport","message":"down"}}`), true))
		var names []string
		for _, n := range done["offered"].([]any) {
			names = append(names, n.(string))
		}
		return names
	}

	text := func(picks []rank.Pick) string { b, _ := json.Marshal(picks); return string(b) }
	lifted := 0
	for _, q := range queries {
		want := text(cli(q, "--k", "10", "--min-score", "-1"))
		if strings.Contains(want, "a past task") {
			lifted++
		}
		goPicks, err := rank.For(goReg).Rank(ctx, q, &rank.Options{MaxCandidates: all.MaxCandidates, MinScore: all.MinScore, Feedback: l.Feedback()})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(goPicks); got != want {
			t.Errorf("%q: the Go API ranks\n%s\nthe CLI\n%s", q, got, want)
		}
		cPicks, err := rank.For(cReg).Rank(ctx, q, &rank.Options{MaxCandidates: all.MaxCandidates, MinScore: all.MinScore, Feedback: cFeedback})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(cPicks); got != want {
			t.Errorf("%q: the C ABI's feedback ranks\n%s\nthe CLI\n%s", q, got, want)
		}
		for k := 1; k <= 3; k++ {
			var top []string
			for _, p := range cli(q, "--k", strconv.Itoa(k)) {
				top = append(top, p.Tool)
			}
			got := offered(q, k)
			slices.Sort(top)
			slices.Sort(got)
			if fmt.Sprint(got) != fmt.Sprint(top) {
				t.Errorf("%q: the C ABI offers %v with top_k %d, the CLI ranks %v first", q, got, k, top)
			}
		}
	}
	if lifted < 3 {
		t.Fatalf("only %d of %d queries were lifted by feedback: the fixture does not test it", lifted, len(queries))
	}
}
