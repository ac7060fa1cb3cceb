package rank

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// rankAllWith ranks every query of test under fb (top 10, scores and
// reasons) and returns the rankings as bytes.
func rankAllWith(t testing.TB, r *Ranker, fb *Feedback, test []EvalQuery) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, q := range test {
		picks, err := r.Rank(context.Background(), q.Query, &Options{MaxCandidates: 10, MinScore: -1, Feedback: fb})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range picks {
			fmt.Fprintf(&buf, "%s\t%s\t%.17g\t%s\n", q.ID, p.Tool, p.Score, p.Reason)
		}
	}
	return buf.Bytes()
}

// replayed is a Feedback holding ops, replayed with GOMAXPROCS procs.
func replayed(t testing.TB, ops []FeedbackOp, procs int, known func(string) bool) *Feedback {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	fb := NewFeedback(&FeedbackOptions{Known: known, PerTool: 8})
	if _, err := fb.Replay(ops); err != nil {
		t.Fatal(err)
	}
	return fb
}

// Rankings with feedback are a pure function of the catalog, the feedback
// log in its order and the query (so a ranking can be replayed): the same log replayed with 1, 2
// and 8 workers, or learned pair by pair with Add, gives the same rankings,
// byte for byte, on every query of the data sets (the learned half
// and the unseen half).
func TestFeedbackRankingsAreDeterministic(t *testing.T) {
	for _, name := range []string{"bfcl", "livemcpbench"} {
		t.Run(name, func(t *testing.T) {
			reg, qs := dataSet(t, name)
			r := newRanker(reg)
			h := len(qs) / 2
			var ops []FeedbackOp
			for _, q := range qs[:h] {
				ops = append(ops, FeedbackOp{Query: q.Query, Tools: q.Gold})
			}
			// A few removals, and a small per-tool cap (8), so that eviction runs.
			for i := 0; i < len(ops); i += 17 {
				ops = append(ops, FeedbackOp{Query: ops[i].Query, Tools: ops[i].Tools[:1], Remove: true})
			}
			test := qs
			known := func(string) bool { return true }
			want := rankAllWith(t, r, replayed(t, ops, 1, known), test)
			for _, procs := range []int{2, 8, 1, 8} {
				got := rankAllWith(t, r, replayed(t, ops, procs, known), test)
				if !bytes.Equal(got, want) {
					t.Fatalf("GOMAXPROCS=%d: rankings differ from GOMAXPROCS=1 (%s)", procs, firstDiff(want, got))
				}
			}
			// Pair by pair, as a live learner records selections.
			fb := NewFeedback(&FeedbackOptions{Known: known, PerTool: 8})
			for _, op := range ops {
				var err error
				if op.Remove {
					_, err = fb.Remove(op.Query, op.Tools...)
				} else {
					_, err = fb.Add(op.Query, op.Tools...)
				}
				if err != nil && !isNoWords(err) {
					t.Fatal(err)
				}
			}
			if got := rankAllWith(t, r, fb, test); !bytes.Equal(got, want) {
				t.Fatalf("Add one by one differs from Replay (%s)", firstDiff(want, got))
			}
		})
	}
}

func isNoWords(err error) bool {
	return err != nil && bytes.Contains([]byte(err.Error()), []byte("no words"))
}

// firstDiff shows the first line where two rankings differ.
func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return fmt.Sprintf("line %d: %q vs %q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}

// A property over random feedback logs: whatever the log, replaying it twice
// into fresh Feedbacks (and with different worker counts) gives the same
// similarity for every query, and Add one by one agrees with Replay.
func TestFeedbackReplayPropertyRandomLogs(t *testing.T) {
	words := []string{"weather", "forecast", "city", "email", "send", "file", "convert", "pdf", "calendar",
		"event", "stock", "price", "translate", "text", "image", "resize", "search", "web", "news", "map"}
	tools := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	rng := rand.New(rand.NewPCG(25, 2026))
	for trial := range 40 {
		var ops []FeedbackOp
		for range 20 + rng.IntN(200) {
			n := 1 + rng.IntN(6)
			q := ""
			for i := range n {
				if i > 0 {
					q += " "
				}
				q += words[rng.IntN(len(words))]
			}
			ts := []string{tools[rng.IntN(len(tools))]}
			if rng.IntN(3) == 0 {
				ts = append(ts, tools[rng.IntN(len(tools))])
			}
			ops = append(ops, FeedbackOp{Query: q, Tools: ts, Remove: rng.IntN(10) == 0})
		}
		per := 1 + rng.IntN(5)
		mk := func(procs int) *Feedback {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			fb := NewFeedback(&FeedbackOptions{PerTool: per})
			if _, err := fb.Replay(ops); err != nil {
				t.Fatal(err)
			}
			return fb
		}
		one := NewFeedback(&FeedbackOptions{PerTool: per})
		for _, op := range ops {
			if op.Remove {
				_, _ = one.Remove(op.Query, op.Tools...)
			} else {
				_, _ = one.Add(op.Query, op.Tools...)
			}
		}
		fbs := []*Feedback{mk(1), mk(2), mk(8), one}
		for range 30 {
			q := ""
			for i := range 1 + rng.IntN(5) {
				if i > 0 {
					q += " "
				}
				q += words[rng.IntN(len(words))]
			}
			query := newQuery(q)
			want, _ := json.Marshal(fbs[0].similar(nil, query))
			for i, fb := range fbs[1:] {
				if got, _ := json.Marshal(fb.similar(nil, query)); !bytes.Equal(got, want) {
					t.Fatalf("trial %d, feedback %d, query %q: %s vs %s", trial, i+1, q, got, want)
				}
			}
		}
	}
}

// offCatalog is ops with tool names the catalog does not hold mixed in: every
// third op also names a tool of another registry, every seventh names only
// such tools (a task of its own), and every eleventh is a removed tool's
// copy of a learned task.
func offCatalog(ops []FeedbackOp) []FeedbackOp {
	var out []FeedbackOp
	for i, op := range ops {
		op.Tools = slices.Clone(op.Tools)
		switch {
		case op.Remove:
		case i%7 == 0:
			out = append(out, FeedbackOp{Query: op.Query + " elsewhere", Tools: []string{"other_tool", fmt.Sprintf("other_%d", i%5)}})
		case i%3 == 0:
			op.Tools = append(op.Tools, fmt.Sprintf("gone_%d", i%13))
		}
		out = append(out, op)
		if i%11 == 0 && !op.Remove {
			out = append(out, FeedbackOp{Query: op.Query, Tools: []string{"gone_tool"}})
		}
	}
	return out
}

// Feedback naming tools the ranked catalog does not hold ranks exactly as
// the same log with those names dropped as it is read (the CLI's Known
// filter): a learner shared between registries (the C library's), or one
// that accepts every name (the Go API's), gives the CLI's rankings, byte for
// byte, on every query of the data sets.
func TestFeedbackOffCatalogToolsDoNotMoveRankings(t *testing.T) {
	for _, name := range []string{"bfcl", "livemcpbench"} {
		t.Run(name, func(t *testing.T) {
			reg, qs := dataSet(t, name)
			r := newRanker(reg)
			var ops []FeedbackOp
			for _, q := range qs[:len(qs)/2] {
				ops = append(ops, FeedbackOp{Query: q.Query, Tools: q.Gold})
			}
			for i := 0; i < len(ops); i += 17 {
				ops = append(ops, FeedbackOp{Query: ops[i].Query, Tools: ops[i].Tools[:1], Remove: true})
			}
			ops = offCatalog(ops)
			inCatalog := func(n string) bool { _, ok := reg.Get(n); return ok }
			want := rankAllWith(t, r, replayed(t, ops, 2, inCatalog), qs)
			if got := rankAllWith(t, r, replayed(t, ops, 2, nil), qs); !bytes.Equal(got, want) {
				t.Fatalf("a Feedback holding off-catalog tools ranks differently from one that dropped them (%s)", firstDiff(want, got))
			}
		})
	}
}

// The same over random logs and a small catalog: a Feedback that learned
// tools outside the catalog gives, for every query, the similarities of one
// that never saw them.
func TestFeedbackOffCatalogPropertyRandomLogs(t *testing.T) {
	words := []string{"weather", "forecast", "city", "email", "send", "file", "convert", "pdf", "calendar",
		"event", "stock", "price", "translate", "text", "image", "resize", "search", "web", "news", "map"}
	var defs []registry.Tool
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		defs = append(defs, registry.Tool{Name: n, Description: "tool " + n, Parameters: json.RawMessage(`{"type":"object"}`)})
	}
	reg := registry.New(nil)
	for _, d := range defs {
		if err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	cat := newCatalog(reg.Entries())
	tools := []string{"a", "b", "c", "d", "e", "x", "y", "z"} // x, y, z: not in the catalog
	inCatalog := func(n string) bool { _, ok := cat.Pos(n); return ok }
	rng := rand.New(rand.NewPCG(25, 2027))
	phrase := func(n int) string {
		q := ""
		for i := range n {
			if i > 0 {
				q += " "
			}
			q += words[rng.IntN(len(words))]
		}
		return q
	}
	for trial := range 60 {
		var ops []FeedbackOp
		for range 5 + rng.IntN(120) {
			ts := []string{tools[rng.IntN(len(tools))]}
			if rng.IntN(3) == 0 {
				ts = append(ts, tools[rng.IntN(len(tools))])
			}
			ops = append(ops, FeedbackOp{Query: phrase(1 + rng.IntN(6)), Tools: ts, Remove: rng.IntN(10) == 0})
		}
		per := 1 + rng.IntN(5)
		all, known := NewFeedback(&FeedbackOptions{PerTool: per}), NewFeedback(&FeedbackOptions{PerTool: per, Known: inCatalog})
		for _, fb := range []*Feedback{all, known} {
			if _, err := fb.Replay(ops); err != nil {
				t.Fatal(err)
			}
		}
		for range 30 {
			query := newQuery(phrase(1 + rng.IntN(5)))
			want, _ := json.Marshal(known.similar(cat, query))
			if got, _ := json.Marshal(all.similar(cat, query)); !bytes.Equal(got, want) {
				t.Fatalf("trial %d, query %q: %s with off-catalog tools, %s without", trial, query.Text, got, want)
			}
		}
	}
}
