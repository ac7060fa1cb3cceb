// Package chat joins the executor to a chat model: [Resolve] turns a task
// into calls through a selector, offering only what the executor would run,
// and [Repairer] asks a model once to correct invalid arguments. It lives
// apart from package executor so that a program which only registers and
// runs tools links no selector.
//
//	sel, _ := selector.New(cfg, client)
//	ex := executor.New(reg, &executor.Options{
//		Repairer: (&chat.Repairer{Client: client, Config: &cfg}).RepairArgs,
//	})
//	calls, err := chat.Resolve(ctx, ex, sel.SelectToolCalls, selector.Request{Task: task})
//	outcomes := ex.CallAll(ctx, calls)
package chat

import (
	"context"
	"errors"
	"slices"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// ErrNoSelector: Resolve was given no select function.
var ErrNoSelector = errors.New("no selector given to Resolve (pass a *selector.ToolSelector's SelectToolCalls)")

// SelectFunc turns a request into the model's calls: a
// *selector.ToolSelector's SelectToolCalls method.
type SelectFunc func(ctx context.Context, req selector.Request) ([]selector.ToolCall, error)

// Resolve turns a task into calls for ex through sel. The request is
// completed so that the model is offered only what ex would run: Registry
// defaults to the executor's, Roles to the executor's (the request's roles
// count only where the executor holds them too, [executor.Executor.Caller]),
// the executor's capabilities are added to the request's, and unsafe tools
// are offered only when the executor allows them or asks about them (it has
// an approver), and the request allows or asks too. Selection errors (e.g. a
// *selector.SelectionError, errors.Is selector.ErrFailClosed) are returned
// unchanged, with no calls. Run the calls with [executor.Executor.CallAll].
func Resolve(ctx context.Context, ex *executor.Executor, sel SelectFunc, req selector.Request) ([]executor.Call, error) {
	if sel == nil {
		return nil, ErrNoSelector
	}
	caller := ex.Caller()
	if req.Registry == nil {
		req.Registry = ex.Registry()
	}
	el := req.Eligibility() // the request's Caller with its shorthands
	// The per-tool rules of both sides stay on Caller (the executor's
	// unsafe mode first): a tool either denies is not offered.
	// A request that neither allows nor asks about unsafe tools is offered
	// none, whatever the executor's unsafe mode.
	rules := registry.Eligibility{Rules: caller.Rules}.With(registry.Eligibility{Rules: el.Rules}).Rules
	if !el.AllowUnsafe && !el.Ask {
		rules.Unsafe = "deny"
	}
	req.Caller = registry.Eligibility{Ask: el.Ask && caller.Ask, Rules: rules}
	req.AllowUnsafe, req.Roles, req.Capabilities = el.AllowUnsafe, el.Roles, el.Capabilities
	if req.Roles == nil {
		req.Roles = caller.Roles
	} else {
		// Only roles this executor also holds: a tool offered for any other
		// would be refused when run.
		var both []string
		for _, r := range req.Roles {
			if slices.Contains(caller.Roles, r) {
				both = append(both, r)
			}
		}
		req.Roles = both
	}
	for _, c := range caller.Capabilities {
		if !slices.Contains(req.Capabilities, c) {
			req.Capabilities = append(slices.Clip(req.Capabilities), c)
		}
	}
	// An unsafe tool is offered when both sides would let it run or ask
	// about it (for offering, asking and allowing are alike:
	// registry.Eligibility.Check); the executor still asks when it runs.
	req.AllowUnsafe = (el.AllowUnsafe || el.Ask) && (caller.AllowUnsafe || caller.Ask)
	tcs, err := sel(ctx, req)
	if err != nil {
		return nil, err
	}
	return FromToolCalls(tcs), nil
}

// FromToolCalls converts selector calls, keeping their order. (A
// selector.NativeCall, arguments as a JSON string, is
// executor.Call{ID: nc.ID, Tool: nc.Name, Args: json.RawMessage(nc.Arguments)}.)
func FromToolCalls(tcs []selector.ToolCall) []executor.Call {
	out := make([]executor.Call, len(tcs))
	for i, tc := range tcs {
		out[i] = executor.Call{Tool: tc.Tool, Args: tc.Args, Reasoning: tc.Reasoning}
	}
	return out
}
