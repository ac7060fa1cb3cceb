package executor

import (
	"context"
	"slices"

	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// Resolve turns a task into calls through [Options.Select]. The
// request is completed so that the model is offered only what this executor
// would run: Registry defaults to the executor's, Roles to [Options.Roles]
// (the request's roles count only where [Options.Roles] holds them too),
// [Options.Capabilities] are added to the request's, and unsafe tools are
// offered only when [Options.AllowUnsafe] is set or the executor asks about
// them ([Options.Approver]), and the request allows or asks too. Selection
// errors (e.g. a *selector.SelectionError, errors.Is selector.ErrFailClosed)
// are returned unchanged, with no calls.
func (e *Executor) Resolve(ctx context.Context, req selector.Request) ([]Call, error) {
	if e.opts.Select == nil {
		return nil, ErrNoSelector
	}
	if req.Registry == nil {
		req.Registry = e.reg
	}
	el := req.Eligibility() // the request's Caller with its shorthands
	req.Caller, req.AllowUnsafe, req.Roles, req.Capabilities = registry.Eligibility{}, el.AllowUnsafe, el.Roles, el.Capabilities
	if req.Roles == nil {
		req.Roles = e.opts.Roles
	} else {
		// Only roles this executor also holds: a tool offered for any other
		// would be refused when run.
		var both []string
		for _, r := range req.Roles {
			if slices.Contains(e.opts.Roles, r) {
				both = append(both, r)
			}
		}
		req.Roles = both
	}
	for _, c := range e.opts.Capabilities {
		if !slices.Contains(req.Capabilities, c) {
			req.Capabilities = append(slices.Clip(req.Capabilities), c)
		}
	}
	// An unsafe tool is offered when both sides would let it run or ask
	// about it (for offering, asking and allowing are alike:
	// registry.Eligibility.Check); the executor still asks when it runs.
	req.AllowUnsafe = (el.AllowUnsafe || el.Ask) && (e.opts.AllowUnsafe || e.caller().Ask)
	tcs, err := e.opts.Select(ctx, req)
	if err != nil {
		return nil, err
	}
	return FromToolCalls(tcs), nil
}

// FromToolCalls converts selector calls, keeping their order. (A
// selector.NativeCall, arguments as a JSON string, is
// Call{ID: nc.ID, Tool: nc.Name, Args: json.RawMessage(nc.Arguments)}.)
func FromToolCalls(tcs []selector.ToolCall) []Call {
	out := make([]Call, len(tcs))
	for i, tc := range tcs {
		out[i] = Call{Tool: tc.Tool, Args: tc.Args, Reasoning: tc.Reasoning}
	}
	return out
}

// CallOutcome is what CallAll reports for one call.
type CallOutcome struct {
	Call   Call
	Result Result
	Err    error // a *CallError when the call was refused, invalid or canceled
}

// CallAll runs calls one after another, in order, and reports each outcome.
// A refused or failing call does not stop the others; once ctx ends the
// remaining calls are reported canceled.
func (e *Executor) CallAll(ctx context.Context, calls []Call) []CallOutcome {
	out := make([]CallOutcome, len(calls))
	for i, c := range calls {
		res, err := e.Call(ctx, c)
		out[i] = CallOutcome{Call: c, Result: res, Err: err}
	}
	return out
}
