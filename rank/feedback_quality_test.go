package rank

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// feedbackSplit learns the first half of qs (the earlier tasks, with their
// gold tools as the selections) and evaluates the second half, without and
// with the feedback.
// With byHash, the halves are splitHalves' instead (A learned, B evaluated).
func feedbackSplit(t testing.TB, name string, byHash bool, fo *FeedbackOptions) (without, with EvalResult, reuse float64) {
	reg, qs := dataSet(t, name)
	h := len(qs) / 2
	learn, test := qs[:h], qs[h:]
	if byHash {
		halves := splitHalves(qs)
		learn, test = halves[0], halves[1]
	}
	fb := NewFeedback(fo)
	seen := map[string]bool{}
	for _, q := range learn {
		if _, err := fb.Add(q.Query, q.Gold...); err != nil {
			t.Fatalf("%s %s: %v", name, q.ID, err)
		}
		for _, g := range q.Gold {
			seen[g] = true
		}
	}
	n, hit := 0, 0
	for _, q := range test {
		for _, g := range q.Gold {
			n++
			if seen[g] {
				hit++
			}
		}
	}
	ctx := context.Background()
	var err error
	if without, err = Evaluate(ctx, newRanker(reg), test, &Options{MinScore: -1}); err != nil {
		t.Fatal(err)
	}
	if with, err = Evaluate(ctx, newRanker(reg), test, &Options{MinScore: -1, Feedback: fb}); err != nil {
		t.Fatal(err)
	}
	return without, with, float64(hit) / float64(n)
}

// TestFeedbackSplit measures what feedback is for: it must lose nothing
// (R@10 within 0.005) on any split, and gain (R@10 and NDCG@10) on a split
// where most gold tools were learned. The table rows it logs are in
// docs/rank.md. TOOLSELECT_FEEDBACK_GRID=bfcl,livemcpbench logs
// a grid instead: TOOLSELECT_FEEDBACK_TW=threshold:weight,... (how the
// defaults were chosen).
func TestFeedbackSplit(t *testing.T) {
	if g := os.Getenv("TOOLSELECT_FEEDBACK_GRID"); g != "" {
		for _, name := range strings.Split(g, ",") {
			for _, byHash := range []bool{false, true} {
				for _, tw := range strings.Split(cmp.Or(os.Getenv("TOOLSELECT_FEEDBACK_TW"), "0.1:1"), ",") {
					th, _ := strconv.ParseFloat(strings.Split(tw, ":")[0], 64)
					w, _ := strconv.ParseFloat(strings.Split(tw, ":")[1], 64)
					wo, wi, _ := feedbackSplit(t, name, byHash, &FeedbackOptions{Weight: w, Threshold: th})
					t.Logf("%s byHash %v threshold %.2f weight %.2f: R@10 %.3f -> %.3f  NDCG@10 %.3f -> %.3f", name, byHash, th, w, wo.R10, wi.R10, wo.NDCG10, wi.NDCG10)
				}
			}
		}
		return
	}
	for _, name := range []string{"bfcl", "livemcpbench"} {
		for _, byHash := range []bool{false, true} {
			split := "first half -> second half"
			if byHash {
				split = "hash half A -> half B"
			}
			t.Run(name+"/"+split, func(t *testing.T) {
				wo, wi, reuse := feedbackSplit(t, name, byHash, nil)
				t.Logf("| %s | %s | %d | %.2f | %s | %s |", name, split, wo.Queries, reuse, row(wo), row(wi))
				if os.Getenv("TOOLSELECT_FEEDBACK_REUSED") != "" {
					so, si := feedbackReused(t, name, byHash)
					t.Logf("  only the %d evaluated queries whose gold tools were all learned: %s -> %s", so.Queries, row(so), row(si))
				}
				if wi.R10 < wo.R10-0.005 {
					t.Errorf("%s: feedback lost R@10 %.3f -> %.3f", name, wo.R10, wi.R10)
				}
				if reuse > 0.5 && (wi.R10 <= wo.R10 || wi.NDCG10 <= wo.NDCG10) {
					t.Errorf("%s: %.0f%% of the gold tools were learned, yet R@10 %.3f -> %.3f, NDCG@10 %.3f -> %.3f", name, 100*reuse, wo.R10, wi.R10, wo.NDCG10, wi.NDCG10)
				}
			})
		}
	}
}

func row(r EvalResult) string {
	return fmt.Sprintf("%s / %s / %s / %s", strconv.FormatFloat(r.R1, 'f', 3, 64), strconv.FormatFloat(r.R5, 'f', 3, 64),
		strconv.FormatFloat(r.R10, 'f', 3, 64), strconv.FormatFloat(r.NDCG10, 'f', 3, 64))
}

// feedbackReused is feedbackSplit over the evaluated queries whose gold
// tools were all learned: what feedback does where reuse happens.
func feedbackReused(t testing.TB, name string, byHash bool) (without, with EvalResult) {
	reg, qs := dataSet(t, name)
	h := len(qs) / 2
	learn, test := qs[:h], qs[h:]
	if byHash {
		halves := splitHalves(qs)
		learn, test = halves[0], halves[1]
	}
	fb := NewFeedback(nil)
	seen := map[string]bool{}
	for _, q := range learn {
		fb.Add(q.Query, q.Gold...)
		for _, g := range q.Gold {
			seen[g] = true
		}
	}
	var sub []EvalQuery
	for _, q := range test {
		all := true
		for _, g := range q.Gold {
			all = all && seen[g]
		}
		if all {
			sub = append(sub, q)
		}
	}
	ctx := context.Background()
	without, _ = Evaluate(ctx, newRanker(reg), sub, &Options{MinScore: -1})
	with, _ = Evaluate(ctx, newRanker(reg), sub, &Options{MinScore: -1, Feedback: fb})
	return without, with
}
