package rank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// feedbackCatalog is a small catalog where the learned task shares no word
// with the tool it needs.
func feedbackCatalog(t testing.TB) *registry.Registry {
	t.Helper()
	reg := registry.New(nil)
	obj := json.RawMessage(`{"type":"object"}`)
	tools := []registry.Tool{
		registry.NewTool("get_forecast", "Weather forecast for a city.", obj),
		registry.NewTool("send_email", "Send an email message.", obj),
		registry.NewTool("read_file", "Read a file from disk.", obj),
		registry.NewTool("list_events", "List calendar events.", obj),
		registry.NewTool("trip_planner", "Plan a trip itinerary between cities.", obj),
	}
	for i := range 40 {
		tools = append(tools, registry.NewTool(fmt.Sprintf("filler_%d", i), fmt.Sprintf("Filler tool number %d for a ski resort booking system.", i), obj))
	}
	if err := reg.RegisterAll(tools); err != nil {
		t.Fatal(err)
	}
	return reg
}

func names(t *testing.T, r *Ranker, q string, o *Options) []string {
	t.Helper()
	picks, err := r.Rank(context.Background(), q, o)
	if err != nil {
		t.Fatal(err)
	}
	return pickNames(picks)
}

func TestFeedbackLiftsAnUnseenParaphrase(t *testing.T) {
	reg := feedbackCatalog(t)
	r := newRanker(reg)
	const learned = "will it snow during my ski trip to Chamonix next week"
	const paraphrase = "is snow expected on my ski trip to Chamonix?"
	o := &Options{MaxCandidates: 3}
	before := names(t, r, paraphrase, o)
	if strings.Contains(strings.Join(before, " "), "get_forecast") {
		t.Fatalf("the paraphrase already finds get_forecast without feedback: %v", before)
	}
	fb := NewFeedback(&FeedbackOptions{Known: func(n string) bool { _, ok := reg.Get(n); return ok }})
	n, err := fb.Add(learned, "get_forecast", "no_such_tool")
	if err != nil || n != 1 {
		t.Fatalf("Add = %d, %v", n, err)
	}
	if st := fb.Stats(); st.Unknown != 1 || st.Pairs != 1 || st.Tools != 1 {
		t.Errorf("stats %+v, want 1 unknown, 1 pair, 1 tool", st)
	}
	o.Feedback = fb
	o.Debug = true
	picks, err := r.Rank(context.Background(), paraphrase, o)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(pickNames(picks), "get_forecast")
	if i < 0 {
		t.Fatalf("with feedback: %v, want get_forecast in the top 3", pickNames(picks))
	}
	if !strings.Contains(picks[i].Reason, "like this one needed it") {
		t.Errorf("reason %q does not say feedback lifted the tool", picks[i].Reason)
	}
	if picks[i].Provenance.Scorer != "bm25+feedback" || picks[i].Provenance.Components["feedback"] <= 0 {
		t.Errorf("provenance %+v does not explain the feedback", picks[i].Provenance)
	}
	// A query unlike the learned task ranks exactly as without feedback.
	for _, q := range []string{"send an email to Bob", "read the config file"} {
		a, _ := r.Rank(context.Background(), q, &Options{MaxCandidates: 3})
		b, _ := r.Rank(context.Background(), q, &Options{MaxCandidates: 3, Feedback: fb})
		if fmt.Sprint(pickNames(a)) != fmt.Sprint(pickNames(b)) || a[0].Score != b[0].Score {
			t.Errorf("%q: feedback changed an unrelated ranking: %v -> %v", q, pickNames(a), pickNames(b))
		}
	}
	// Removing the pair forgets it.
	if n, err := fb.Remove(learned, "get_forecast"); err != nil || n != 1 {
		t.Fatalf("Remove = %d, %v", n, err)
	}
	o.Debug = false
	if got := names(t, r, paraphrase, o); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("after Remove: %v, want %v", got, before)
	}
}

func TestFeedbackRejectsBadPairs(t *testing.T) {
	fb := NewFeedback(nil)
	for _, tc := range []struct {
		query string
		tools []string
		want  string
	}{
		{"", []string{"a"}, "empty"},
		{"   ", []string{"a"}, "empty"},
		{"weather", nil, "no tool names"},
		{"weather", []string{""}, "tool name 1 is empty"},
		{strings.Repeat("x ", MaxFeedbackQueryBytes), []string{"a"}, "over the limit"},
		{"!!! ???", []string{"a"}, "no words"},
	} {
		_, err := fb.Add(tc.query, tc.tools...)
		if !errors.Is(err, ErrFeedback) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%.20q, %v) = %v, want ErrFeedback saying %q", tc.query, tc.tools, err, tc.want)
		}
	}
	if st := fb.Stats(); st.Pairs != 0 {
		t.Errorf("a refused pair was half-applied: %+v", st)
	}
}

func TestFeedbackPerToolCap(t *testing.T) {
	fb := NewFeedback(&FeedbackOptions{PerTool: 3})
	for i := range 5 {
		if _, err := fb.Add(fmt.Sprintf("task number %d about widgets", i), "widget", "gadget"); err != nil {
			t.Fatal(err)
		}
	}
	// Adding the same pair again learns nothing new.
	if n, _ := fb.Add("task number 4 about widgets", "widget"); n != 0 {
		t.Errorf("a repeated pair was learned again (%d)", n)
	}
	st := fb.Stats()
	if st.Pairs != 6 || st.Tools != 2 || st.Evicted != 4 {
		t.Errorf("stats %+v, want 6 pairs (3 per tool), 2 tools, 4 evicted", st)
	}
	// The oldest tasks went first.
	if n, _ := fb.Remove("task number 0 about widgets", "widget"); n != 0 {
		t.Error("the oldest task of a capped tool was kept")
	}
	if n, _ := fb.Remove("task number 4 about widgets", "widget"); n != 1 {
		t.Error("the newest task of a capped tool was dropped")
	}
}

// TestFeedbackConcurrent adds and removes feedback while queries run (run
// with -race).
func TestFeedbackConcurrent(t *testing.T) {
	reg := feedbackCatalog(t)
	r := newRanker(reg)
	fb := NewFeedback(nil)
	o := &Options{MaxCandidates: 5, Feedback: fb}
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 200 {
				q := fmt.Sprintf("will it snow on ski trip %d of worker %d", i%7, w)
				if _, err := fb.Add(q, "get_forecast", "trip_planner"); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					fb.Remove(q, "trip_planner")
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := range 200 {
				if _, err := r.Rank(ctx, fmt.Sprintf("is snow expected on my ski trip %d", i%5), o); err != nil {
					t.Error(err)
					return
				}
				fb.Stats()
			}
		}()
	}
	wg.Wait()
	// Each worker's 7 distinct tasks were learned once for get_forecast.
	if st := fb.Stats(); st.Tools != 2 || st.Pairs < 28 || st.Pairs > 56 {
		t.Errorf("after concurrent feedback: %+v, want 2 tools and 28 to 56 pairs", st)
	}
}

// Replay ends where Add and Remove one by one end, for random logs with
// repeats, removals, unknown names and a small cap.
func TestFeedbackReplayMatchesOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"snow", "ski", "trip", "email", "report", "weather", "file", "read", "plan", "city"}
	tools := []string{"a", "b", "c", "d", "unknown"}
	known := func(n string) bool { return n != "unknown" }
	for round := range 300 {
		var ops []FeedbackOp
		for range rng.IntN(60) {
			q := words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))]
			if rng.IntN(20) == 0 {
				q = "the of and" // stopwords only: Add refuses it
			}
			ts := []string{tools[rng.IntN(len(tools))]}
			if rng.IntN(2) == 0 {
				ts = append(ts, tools[rng.IntN(len(tools))])
			}
			ops = append(ops, FeedbackOp{Query: q, Tools: ts, Remove: rng.IntN(5) == 0})
		}
		seq := NewFeedback(&FeedbackOptions{PerTool: 3, Known: known})
		rep := NewFeedback(&FeedbackOptions{PerTool: 3, Known: known})
		// Both start from the same state, then take the same log.
		seq.Add("read file", "a")
		rep.Add("read file", "a")
		seq.replaySlowly(ops)
		if _, err := rep.Replay(ops); err != nil {
			t.Fatal(err)
		}
		if a, b := dump(seq), dump(rep); a != b {
			t.Fatalf("round %d: one by one\n%s\nreplayed\n%s", round, a, b)
		}
	}
	if _, err := NewFeedback(nil).Replay([]FeedbackOp{{Query: "ok", Tools: []string{"a"}}, {Query: "", Tools: []string{"a"}}}); err == nil || !strings.Contains(err.Error(), "op 2") {
		t.Errorf("an invalid op: %v", err)
	}
}

// dump lists each tool's tasks, oldest first, and the counts.
func dump(f *Feedback) string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var b strings.Builder
	tools := slices.Sorted(maps.Keys(f.byTool))
	for _, t := range tools {
		fmt.Fprintf(&b, "%s:", t)
		for _, id := range f.byTool[t] {
			fmt.Fprintf(&b, " %q", f.byID[id].query)
		}
		b.WriteByte('\n')
	}
	st := f.stats
	fmt.Fprintf(&b, "pairs %d unknown %d evicted %d", f.pairs, st.Unknown, st.Evicted)
	return b.String()
}

// replaySlowly is Replay by Add and Remove, one op at a time: what Replay
// must agree with.
func (f *Feedback) replaySlowly(ops []FeedbackOp) int {
	n := 0
	for _, op := range ops {
		if op.Remove {
			f.Remove(op.Query, op.Tools...)
			continue
		}
		k, _ := f.Add(op.Query, op.Tools...) // a wordless op adds nothing, as in Replay
		n += k
	}
	return n
}

// Check refuses what Add would refuse, and learns nothing.
func TestFeedbackCheck(t *testing.T) {
	fb := NewFeedback(nil)
	if err := fb.Check("the of and", []string{"get_forecast"}); !errors.Is(err, ErrFeedback) {
		t.Errorf("stopwords only: %v, want ErrFeedback", err)
	}
	if _, err := fb.Add("the of and", "get_forecast"); err == nil {
		t.Error("Add learned a query Check refuses")
	}
	if err := fb.Check("rain in Paris", nil); !errors.Is(err, ErrFeedback) {
		t.Errorf("no tools: %v, want ErrFeedback", err)
	}
	if err := fb.Check("rain in Paris", []string{"get_forecast"}); err != nil {
		t.Errorf("a good pair: %v", err)
	}
	if st := fb.Stats(); st.Pairs != 0 {
		t.Errorf("Check learned %d pairs", st.Pairs)
	}
}
