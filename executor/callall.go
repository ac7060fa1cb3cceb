package executor

import "context"

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
