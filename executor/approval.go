package executor

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolselect/toolselect/registry"
)

// pendingApproval is a call that was asked about and not answered yet: the
// tool, the validated arguments and why it is asked. The *CallError of the
// parked call carries its ID ([CallError.PendingID]) and arguments;
// [Executor.Resume] runs it as it was asked about, without selecting or
// hydrating it again. It is data (JSON), so an approvalStore may keep it
// anywhere (Redis, for several processes).
type pendingApproval struct {
	// ID is the pending approval's own ID, random and used once.
	ID string `json:"id"`
	// Call is the parked call as its audit record has it: its ID, tool,
	// arguments (validated when Validated), their hash, any repair, and
	// when it was parked (Start).
	Call Record `json:"call"`
	// Definition is a copy of the tool's definition, to show.
	Definition registry.Tool `json:"definition"`
	// Reason is why the call is asked about (see [ApprovalRequest.Reason]).
	Reason registry.Rule `json:"reason"`
}

// approvalStore keeps the executor's approval state: calls waiting for an
// answer, and how often each exact call (tool and arguments) was declined,
// so that a model retrying a declined call is told, not asked about forever.
// Views of one executor share it. It must be safe for concurrent use; the
// one implementation is memoryApprovals (a shared store, e.g. Redis, is the
// next one).
type approvalStore interface {
	// Park keeps p until Take.
	Park(ctx context.Context, p pendingApproval) error
	// Take returns and removes the pending approval id (false: none, or
	// taken already: an ID resumes one call once).
	Take(ctx context.Context, id string) (pendingApproval, bool, error)
	// Declined adds n (0 or 1) to the count of declines of the call key and
	// returns the count.
	Declined(ctx context.Context, key string, n int) (int, error)
}

// memoryApprovals is an approvalStore in memory. Its zero value is ready to use.
type memoryApprovals struct {
	mu       sync.Mutex
	pending  map[string]pendingApproval
	declined map[string]int
}

// Park keeps p.
func (m *memoryApprovals) Park(_ context.Context, p pendingApproval) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil {
		m.pending = map[string]pendingApproval{}
	}
	m.pending[p.ID] = p
	return nil
}

// Take returns and removes the pending approval id.
func (m *memoryApprovals) Take(_ context.Context, id string) (pendingApproval, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pending[id]
	delete(m.pending, id)
	return p, ok, nil
}

// Declined adds n to key's count of declines and returns it.
func (m *memoryApprovals) Declined(_ context.Context, key string, n int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.declined == nil {
		m.declined = map[string]int{}
	}
	m.declined[key] += n
	return m.declined[key], nil
}

// argsHash is the hex SHA-256 of args, the audit record's ArgsSHA256.
func argsHash(args json.RawMessage) string {
	s := sha256.Sum256(args)
	return hex.EncodeToString(s[:])
}

// declineKey names one exact call: its tool and the hash of its arguments.
func declineKey(tool string, args json.RawMessage) string { return tool + "\x00" + argsHash(args) }

func newPendingID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// asked is how one ask ended: approved (with the arguments to run and who
// approved), or err, a *CallError for the record.
type asked struct {
	args   json.RawMessage
	by     string
	edited bool
	runner func(ctx context.Context) (any, error)
}

// ask puts inv to the approver: a call declined before is refused without
// asking again (the count is in the message); no approver parks the call for
// [Executor.Resume]; the answer is checked and, when it carries edited
// arguments, they are validated again. What runs is built from the approved
// copy, never from inv.Args after the fact.
func (e *Executor) ask(ctx context.Context, inv *Invocation, rec *Record) (asked, error) {
	c := &Call{ID: inv.ID, Tool: inv.Tool}
	args := append(json.RawMessage(nil), inv.Args...) // the copy asked about, and run
	rec.Args, rec.ArgsSHA256 = args, argsHash(args)
	key := declineKey(inv.Tool, args)
	if n, err := e.approvals.Declined(ctx, key, 0); err != nil {
		return asked{}, e.refused(c, inv.Tool, fmt.Errorf("%w: the approval store failed: %w", ErrApprovalDenied, err))
	} else if n > 0 {
		n, _ = e.approvals.Declined(ctx, key, 1)
		return asked{}, e.refused(c, inv.Tool, fmt.Errorf("%w: this exact call was declined before and is not asked about again (declined or retried %d times); change the arguments or stop", ErrApprovalDenied, n))
	}
	if e.opts.Approver == nil {
		return asked{}, e.park(ctx, inv, args)
	}
	req := ApprovalRequest{ID: inv.ID, Tool: inv.entry.Tool(), Args: append(json.RawMessage(nil), args...),
		Validated: inv.Validated, ArgsSHA256: rec.ArgsSHA256, Reason: askReason(inv.entry.Def())}
	a, err := e.callApprover(ctx, req)
	switch {
	case ctx.Err() != nil:
		return asked{}, &CallError{ID: inv.ID, Tool: inv.Tool, Outcome: OutcomeCanceled, Err: fmt.Errorf("waiting for approval: %w", ctx.Err())}
	case errors.Is(err, ErrApprovalPending):
		return asked{}, e.park(ctx, inv, args)
	case err != nil:
		return asked{}, e.refused(c, inv.Tool, fmt.Errorf("%w: the approver failed: %w", ErrApprovalDenied, err))
	}
	return e.answered(ctx, inv.entry, inv.binding, c, args, a, rec)
}

// callApprover asks the approver under [Options.ApprovalTimeout], in a
// goroutine of its own so that one ignoring its context cannot hold the
// call past the timeout (its late answer is discarded); a panic is its
// failure. Either way a refusal, never a run.
func (e *Executor) callApprover(ctx context.Context, req ApprovalRequest) (Approval, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if e.opts.ApprovalTimeout > 0 {
		actx, cancel = context.WithTimeout(ctx, e.opts.ApprovalTimeout)
	}
	defer cancel()
	type answer struct {
		a   Approval
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- answer{err: fmt.Errorf("the approver panicked: %v", p)}
			}
		}()
		a, err := e.opts.Approver(actx, req)
		ch <- answer{a, err}
	}()
	select {
	case got := <-ch:
		if actx.Err() != nil && ctx.Err() == nil {
			return Approval{}, fmt.Errorf("no answer within %s", e.opts.ApprovalTimeout)
		}
		return got.a, got.err
	case <-actx.Done():
		if ctx.Err() != nil {
			return Approval{}, ctx.Err()
		}
		return Approval{}, fmt.Errorf("no answer within %s", e.opts.ApprovalTimeout)
	}
}

// answered applies the answer a to the call of entry with args: a decline is
// counted and refused; an approval bound to other arguments is refused;
// edited arguments are validated again; the runner is built from exactly
// the arguments approved.
func (e *Executor) answered(ctx context.Context, entry *registry.Entry, b *binding, c *Call, args json.RawMessage, a Approval, rec *Record) (asked, error) {
	if a.ArgsSHA256 != "" && a.ArgsSHA256 != argsHash(args) {
		return asked{}, e.refused(c, c.Tool, fmt.Errorf("%w: the approval was given for other arguments (sha256 %s, asked about %s)", ErrApprovalDenied, a.ArgsSHA256, argsHash(args)))
	}
	if !a.Approved {
		n, _ := e.approvals.Declined(ctx, declineKey(c.Tool, args), 1)
		msg := "denied"
		if a.By != "" {
			msg += " by " + a.By
		}
		if a.Reason != "" {
			msg += ": " + a.Reason
		}
		if n > 1 {
			msg += fmt.Sprintf(" (this exact call declined %d times)", n)
		}
		return asked{}, e.refused(c, c.Tool, fmt.Errorf("%w: %s", ErrApprovalDenied, msg))
	}
	out := asked{args: args, by: a.By}
	if out.by == "" {
		out.by = "approver"
	}
	if a.Args != nil {
		out.args, out.edited = normalizeArgs(append(json.RawMessage(nil), a.Args...)), true
		rec.ApprovalEdited = true
	}
	runner, checked, err := instantiate(entry, b, out.args)
	if err != nil {
		return asked{}, e.invalid(c, c.Tool, fmt.Errorf("the approved arguments: %w", err))
	}
	out.args, out.runner = checked, runner
	rec.Args, rec.ArgsSHA256, rec.ApprovedBy = checked, argsHash(checked), out.by
	return out, nil
}

// park keeps the call for [Executor.Resume] and returns the error that says so.
func (e *Executor) park(ctx context.Context, inv *Invocation, args json.RawMessage) error {
	p := &pendingApproval{ID: newPendingID(), Definition: inv.entry.Tool(), Reason: askReason(inv.entry.Def()),
		Call: Record{ID: inv.ID, Tool: inv.Tool, Args: args, ArgsSHA256: argsHash(args), Validated: inv.Validated,
			Repaired: inv.Repaired, OriginalArgs: inv.OriginalArgs, Start: time.Now().UTC()}}
	if err := e.approvals.Park(ctx, *p); err != nil {
		return e.refused(&Call{ID: inv.ID, Tool: inv.Tool}, inv.Tool, fmt.Errorf("%w: the approval store failed: %w", ErrApprovalDenied, err))
	}
	return e.worded(&CallError{ID: inv.ID, Tool: inv.Tool, Outcome: OutcomePending, PendingID: p.ID, Args: args, ArgsSHA256: p.Call.ArgsSHA256,
		Err: fmt.Errorf("%w: %q waits for approval (resume it with ID %s)", ErrApprovalPending, inv.Tool, p.ID)})
}

// Resume answers the pending approval id ([CallError.PendingID]) and,
// when a approves, runs the call it holds: the tool and the arguments asked
// about (or a's edited Args, validated again), under this executor's policy
// as it is now (a tool that became refused stays refused). Each ID resumes
// once; an unknown or used one is refused. It returns what [Executor.Run]
// returns, and writes the call's audit record (the parked call had one,
// outcome pending).
func (e *Executor) Resume(ctx context.Context, id string, a Approval) (Result, error) {
	parked, ok, err := e.approvals.Take(ctx, id)
	p := parked.Call
	c := &Call{ID: p.ID, Tool: p.Tool}
	start := time.Now()
	rec := Record{ID: p.ID, Tool: p.Tool, Args: p.Args, OriginalArgs: p.OriginalArgs, Validated: p.Validated,
		Repaired: p.Repaired, ArgsSHA256: p.ArgsSHA256, Start: start}
	ctx, span := startToolSpan(ctx, rec.ID, rec.Tool, start)
	done := func(res Result, err error) (Result, error) {
		e.record(ctx, span, rec, time.Since(start), err, res)
		return res, err
	}
	fail := func(err error) (Result, error) { return done(Result{ID: p.ID, Tool: p.Tool}, err) }
	switch {
	case err != nil:
		return fail(e.refused(c, p.Tool, fmt.Errorf("%w: the approval store failed: %w", ErrApprovalDenied, err)))
	case !ok:
		c.Tool, rec.Tool = "(unknown)", "(unknown)"
		return fail(e.refused(c, c.Tool, fmt.Errorf("%w: no call waits for approval %q (unknown, or resumed already)", ErrApprovalDenied, id)))
	}
	entry, found := e.reg.Lookup(p.Tool)
	if !found {
		return fail(e.invalid(c, p.Tool, fmt.Errorf("%w %q", registry.ErrUnknownTool, p.Tool)))
	}
	b := e.binding(entry.Name())
	if b == nil {
		return fail(e.refused(c, p.Tool, fmt.Errorf("%w %q", ErrNoHandler, p.Tool)))
	}
	policy, ask, err := e.checkStatic(entry)
	rec.Policy = policy
	if err != nil {
		return fail(e.refused(c, p.Tool, err))
	}
	if !ask {
		// Only a call Decide still asks about is resumed: the policy changed.
		return fail(e.refused(c, p.Tool, fmt.Errorf("%w: %q is no longer asked about under this executor's policy (%s)", ErrApprovalDenied, p.Tool, policy)))
	}
	got, err := e.answered(ctx, entry, b, c, p.Args, a, &rec)
	if err != nil {
		return fail(err)
	}
	inv := &Invocation{ID: p.ID, Tool: p.Tool, Args: got.args, Validated: p.Validated, entry: entry, binding: b, runner: got.runner, policy: policy}
	runStart := time.Now()
	res, err := e.execute(ctx, inv)
	res.Duration = time.Since(runStart)
	return done(res, err)
}
