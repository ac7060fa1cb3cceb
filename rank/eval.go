package rank

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/toolselect/toolselect/internal/quantile"
)

// EvalQuery is one line of a queries.jsonl file: a query and its gold tools.
type EvalQuery struct {
	ID    string   `json:"id"`
	Query string   `json:"query"`
	Gold  []string `json:"gold"`
}

// readQueries reads JSON Lines of EvalQuery.
func readQueries(r io.Reader) ([]EvalQuery, error) {
	var out []EvalQuery
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(trimSpace(b)) == 0 {
			continue
		}
		var q EvalQuery
		if err := json.Unmarshal(b, &q); err != nil {
			return nil, fmt.Errorf("queries line %d: %w", line, err)
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// LoadQueries reads a queries.jsonl file.
func LoadQueries(path string) ([]EvalQuery, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	qs, err := readQueries(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return qs, nil
}

// EvalResult holds retrieval quality and latency over a query set. R@k is the
// fraction of a query's gold tools found in the top k, averaged over queries;
// NDCG@10 uses binary relevance; MRR is the mean reciprocal rank of the first
// gold tool within the top 10 (0 when none is there).
type EvalResult struct {
	Queries int     `json:"queries"`
	R1      float64 `json:"r@1"`
	R5      float64 `json:"r@5"`
	R10     float64 `json:"r@10"`
	// R50 needs MaxCandidates of 50 or more (eval --k 50); below, it counts
	// only the tools returned.
	R50        float64       `json:"r@50"`
	NDCG10     float64       `json:"ndcg@10"`
	MRR        float64       `json:"mrr"`
	LatencyP50 time.Duration `json:"latency_p50_ns"`
	LatencyP99 time.Duration `json:"latency_p99_ns"`
}

// Evaluate ranks every query with r and scores the top 10 against the gold
// tools. opts.MaxCandidates is raised to at least 10.
func Evaluate(ctx context.Context, r *Ranker, queries []EvalQuery, opts *Options) (EvalResult, error) {
	o := opts.withDefaults()
	if o.MaxCandidates < 10 {
		o.MaxCandidates = 10
	}
	c := r.Catalog()
	if len(queries) > 0 { // build the index outside the timings
		if _, err := r.rank(ctx, c, queries[0].Query, &o, nil); err != nil {
			return EvalResult{}, err
		}
	}
	var res EvalResult
	lat := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		start := time.Now()
		picks, err := r.rank(ctx, c, q.Query, &o, nil)
		lat = append(lat, time.Since(start))
		if err != nil {
			return res, fmt.Errorf("query %s: %w", q.ID, err)
		}
		m := scoreRanking(pickNames(picks), q.Gold)
		res.R1 += m.R1
		res.R5 += m.R5
		res.R10 += m.R10
		res.R50 += m.R50
		res.NDCG10 += m.NDCG10
		res.MRR += m.MRR
		res.Queries++
	}
	if res.Queries > 0 {
		n := float64(res.Queries)
		res.R1, res.R5, res.R10, res.NDCG10, res.MRR = res.R1/n, res.R5/n, res.R10/n, res.NDCG10/n, res.MRR/n
		res.R50 /= n
	}
	res.LatencyP50, res.LatencyP99 = quantile.Of(lat, 0.50), quantile.Of(lat, 0.99)
	return res, nil
}

// metrics are the quality measures of one ranked list against its gold set.
type metrics struct{ R1, R5, R10, R50, NDCG10, MRR float64 }

// scoreRanking computes the metrics of a ranked list of names against gold.
func scoreRanking(ranked, gold []string) metrics {
	var m metrics
	if len(gold) == 0 {
		return m
	}
	isGold := map[string]bool{}
	for _, g := range gold {
		isGold[g] = true
	}
	nGold := float64(len(isGold))
	hitsAt := func(k int) float64 {
		n, seen := 0, map[string]bool{}
		for i, name := range ranked {
			if i >= k {
				break
			}
			if isGold[name] && !seen[name] {
				seen[name] = true
				n++
			}
		}
		return float64(n) / nGold
	}
	m.R1, m.R5, m.R10, m.R50 = hitsAt(1), hitsAt(5), hitsAt(10), hitsAt(50)
	dcg, idcg := 0.0, 0.0
	seen := map[string]bool{}
	for i, name := range ranked {
		if i >= 10 {
			break
		}
		if isGold[name] && !seen[name] {
			seen[name] = true
			dcg += 1 / math.Log2(float64(i)+2)
			if m.MRR == 0 {
				m.MRR = 1 / float64(i+1)
			}
		}
	}
	for i := 0; i < len(isGold) && i < 10; i++ {
		idcg += 1 / math.Log2(float64(i)+2)
	}
	m.NDCG10 = dcg / idcg
	return m
}
