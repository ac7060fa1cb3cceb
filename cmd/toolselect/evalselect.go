package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolselect/toolselect/selecteval"
	"github.com/toolselect/toolselect/selector"
)

// isSelectEval reports whether eval's arguments ask for --select.
func isSelectEval(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		switch a {
		case "--select", "-select", "--select=true", "-select=true":
			return true
		}
	}
	return false
}

// priceList is --price MODEL=IN/OUT (dollars per million tokens), repeatable.
type priceList map[string]selecteval.Price

func (p priceList) String() string { return "" }
func (p priceList) Set(s string) error {
	model, v, ok := strings.Cut(s, "=")
	in, out, ok2 := strings.Cut(v, "/")
	if !ok || !ok2 || strings.TrimSpace(model) == "" {
		return fmt.Errorf("want MODEL=IN/OUT (dollars per million prompt / completion tokens), got %q", s)
	}
	fi, err1 := strconv.ParseFloat(strings.TrimSpace(in), 64)
	fo, err2 := strconv.ParseFloat(strings.TrimSpace(out), 64)
	if err1 != nil || err2 != nil || fi < 0 || fo < 0 {
		return fmt.Errorf("want MODEL=IN/OUT with two non-negative numbers, got %q", s)
	}
	p[strings.TrimSpace(model)] = selecteval.Price{In: fi, Out: fo}
	return nil
}

func runEvalSelect(env *cmdEnv, args []string) int {
	const name = "eval --select"
	fs := newFlags(env, "eval", "--select --catalog FILE --tasks FILE [--model NAME]... [--candidates FILE] [--price MODEL=IN/OUT]... [--report FILE.html] [--parallel N] [--rps R] [--limit N] [--shuffle [--seed S]] [--json]")
	fs.Bool("select", true, "score whole selections (this mode) instead of the ranking")
	catalog := fs.String("catalog", "", "tool catalog (any format the registry reads)")
	tasksFile := fs.String("tasks", "", "tasks.jsonl: {\"id\",\"task\",\"sub_tasks\",\"calls\":[{\"tool\",\"args\":{\"param\":[acceptable values]}}]} per line")
	skipInvalid := fs.Bool("skip-invalid", true, skipInvalidUsage)
	var models, roles stringList
	fs.Var(&models, "model", "a model at the configured endpoint to score (repeatable)")
	candidates := fs.String("candidates", "", "a JSON array of named candidates: {\"name\", \"base_url\", \"api_key_file\" | \"api_key_env\", \"model\", \"provider\", \"mode\", \"reasoning\", \"top_k\", \"offer_tokens\"}")
	prices := priceList{}
	fs.Var(prices, "price", "`MODEL=IN/OUT`: dollars per million prompt / completion tokens (repeatable); gives the cost")
	fs.Bool("json", false, "print {\"candidates\":[...]} (the default when stdout is not a terminal)")
	report := fs.String("report", "", "write a self-contained HTML report to `FILE.html`")
	parallel := fs.Int("parallel", 1, "selections run at once")
	rps := fs.Float64("rps", 0, "at most this many selections start per second (0: no bound)")
	limit := fs.Int("limit", 0, "score only the first N tasks (after --shuffle; 0: all)")
	shuffle := fs.Bool("shuffle", false, "shuffle the tasks (with --seed, or a seed printed on stderr)")
	seed := fs.Int64("seed", 0, "the shuffle's seed (0: a random one, printed)")
	fs.Var(&roles, "role", "a role the caller holds (repeatable), as select's --role")
	allowUnsafe := fs.Bool("allow-unsafe", false, "offer tools marked safe: false, as select's --allow-unsafe")
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		return fail(env, name, exitUsage, "unexpected argument %q", fs.Arg(0))
	case *catalog == "":
		return fail(env, name, exitUsage, "--catalog is required")
	case *tasksFile == "":
		return fail(env, name, exitUsage, "--tasks is required")
	case *parallel < 1:
		return fail(env, name, exitUsage, "--parallel wants 1 or more")
	case *rps < 0:
		return fail(env, name, exitUsage, "--rps wants 0 (no bound) or more")
	case *limit < 0:
		return fail(env, name, exitUsage, "--limit wants 0 (all) or more")
	}
	tasks, err := selecteval.LoadTasks(*tasksFile)
	if err != nil {
		return fail(env, name, exitUsage, "%v", err)
	}
	reg, code, ok := loadCatalog(env, name, *catalog, !*skipInvalid)
	if !ok {
		return code
	}
	if err := selecteval.CheckTasks(reg, tasks); err != nil {
		return fail(env, name, exitUsage, "%s: %v", *tasksFile, err)
	}
	if *shuffle {
		if *seed == 0 {
			*seed = time.Now().UnixNano()
			fmt.Fprintf(env.stderr, "toolselect %s: shuffled with --seed %d\n", name, *seed)
		}
		r := rand.New(rand.NewSource(*seed))
		r.Shuffle(len(tasks), func(i, j int) { tasks[i], tasks[j] = tasks[j], tasks[i] })
	}
	if *limit > 0 && *limit < len(tasks) {
		tasks = tasks[:*limit]
	}
	base, err := selector.ConfigFromEnvMap(environMap(env, selectorEnvVars))
	if err != nil {
		return fail(env, name, exitUsage, "%s", redactKey(err.Error(), env))
	}
	var specs []selecteval.Spec
	if *candidates != "" {
		b, err := os.ReadFile(*candidates)
		if err != nil {
			return fail(env, name, exitUsage, "--candidates: %v", err)
		}
		if specs, err = selecteval.ParseSpecs(b); err != nil {
			return fail(env, name, exitUsage, "--candidates %s: %v", *candidates, err)
		}
	}
	for _, m := range models {
		specs = append(specs, selecteval.Spec{Name: m, Model: &m})
	}
	if len(specs) == 0 {
		specs = []selecteval.Spec{{Name: base.Model}}
		if base.Model == "" {
			specs[0].Name = "default"
		}
	}
	var cands []selecteval.Candidate
	var secrets []string
	for i := range specs {
		c, err := specs[i].Candidate(base.Settings, env.getenv)
		if err != nil {
			return fail(env, name, exitUsage, "%s", redactKey(err.Error(), env))
		}
		if c.Config.BaseURL == "" && c.Config.APIKey == "" {
			return fail(env, name, exitUsage, "candidate %q: %s", c.Name, endpointHint)
		}
		if len(c.Config.APIKey) >= 4 {
			secrets = append(secrets, c.Config.APIKey)
		}
		cands = append(cands, c)
	}
	redact := func(s string) string {
		s = redactKey(s, env)
		for _, k := range secrets {
			s = strings.ReplaceAll(s, k, "[REDACTED]")
		}
		return s
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := selecteval.Options{Parallel: *parallel, RPS: *rps, Prices: prices, Roles: roles, AllowUnsafe: *allowUnsafe}
	bar := progressBar(env)
	if bar != nil {
		opts.Progress = bar.show
	}
	rep, err := selecteval.Run(ctx, reg, tasks, cands, opts)
	if bar != nil {
		bar.done()
	}
	if err != nil {
		return fail(env, name, exitUsage, "%s", redact(err.Error()))
	}
	for i := range rep.Candidates {
		for j := range rep.Candidates[i].Results {
			r := &rep.Candidates[i].Results[j]
			r.Error = redact(r.Error)
		}
	}
	if rep.Interrupted {
		fmt.Fprintf(env.stderr, "toolselect %s: interrupted: %s\n", name, ranSummary(rep))
	}
	if *report != "" {
		if err := writeSelectReport(*report, rep, *catalog, *tasksFile); err != nil {
			return fail(env, name, exitFailed, "--report: %v", err)
		}
	}
	if env.humanOutput(fs) {
		printSelectTable(env.stdout, rep)
	} else {
		b, err := json.Marshal(struct {
			Candidates []selecteval.Score `json:"candidates"`
		}{rep.Candidates})
		if err != nil {
			return fail(env, name, exitFailed, "encoding the scores: %v", err)
		}
		env.stdout.Write(append(b, '\n'))
	}
	if rep.Interrupted {
		return exitFailed
	}
	return exitOK
}

// ranSummary says how many tasks each candidate ran, of how many.
func ranSummary(rep *selecteval.Report) string {
	parts := make([]string, len(rep.Candidates))
	for i, s := range rep.Candidates {
		parts[i] = fmt.Sprintf("%s ran %d of %d tasks", s.Name, s.Tasks, rep.Total)
	}
	return strings.Join(parts, ", ")
}

// printSelectTable writes the candidates side by side, best first.
func printSelectTable(w io.Writer, rep *selecteval.Report) {
	best := selecteval.Best(rep.Candidates)
	rows := [][]string{{"candidate", "model", "tasks", "exact", "tools", "fail-closed", "dropped", "p50 ms", "p95 ms", "prompt tok", "compl. tok", "cost $"}}
	for _, s := range best {
		cost := "-"
		if s.Cost != nil {
			cost = fmt.Sprintf("%.4f", *s.Cost)
		}
		rows = append(rows, []string{s.Name, s.Model, strconv.Itoa(s.Tasks), pct(s.Exact), pct(s.ToolAccuracy), pct(s.FailClosed),
			strconv.Itoa(s.Dropped), fmt.Sprintf("%.0f", s.Latency.P50), fmt.Sprintf("%.0f", s.Latency.P95),
			strconv.Itoa(s.PromptTokens), strconv.Itoa(s.CompletionTokens), cost})
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i < 2 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	for _, s := range best {
		if len(s.FailClosedKinds) > 0 {
			fmt.Fprintf(w, "%s failed closed by kind: %s\n", s.Name, kinds(s.FailClosedKinds))
		}
	}
	if rep.Interrupted {
		fmt.Fprintf(w, "partial: %s\n", ranSummary(rep))
	}
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// kinds writes "timeout 3, parse 1" in a stable order.
func kinds(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// bar is the progress bar drawn on stderr when it is a terminal.
type bar struct {
	w    io.Writer
	last time.Time
}

// progressBar returns a bar when stderr is a terminal, else nil.
func progressBar(env *cmdEnv) *bar {
	f, ok := env.stderr.(*os.File)
	if !ok || !isTerminal(f) {
		return nil
	}
	return &bar{w: env.stderr}
}

func (b *bar) show(p selecteval.Progress) {
	if p.Done != p.Total && time.Since(b.last) < 100*time.Millisecond {
		return
	}
	b.last = time.Now()
	const width = 30
	filled := width * p.Done / max(1, p.Total)
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d %s\x1b[K", strings.Repeat("#", filled), strings.Repeat(".", width-filled), p.Done, p.Total, p.Candidate)
}

func (b *bar) done() { fmt.Fprint(b.w, "\r\x1b[K") }
