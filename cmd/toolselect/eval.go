package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolselect/toolselect/rank"
)

func init() {
	register(command{name: "eval", summary: "measure ranking quality on a queries file, or (--select) whole selections per model on a tasks file", run: runEval})
}

func runEval(env *cmdEnv, args []string) int {
	if isSelectEval(args) {
		return runEvalSelect(env, args)
	}
	fs := newFlags(env, "eval", "--catalog FILE --queries FILE [--scorer S] [--feedback FILE] [--json]\n   or: toolselect eval --select --catalog FILE --tasks FILE ... (whole selections per model: eval --select --help)")
	var f rankFlags
	f.register(fs, defaultK, -1) // no score floor: R@k measures the ranking alone
	queries := fs.String("queries", "", "queries.jsonl with {\"id\",\"query\",\"gold\":[tool names]} per line")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	var fbf feedbackFlag
	fbf.register(fs)
	pos, code, ok := parseInterleaved(env, fs, args)
	if !ok {
		return code
	}
	if code, ok := f.checkK(env, "eval"); !ok {
		return code
	}
	if len(pos) > 0 {
		return fail(env, "eval", exitUsage, "unexpected argument %q", pos[0])
	}
	if *queries == "" {
		return fail(env, "eval", exitUsage, "--queries is required")
	}
	reg, code, ok := loadCatalog(env, "eval", f.catalog, !f.skipInvalid)
	if !ok {
		return code
	}
	qs, err := rank.LoadQueries(*queries)
	if err != nil {
		return fail(env, "eval", exitUsage, "%v", err)
	}
	sc, err := f.scorerFor(env)
	if err != nil {
		return fail(env, "eval", exitUsage, "%v", err)
	}
	opts := f.options(sc)
	r := rank.For(reg)
	if opts.Feedback, code, ok = fbf.loadWhile(env, "eval", reg, func() error { return r.Prepare(opts) }); !ok {
		return code
	}
	scorerName := sc.Name()
	if opts.Feedback != nil {
		scorerName = opts.Feedback.Scorer(sc).Name()
	}
	res, err := rank.Evaluate(context.Background(), r, qs, opts)
	if err != nil {
		return fail(env, "eval", exitFailed, "%v", err)
	}
	if *asJSON {
		out := struct {
			Catalog string  `json:"catalog"`
			Scorer  string  `json:"scorer"`
			Tools   int     `json:"tools"`
			P50us   float64 `json:"latency_p50_us"`
			P99us   float64 `json:"latency_p99_us"`
			rank.EvalResult
		}{f.catalog, scorerName, reg.Len(), us(res.LatencyP50), us(res.LatencyP99), res}
		b, _ := json.Marshal(out)
		fmt.Fprintln(env.stdout, string(b))
		return exitOK
	}
	fmt.Fprintf(env.stdout, "catalog  %s (%d tools), %d queries, scorer %s\n", f.catalog, reg.Len(), res.Queries, scorerName)
	fmt.Fprintf(env.stdout, "R@1      %.3f\nR@5      %.3f\nR@10     %.3f\nNDCG@10  %.3f\nMRR      %.3f\n", res.R1, res.R5, res.R10, res.NDCG10, res.MRR)
	fmt.Fprintf(env.stdout, "latency  median %.1f µs, p99 %.1f µs\n", us(res.LatencyP50), us(res.LatencyP99))
	return exitOK
}

func us(d interface{ Nanoseconds() int64 }) float64 { return float64(d.Nanoseconds()) / 1e3 }
