package capi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/toolselect/toolselect/selecteval"
	"github.com/toolselect/toolselect/selector"
)

// evalSelectJSON is toolselect_eval_select's request.
type evalSelectJSON struct {
	// Tasks are task objects as a tasks file's lines hold them.
	Tasks []json.RawMessage `json:"tasks"`
	// Config is the base configuration (selector.ConfigFromJSON).
	Config json.RawMessage `json:"config"`
	// Candidates are named partial configurations over Config; none: one
	// candidate, the base, named after its model.
	Candidates []json.RawMessage `json:"candidates"`
	// Env holds the variables the candidates' api_key_env name: the caller
	// reads its own environment.
	Env         map[string]string           `json:"env"`
	Prices      map[string]selecteval.Price `json:"prices"`
	Parallel    int                         `json:"parallel"`
	RPS         float64                     `json:"rps"`
	Roles       []string                    `json:"roles"`
	AllowUnsafe bool                        `json:"allow_unsafe"`
}

// evalSelectOut is its result: the scores, how many tasks each candidate was
// to run, whether a cancel cut the run short, and each candidate's failed
// selections by kind.
type evalSelectOut struct {
	Candidates  []selecteval.Score `json:"candidates"`
	Total       int                `json:"total"`
	Interrupted bool               `json:"interrupted"`
	FailKinds   []map[string]int   `json:"fail_closed_kinds"`
}

// EvalSelect scores whole selections per candidate on the registry's tools
// (selecteval.Run). A cancel ends the run early with what was scored
// ("interrupted": true); it is not an error.
func EvalSelect(reg uint64, req []byte, present bool, cancel uint64) Result {
	rg, r := getRegistry(reg)
	if r != nil {
		return *r
	}
	var in evalSelectJSON
	if r := Strict("request_json", req, present, &in); r != nil {
		return *r
	}
	var lines bytes.Buffer
	for _, t := range in.Tasks {
		if err := json.Compact(&lines, t); err != nil {
			return Fail(ErrArgument, "request_json: tasks: %v", err)
		}
		lines.WriteByte('\n')
	}
	tasks, err := selecteval.ReadTasks(&lines, "tasks")
	if err != nil {
		return Fail(ErrArgument, "request_json: %v", err)
	}
	cfgJSON := in.Config
	if len(cfgJSON) == 0 {
		cfgJSON = json.RawMessage(`{}`)
	}
	base, err := selector.ConfigFromJSON(cfgJSON)
	if err != nil {
		return Fail(ErrArgument, "request_json: config: %v", err)
	}
	specs := []selecteval.Spec{{Name: base.Model}}
	if len(in.Candidates) > 0 {
		all, _ := json.Marshal(in.Candidates)
		if specs, err = selecteval.ParseSpecs(all); err != nil {
			return Fail(ErrArgument, "request_json: candidates: %v", err)
		}
	}
	var cands []selecteval.Candidate
	for i := range specs {
		c, err := specs[i].Candidate(base.Settings, func(k string) string { return in.Env[k] })
		if err != nil {
			return Fail(ErrArgument, "request_json: %v", err)
		}
		if c.Name == "" {
			c.Name = "default"
		}
		if c.Config.BaseURL == "" && c.Config.APIKey == "" {
			return Fail(ErrArgument, "request_json: candidate %q: no base_url and no api_key: no endpoint to ask", c.Name)
		}
		if c.Client, err = newClient(c.Config); err != nil {
			return Fail(ErrArgument, "request_json: candidate %q: %v", c.Name, err)
		}
		c.Config.Logger = quiet
		cands = append(cands, c)
	}
	ctx := context.Background()
	if cancel != 0 {
		v, r := table.get(cancel, KindCancel)
		if r != nil {
			return *r
		}
		ctx = v.(*token).ctx
	}
	rep, err := selecteval.Run(ctx, rg, tasks, cands, selecteval.Options{
		Parallel: in.Parallel, RPS: in.RPS, Prices: in.Prices, Roles: in.Roles, AllowUnsafe: in.AllowUnsafe,
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return Fail(ErrCanceled, "the evaluation was cancelled")
		}
		return Fail(ErrArgument, "%v", err)
	}
	out := evalSelectOut{Candidates: rep.Candidates, Total: rep.Total, Interrupted: rep.Interrupted}
	for _, s := range rep.Candidates {
		out.FailKinds = append(out.FailKinds, s.FailClosedKinds)
	}
	return Ok(out)
}
