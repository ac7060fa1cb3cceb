package selecteval

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/toolselect/toolselect/internal/quantile"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// Candidate is one model with its settings, as the selector takes them.
type Candidate struct {
	// Name labels the candidate in the scores (default: the model).
	Name string
	// Config is the selector's configuration. With neither Ranker nor
	// Prefilter set, the offer is select's default: every eligible tool while
	// their view fits OfferTokens, else the top TopK ranked, with search
	// rounds ([rank.Offering]). No feedback is recorded.
	Config selector.Config
	// Client sends the chat completions (nil: [selector.NewOpenAIClient]).
	Client selector.ChatClient
}

// Price is what an endpoint charges, in dollars per million tokens.
type Price struct {
	In, Out float64
}

// Progress is reported after each task scored.
type Progress struct {
	// Candidate is the name of the candidate the task ran for.
	Candidate string
	// Done of Total selections have been scored.
	Done, Total int
}

// Options tune a [Run].
type Options struct {
	// Parallel is how many selections run at once (0 or 1: one).
	Parallel int
	// RPS bounds how many selections start per second, across candidates
	// (0: no bound). Retries are the selector's own (its fallback model).
	RPS float64
	// Prices holds each model's [Price]; a candidate whose model has none
	// gets no Cost.
	Prices map[string]Price
	// Roles and AllowUnsafe are passed in every request, as select's
	// --role and --allow-unsafe.
	Roles       []string
	AllowUnsafe bool
	// Progress, when set, is called after each task scored (from the
	// goroutine that scored it, one call at a time).
	Progress func(Progress)
}

// Report is the outcome of a [Run].
type Report struct {
	// Candidates are the scores, in the order the candidates were given.
	Candidates []Score `json:"candidates"`
	// Total is how many tasks each candidate was to run; Interrupted says
	// the context ended first (each Score's Tasks says how many ran).
	Total       int  `json:"-"`
	Interrupted bool `json:"-"`
}

// Score is one candidate's figures over the tasks it ran.
type Score struct {
	// Name and Model of the candidate.
	Name  string `json:"name"`
	Model string `json:"model"`
	// Tasks is how many tasks were scored.
	Tasks int `json:"tasks"`
	// ToolAccuracy is the share of tasks whose set of tools equals the gold
	// set; Exact the share whose tools and arguments pass the checker;
	// FailClosed the share whose selection failed (the kind is in each
	// Result's FailKind, counted in FailClosedKinds).
	ToolAccuracy float64 `json:"tool_accuracy"`
	Exact        float64 `json:"exact"`
	FailClosed   float64 `json:"fail_closed"`
	// FailClosedKinds counts the failed selections by kind.
	FailClosedKinds map[string]int `json:"-"`
	// Dropped is how many calls the selector dropped (invalid when
	// fail-open, beyond MaxCalls), over every task.
	Dropped int `json:"dropped"`
	// Latency is the median and 95th percentile of the selections' wall time.
	Latency Latency `json:"latency_ms"`
	// PromptTokens and CompletionTokens are the totals the endpoint
	// reported, over every attempt of every task.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Cost in dollars, when the model has a [Price]; nil otherwise.
	Cost *float64 `json:"cost"`
	// Results has one entry per task scored, in task order.
	Results []Result `json:"results"`
}

// Latency holds percentiles in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
}

// Result is one task's outcome.
type Result struct {
	// ID is the task's id.
	ID string `json:"id"`
	// Verdict is one of VerdictExact, VerdictWrongArgs, VerdictWrongTools,
	// VerdictFailClosed.
	Verdict string `json:"verdict"`
	// ToolsOK and Exact are the task's two accuracies.
	ToolsOK bool `json:"tools_ok"`
	Exact   bool `json:"exact"`
	// Difference is the first difference from gold ("" when exact).
	Difference string `json:"difference,omitempty"`
	// Calls are the calls the selector returned.
	Calls []selector.ToolCall `json:"calls"`
	// FailKind says why a failed selection failed: the last attempt's
	// failure kind (timeout, http_status, parse, validation, ...), or
	// no_eligible_tools / no_ranked_tools when no model was asked.
	FailKind string `json:"fail_kind,omitempty"`
	// Error is the selection's error message.
	Error string `json:"error,omitempty"`
	// Dropped is how many calls the selector dropped.
	Dropped int `json:"dropped"`
	// LatencyMS is the selection's wall time.
	LatencyMS float64 `json:"latency_ms"`
	// PromptTokens and CompletionTokens over the task's attempts.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Attempts is how many model calls the selection made.
	Attempts int `json:"attempts"`
}

// Run scores every candidate on every task. It returns an error, and no
// report, when a candidate cannot be built or a task is refused as a bad
// request; a selection that fails is a scored result. When ctx ends, the
// selections under way are abandoned and the report holds what was scored
// (Interrupted set).
func Run(ctx context.Context, reg *registry.Registry, tasks []Task, cands []Candidate, opts Options) (*Report, error) {
	if len(cands) == 0 {
		return nil, errors.New("selecteval: no candidate")
	}
	if err := CheckTasks(reg, tasks); err != nil {
		return nil, err
	}
	sels := make([]*selector.ToolSelector, len(cands))
	rep := &Report{Candidates: make([]Score, len(cands)), Total: len(tasks)}
	for i := range cands {
		c := &cands[i]
		cfg := c.Config
		if cfg.Ranker == nil && cfg.Prefilter == nil {
			cfg.Ranker = &rank.Offering{}
		}
		cfg.Recorder = nil
		client := c.Client
		if client == nil {
			var err error
			if client, err = selector.NewOpenAIClient(&cfg, nil); err != nil {
				return nil, fmt.Errorf("candidate %s: %w", c.label(), err)
			}
		}
		sel, err := selector.New(client, &cfg)
		if err != nil {
			return nil, fmt.Errorf("candidate %s: %w", c.label(), err)
		}
		sels[i] = sel
		rep.Candidates[i] = Score{Name: c.label(), Model: cfg.Model, FailClosedKinds: map[string]int{}}
	}
	type job struct{ cand, task int }
	results := make([][]*Result, len(cands))
	for i := range results {
		results[i] = make([]*Result, len(tasks))
	}
	jobs := make(chan job)
	total := len(cands) * len(tasks)
	var (
		mu      sync.Mutex
		done    int
		firstEr error
	)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	pace := newPacer(opts.RPS)
	var wg sync.WaitGroup
	for w := 0; w < max(1, opts.Parallel); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r, err := runOne(runCtx, sels[j.cand], reg, &tasks[j.task], &opts)
				mu.Lock()
				switch {
				case err != nil:
					if firstEr == nil {
						firstEr = fmt.Errorf("candidate %s, task %q: %w", rep.Candidates[j.cand].Name, tasks[j.task].ID, err)
						cancel()
					}
				case r != nil && runCtx.Err() == nil:
					results[j.cand][j.task] = r
					done++
					if opts.Progress != nil {
						opts.Progress(Progress{Candidate: rep.Candidates[j.cand].Name, Done: done, Total: total})
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for ci := range cands {
		for ti := range tasks {
			if pace.wait(runCtx) != nil {
				break feed
			}
			select {
			case jobs <- job{ci, ti}:
			case <-runCtx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if firstEr != nil {
		return nil, firstEr
	}
	rep.Interrupted = ctx.Err() != nil
	for i := range cands {
		score(&rep.Candidates[i], results[i], opts.Prices)
	}
	return rep, nil
}

func (c *Candidate) label() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Config.Model
}

// runOne runs one task's selection and checks it. A nil result (and nil
// error) is a selection ctx cut short: not scored.
func runOne(ctx context.Context, sel *selector.ToolSelector, reg *registry.Registry, t *Task, opts *Options) (*Result, error) {
	req := selector.Request{
		Task:     selector.Task{ID: t.ID, Description: t.Task},
		Registry: reg, Roles: opts.Roles, AllowUnsafe: opts.AllowUnsafe,
	}
	for i, s := range t.SubTasks {
		req.Task.SubTasks = append(req.Task.SubTasks, selector.SubTask{ID: fmt.Sprint(i + 1), Description: s})
	}
	start := time.Now()
	res, err := sel.Select(ctx, req)
	elapsed := time.Since(start)
	if ctx.Err() != nil {
		return nil, nil
	}
	if errors.Is(err, selector.ErrBadRequest) {
		return nil, err
	}
	r := &Result{ID: t.ID, LatencyMS: ms(elapsed), Calls: []selector.ToolCall{}}
	var attempts []selector.Attempt
	if res != nil {
		attempts = res.Attempts
		r.Dropped = len(res.Dropped)
		if res.Calls != nil {
			r.Calls = res.Calls
		}
	}
	var se *selector.SelectionError
	if len(attempts) == 0 && errors.As(err, &se) {
		attempts = se.Attempts
	}
	r.Attempts = len(attempts)
	for _, a := range attempts {
		r.PromptTokens += a.PromptTokens
		r.CompletionTokens += a.CompletionTokens
	}
	if err != nil {
		r.Verdict, r.Error = VerdictFailClosed, err.Error()
		r.FailKind = failKind(err, attempts)
		r.Difference = "the selection failed (" + r.FailKind + ")"
		return r, nil
	}
	r.ToolsOK, r.Exact, r.Difference = Check(t, r.Calls)
	switch {
	case r.Exact:
		r.Verdict = VerdictExact
	case r.ToolsOK:
		r.Verdict = VerdictWrongArgs
	default:
		r.Verdict = VerdictWrongTools
	}
	return r, nil
}

// failKind names why a selection failed: the last failed attempt's kind
// when models were asked, else the selection's own kind.
func failKind(err error, attempts []selector.Attempt) string {
	for i := len(attempts) - 1; i >= 0; i-- {
		if attempts[i].Kind != "" {
			return string(attempts[i].Kind)
		}
	}
	return selector.ErrorKind(err)
}

// score sums one candidate's results (nil: not run) into s.
func score(s *Score, results []*Result, prices map[string]Price) {
	s.Results = []Result{}
	var lat []time.Duration
	var tools, exact, failed int
	for _, r := range results {
		if r == nil {
			continue
		}
		s.Results = append(s.Results, *r)
		lat = append(lat, time.Duration(r.LatencyMS*float64(time.Millisecond)))
		s.Dropped += r.Dropped
		s.PromptTokens += r.PromptTokens
		s.CompletionTokens += r.CompletionTokens
		if r.ToolsOK {
			tools++
		}
		if r.Exact {
			exact++
		}
		if r.Verdict == VerdictFailClosed {
			failed++
			s.FailClosedKinds[r.FailKind]++
		}
	}
	s.Tasks = len(s.Results)
	if s.Tasks > 0 {
		n := float64(s.Tasks)
		s.ToolAccuracy, s.Exact, s.FailClosed = float64(tools)/n, float64(exact)/n, float64(failed)/n
	}
	s.Latency = Latency{P50: ms(quantile.Of(lat, 0.50)), P95: ms(quantile.Of(lat, 0.95))}
	if p, ok := prices[s.Model]; ok {
		c := (float64(s.PromptTokens)*p.In + float64(s.CompletionTokens)*p.Out) / 1e6
		s.Cost = &c
	}
}

// Best orders scores best first: exact, then tool accuracy, then fewer
// failed selections, then the lower median latency, then the name.
func Best(scores []Score) []Score {
	out := append([]Score(nil), scores...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		switch {
		case a.Exact != b.Exact:
			return a.Exact > b.Exact
		case a.ToolAccuracy != b.ToolAccuracy:
			return a.ToolAccuracy > b.ToolAccuracy
		case a.FailClosed != b.FailClosed:
			return a.FailClosed < b.FailClosed
		case a.Latency.P50 != b.Latency.P50:
			return a.Latency.P50 < b.Latency.P50
		}
		return a.Name < b.Name
	})
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// pacer lets at most rps selections start per second (0: no bound).
type pacer struct {
	every time.Duration
	next  time.Time
}

func newPacer(rps float64) *pacer {
	if rps <= 0 {
		return &pacer{}
	}
	return &pacer{every: time.Duration(float64(time.Second) / rps)}
}

// wait blocks until the next start is allowed; it is called from one goroutine.
func (p *pacer) wait(ctx context.Context) error {
	if p.every == 0 {
		return ctx.Err()
	}
	now := time.Now()
	if d := p.next.Sub(now); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		now = p.next
	}
	p.next = now.Add(p.every)
	return nil
}
