package rank

import (
	"context"
	"hash/fnv"
	"testing"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
	"github.com/toolselect/toolselect/registry"
)

// dataSet loads one of the data sets the repository carries
// (testdata/sets, or $TOOLSELECT_DATA) into a registry, with its queries.
func dataSet(t testing.TB, name string) (*registry.Registry, []EvalQuery) {
	t.Helper()
	tools, _, err := registry.LoadCatalogFile(fixtures.Tools(name))
	if err != nil {
		t.Fatalf("data set %s: %v", name, err)
	}
	reg := registry.New(nil)
	reg.RegisterValid(tools)
	qs, err := LoadQueries(fixtures.Queries(name))
	if err != nil {
		t.Fatal(err)
	}
	return reg, qs
}

func TestQualityTargets(t *testing.T) {
	for _, tc := range []struct {
		name      string
		r10, ndcg float64
	}{
		{"bfcl", 0.88, 0.75},
		// The target for livemcpbench is R@10 >= 0.55 (no NDCG
		// target); Chinese glosses and prerequisites take it to 0.57.
		{"livemcpbench", 0.55, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, qs := dataSet(t, tc.name)
			for _, sc := range []Scorer{&BM25{}, Keyword{}} {
				res, err := Evaluate(context.Background(), newRanker(reg), qs, &Options{Scorer: sc, MinScore: -1})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s %s: R@1 %.3f R@5 %.3f R@10 %.3f NDCG@10 %.3f MRR %.3f p50 %v", tc.name, sc.Name(), res.R1, res.R5, res.R10, res.NDCG10, res.MRR, res.LatencyP50)
				// Two fixed halves of the queries: a change tuned on one half
				// must hold on the other.
				for h, half := range splitHalves(qs) {
					r, err := Evaluate(context.Background(), newRanker(reg), half, &Options{Scorer: sc, MinScore: -1})
					if err != nil {
						t.Fatal(err)
					}
					t.Logf("  half %c (%d queries): R@10 %.3f NDCG@10 %.3f", 'A'+h, len(half), r.R10, r.NDCG10)
				}
				if sc.Name() == "bm25" && (res.R10 < tc.r10 || res.NDCG10 < tc.ndcg) {
					t.Errorf("%s: R@10 %.3f NDCG@10 %.3f, want >= %.2f / %.2f", tc.name, res.R10, res.NDCG10, tc.r10, tc.ndcg)
				}
			}
		})
	}
}

// splitHalves splits queries into two fixed halves by a hash of their ids.
func splitHalves(qs []EvalQuery) [2][]EvalQuery {
	var out [2][]EvalQuery
	for _, q := range qs {
		h := fnv.New32a()
		h.Write([]byte(q.ID))
		out[h.Sum32()&1] = append(out[h.Sum32()&1], q)
	}
	return out
}
