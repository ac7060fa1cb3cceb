package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolselect/toolselect/registry"
)

// defaultTimeout bounds one tool run when neither [Options.Timeout] nor
// [Options.ToolTimeouts] says otherwise.
const defaultTimeout = 30 * time.Second

// Handler runs a tool. args is a JSON object that has passed the tool's schema.
// A returned error is the tool's own failure and becomes a Result with IsError
// (and with the value, if one is returned too, as the failure's detail).
// Handlers must honour ctx: it carries the per-call timeout.
type Handler func(ctx context.Context, args json.RawMessage) (any, error)

// Constructor checks a call's arguments beyond what the schema says (typically
// by decoding them into a typed struct) and returns run, the instantiated call
// (the runner), which runs the tool under the call's context. An error means
// invalid arguments: return a *registry.ValidationError to point at the
// offending fields; any other error becomes one violation with rule
// "constructor". Either way the error is shown to the Repairer.
type Constructor func(args json.RawMessage) (run func(ctx context.Context) (any, error), err error)

type binding struct {
	handler     Handler
	constructor Constructor
	// typed decodes the checked arguments into a handler's input
	// type and returns the runner (AddTool).
	typed func(entry *registry.Entry, args json.RawMessage) (func(ctx context.Context) (any, error), error)
}

// Options configures an Executor. A nil *Options means defaults: no unsafe
// tools, no roles, no approver, a 30 s timeout, no audit sink, no repair.
type Options struct {
	// Caller is who runs the calls: the same value rank.Options.Caller and
	// selector.Request.Caller take. AllowUnsafe, Roles and Capabilities below
	// are shorthands for its fields and add to it.
	Caller registry.Eligibility
	// AllowUnsafe lets tools marked safe: false run.
	AllowUnsafe bool
	// Roles are the caller's roles; a tool that lists roles runs only for a caller holding one.
	Roles []string
	// Capabilities every tool must declare to run (e.g. "readOnly"), as a
	// selection's Request.Capabilities offers only such tools.
	Capabilities []string
	// Approver is asked about every call [registry.Eligibility.Decide] says
	// to ask about: with an approver given, every unsafe tool (whether or not
	// AllowUnsafe is set too: an approver never loosens anything), every tool
	// marked RequiresApproval, every schema-less human-approval tool and
	// every tool an ask rule of [Options.Caller].Rules names (rules, which
	// take precedence, may also deny a tool or allow an unsafe one unasked:
	// [registry.ToolRules]). Without one, unsafe tools run only with AllowUnsafe and the others are
	// refused (ErrApprovalRequired). It sees the validated arguments; what
	// runs is the copy it approved, or its edited Args validated again. It
	// may block (waiting for a human) and must return when ctx ends; an
	// error, a panic or [Options.ApprovalTimeout] is a refusal, never a run;
	// returning [ErrApprovalPending] parks the call for [Executor.Resume].
	// [Options.Caller].Ask without an Approver parks every asked call.
	Approver func(ctx context.Context, req ApprovalRequest) (Approval, error)
	// ApprovalTimeout bounds each wait for the Approver (0: only ctx does);
	// no answer in time is a refusal.
	ApprovalTimeout time.Duration
	// Hint words what would let a refused call run, for [CallError.Hint] and
	// its message, in the names of the program's own front door (a flag, a
	// keyword argument); "" says nothing. nil: Go's words ("set
	// [Options.AllowUnsafe] ..."). The MCP proxy names its flags here.
	Hint func(rule registry.Rule) string
	// Timeout bounds each tool run (0: 30 s; negative: none).
	Timeout time.Duration
	// ToolTimeouts overrides Timeout for the tools it names (canonical
	// names); a negative value means no timeout (the caller's context still
	// applies).
	ToolTimeouts map[string]time.Duration
	// Audit receives one Record per call; nil discards them. It must be safe
	// for concurrent use and not block for long (it runs on the call's path).
	// [SlogSink.Audit] logs them.
	Audit func(ctx context.Context, r Record)
	// Repairer proposes corrected arguments for an invalid call. The
	// executor asks it at most once per call and validates its answer again
	// like any other arguments; an error means "no repair" and the call stays
	// invalid. A ChatRepairer's RepairArgs asks a chat model.
	Repairer func(ctx context.Context, req RepairRequest) (json.RawMessage, error)
}

// Executor hydrates, checks and runs tool calls against a registry. It is
// safe for concurrent use.
//
// An Executor is one caller's policy over a set of handler bindings: [Executor.With]
// gives another caller's view (say an admin's, with unsafe tools allowed)
// sharing the registry and the bindings, so each tool's handler is bound once
// for every view.
type Executor struct {
	reg  *registry.Registry
	opts Options

	handlers *handlers // shared by every view from With

	hidden hiddenCache // find_tool: tools of the registry this executor would refuse

	approvals approvalStore // pending approvals and declined calls
}

// handlers are the handler bindings every view of an executor shares.
type handlers struct {
	mu       sync.RWMutex
	bindings map[string]*binding // canonical name -> binding
	gen      uint64              // bumped on every binding change, under mu
}

// New returns an executor over reg, with no handlers bound.
func New(reg *registry.Registry, opts *Options) *Executor {
	e := newView(reg, opts)
	e.handlers = &handlers{bindings: map[string]*binding{}}
	e.approvals = &memoryApprovals{}
	return e
}

// With returns a view of e with another caller's policy: opts replaces e's
// options as a whole (caller, AllowUnsafe, roles, capabilities, approver,
// audit sink, timeouts, repairer...; nil means the defaults, as for [New]),
// while the registry and every handler binding stay shared. A handler bound
// on any view (Handle, HandleConstructor, Register, AddTool) is bound for e
// and all its views, and a call runs the same handler whichever view it goes
// through; only what the policy allows, and who approves and audits it,
// differ. Views are cheap: one per request or per caller is fine. The
// calls waiting for approval and the calls declined are shared too: a call
// parked through one view is resumed through any ([Executor.Resume] applies
// the policy of the view it is called on), and a call an approver declined
// is not asked about again through another view.
func (e *Executor) With(opts *Options) *Executor {
	v := newView(e.reg, opts)
	v.handlers = e.handlers
	v.approvals = e.approvals
	return v
}

// newView is an executor over reg with opts read, without bindings.
func newView(reg *registry.Registry, opts *Options) *Executor {
	e := &Executor{reg: reg}
	if opts != nil {
		e.opts = *opts
		// The caller is read once, into the shorthand fields the policy reads.
		el := opts.Caller.With(registry.Eligibility{AllowUnsafe: opts.AllowUnsafe, Roles: opts.Roles, Capabilities: opts.Capabilities})
		e.opts.Caller, e.opts.AllowUnsafe = registry.Eligibility{Ask: el.Ask, Rules: el.Rules}, el.AllowUnsafe
		r := &e.opts.Caller.Rules
		r.Allow, r.Ask, r.Deny = slices.Clone(r.Allow), slices.Clone(r.Ask), slices.Clone(r.Deny)
		e.opts.Roles = append([]string(nil), el.Roles...)
		e.opts.Capabilities = append([]string(nil), el.Capabilities...)
		e.opts.ToolTimeouts = maps.Clone(opts.ToolTimeouts)
	}
	if e.opts.Timeout == 0 {
		e.opts.Timeout = defaultTimeout
	}
	return e
}

// Registry returns the registry the executor runs against.
func (e *Executor) Registry() *registry.Registry { return e.reg }

// Handle binds h to the registered tool name (canonical or provider-mapped),
// replacing any earlier binding, for e and every view of it ([Executor.With]).
func (e *Executor) Handle(name string, h Handler) error {
	if h == nil {
		return errors.New("Handle: nil handler")
	}
	return e.bind(name, &binding{handler: h})
}

// HandleConstructor binds a constructor to the registered tool name,
// replacing any earlier binding, for e and every view of it.
func (e *Executor) HandleConstructor(name string, c Constructor) error {
	if c == nil {
		return errors.New("HandleConstructor: nil constructor")
	}
	return e.bind(name, &binding{constructor: c})
}

// Register registers t in the registry and binds h to it, as one step.
func (e *Executor) Register(t registry.Tool, h Handler) error {
	if h == nil {
		return errors.New("Register: nil handler")
	}
	if err := e.reg.Register(t); err != nil {
		return err
	}
	return e.bind(t.Name, &binding{handler: h})
}

// AddTool registers t in e's registry and binds h to it, as one step, with
// the arguments typed: when t has no Parameters its schema is inferred from
// In by [registry.SchemaFor] (struct tags give descriptions, required and
// enums); a schema given in t is kept as written. Each call's arguments are
// validated, then the value validated is decoded into an In for h (a value
// In cannot hold is invalid arguments, with rule "decode"). h's Out is the
// call's result and its error the tool's own failure, as for a [Handler].
func AddTool[In, Out any](e *Executor, t registry.Tool, h func(ctx context.Context, in In) (Out, error)) error {
	if h == nil {
		return errors.New("AddTool: nil handler")
	}
	if !t.HasSchema() {
		schema, err := registry.SchemaFor[In]()
		if err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		t.Parameters = schema
	}
	if err := e.reg.Register(t); err != nil {
		return err
	}
	return e.bind(t.Name, &binding{typed: func(entry *registry.Entry, args json.RawMessage) (func(ctx context.Context) (any, error), error) {
		var in In
		if err := entry.DecodeArgs(args, &in); err != nil {
			return nil, err
		}
		return func(ctx context.Context) (any, error) { return h(ctx, in) }, nil
	}})
}

func (e *Executor) bind(name string, b *binding) error {
	entry, ok := e.reg.Lookup(name)
	if !ok {
		return fmt.Errorf("cannot bind %q: %w", name, registry.ErrUnknownTool)
	}
	h := e.handlers
	h.mu.Lock()
	h.bindings[entry.Name()] = b
	h.gen++
	h.mu.Unlock()
	return nil
}

func (e *Executor) binding(name string) *binding {
	h := e.handlers
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.bindings[name]
}

// Invocation is a hydrated call: a known tool, arguments that passed
// validation, and a runner. Get one from Hydrate; run it with Run.
type Invocation struct {
	// ID is the call's ID, if any.
	ID string
	// Tool is the canonical tool name.
	Tool string
	// Args are the arguments the tool will run with (compact JSON).
	Args json.RawMessage
	// OriginalArgs are the arguments as received, when a repair replaced them.
	OriginalArgs json.RawMessage
	// Validated is false for a schema-less tool.
	Validated bool
	// Repaired is true when Args came from the Repairer.
	Repaired bool

	entry    *registry.Entry
	binding  *binding
	runner   func(ctx context.Context) (any, error)
	policy   string
	ask      bool // Run asks the approver first
	hydrated time.Duration
}

// Entry returns the registry entry of the invocation's tool.
func (inv *Invocation) Entry() *registry.Entry { return inv.entry }

// Policy names the rule that lets the invocation run (the audit record's
// policy: "schema", "no-schema:full", ",unsafe-allowed", ...).
func (inv *Invocation) Policy() string { return inv.policy }

// NeedsApproval reports whether Run will ask the approver first:
// [registry.Eligibility.Decide] said ask for the executor that hydrated it.
func (inv *Invocation) NeedsApproval() bool { return inv.ask }

// ArgsSHA256 is the hex SHA-256 of Args, as the audit record of an asked
// call carries it ([Record.ArgsSHA256], [Approval.ArgsSHA256]).
func (inv *Invocation) ArgsSHA256() string { return argsHash(inv.Args) }

// Result is the outcome of a tool that ran: its value, or its own failure.
type Result struct {
	ID      string  `json:"id,omitempty"`
	Tool    string  `json:"tool"`
	Value   any     `json:"value,omitempty"`
	IsError bool    `json:"isError"`
	Error   string  `json:"error,omitempty"`
	Outcome Outcome `json:"outcome"`
	// Duration is the run time (approval wait excluded).
	Duration time.Duration `json:"-"`
}

// Content renders the result as the text to hand back to a model: the
// error message for a failure, otherwise the value (a string as is, anything
// else as JSON).
func (r Result) Content() string {
	if r.IsError {
		return r.Error
	}
	switch v := r.Value.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.RawMessage:
		return string(v)
	}
	b, err := json.Marshal(r.Value)
	if err != nil {
		return fmt.Sprintf("%v", r.Value)
	}
	return string(b)
}

// Call hydrates c and runs it.
func (e *Executor) Call(ctx context.Context, c Call) (Result, error) {
	inv, err := e.Hydrate(ctx, c)
	if err != nil {
		return Result{ID: c.ID, Tool: c.Tool}, err
	}
	return e.Run(ctx, inv)
}

// Hydrate resolves, checks, validates (repairing at most once) and
// instantiates c. On failure it returns a *CallError and audits the call; on
// success the audit record is written when the invocation runs.
func (e *Executor) Hydrate(ctx context.Context, c Call) (*Invocation, error) {
	start := time.Now()
	inv, rec, err := e.hydrate(ctx, &c)
	if err != nil {
		rec.Start = start
		_, span := startToolSpan(ctx, rec.ID, rec.Tool, start)
		e.record(ctx, span, rec, time.Since(start), err)
		return nil, err
	}
	inv.hydrated = time.Since(start)
	return inv, nil
}

func (e *Executor) hydrate(ctx context.Context, c *Call) (*Invocation, Record, error) {
	args := normalizeArgs(c.Args)
	rec := Record{ID: c.ID, Tool: c.Tool, Args: compactArgs(args)}
	entry, ok := e.reg.Lookup(c.Tool)
	if !ok {
		// The nearest names the caller may run, in the ranker's suggestion
		// order (registry.Near: no ranking index is built for an error).
		return nil, rec, e.invalid(c, c.Tool, e.reg.UnknownTool(c.Tool, e.caller().Allows))
	}
	name := entry.Name()
	rec.Tool = name
	b := e.binding(name)
	if b == nil {
		return nil, rec, e.refused(c, name, fmt.Errorf("%w %q", ErrNoHandler, name))
	}
	policy, ask, err := e.checkStatic(entry)
	rec.Policy = policy
	if err != nil {
		return nil, rec, e.refused(c, name, err)
	}
	inv := &Invocation{ID: c.ID, Tool: name, Validated: entry.Validated(), entry: entry, binding: b, policy: policy, ask: ask}
	rec.Validated = inv.Validated // from here on the schema, if any, is checked
	runner, checked, err := instantiate(entry, b, args)
	if err != nil && e.opts.Repairer != nil {
		fixed, rerr := e.repair(ctx, entry, args, err)
		if rerr != nil {
			ce := e.invalid(c, name, err)
			ce.RepairAttempted, ce.RepairErr = true, rerr
			return nil, rec, ce
		}
		inv.OriginalArgs, inv.Repaired = rec.Args, true
		args = fixed
		rec.Args, rec.OriginalArgs, rec.Repaired = compactArgs(args), inv.OriginalArgs, true
		runner, checked, err = instantiate(entry, b, args)
		if err != nil {
			ce := e.invalid(c, name, err)
			ce.RepairAttempted = true
			return nil, rec, ce
		}
	}
	if err != nil {
		return nil, rec, e.invalid(c, name, err)
	}
	// What runs, and what the audit names, is the validated value.
	rec.Args = checked
	inv.Args = checked
	inv.runner = runner
	return inv, rec, nil
}

// instantiate validates args and builds the runner. The handler or
// constructor gets the validated value encoded again, never args itself,
// which is returned for the audit trail.
func instantiate(entry *registry.Entry, b *binding, args json.RawMessage) (func(ctx context.Context) (any, error), json.RawMessage, error) {
	checked, err := entry.ParseArgs(args)
	if err != nil {
		return nil, nil, err
	}
	if b.typed != nil {
		r, err := b.typed(entry, checked) // decodes the checked document into the handler's type
		if err != nil {
			return nil, nil, err
		}
		return r, checked, nil
	}
	if b.handler != nil {
		h := b.handler
		return func(ctx context.Context) (any, error) { return h(ctx, append(json.RawMessage(nil), checked...)) }, checked, nil
	}
	r, err := b.constructor(append(json.RawMessage(nil), checked...))
	if err != nil {
		var ve *registry.ValidationError
		if errors.As(err, &ve) {
			return nil, nil, ve
		}
		return nil, nil, &registry.ValidationError{Tool: entry.Name(), Violations: []registry.Violation{{Rule: "constructor", Message: err.Error()}}}
	}
	if r == nil {
		return nil, nil, &registry.ValidationError{Tool: entry.Name(), Violations: []registry.Violation{{Rule: "constructor", Message: "the constructor returned no runner"}}}
	}
	return r, checked, nil
}

// repair asks the Repairer once for corrected arguments.
func (e *Executor) repair(ctx context.Context, entry *registry.Entry, args json.RawMessage, verr error) (json.RawMessage, error) {
	t := entry.Def()
	req := RepairRequest{Tool: t.Name, Description: t.Description, Args: args}
	if t.HasSchema() {
		req.Schema = append(json.RawMessage(nil), t.Parameters...)
	}
	var ve *registry.ValidationError
	if errors.As(verr, &ve) {
		req.Violations = append(req.Violations, ve.Violations...)
	}
	fixed, err := e.opts.Repairer(ctx, req)
	if err != nil {
		return nil, err
	}
	return normalizeArgs(fixed), nil
}

// Run applies the approval policy and runs the invocation under the per-call
// timeout. The tool's own failure (error, panic, timeout) is a Result with
// IsError; a refusal or the caller's cancellation is a *CallError.
func (e *Executor) Run(ctx context.Context, inv *Invocation) (Result, error) {
	if inv == nil || inv.runner == nil {
		return Result{}, errors.New("Run: invocation not produced by Hydrate")
	}
	start := time.Now()
	rec := Record{ID: inv.ID, Tool: inv.Tool, Args: inv.Args, OriginalArgs: inv.OriginalArgs,
		Validated: inv.Validated, Repaired: inv.Repaired, Policy: inv.policy, Start: start.Add(-inv.hydrated)}
	ctx, span := startToolSpan(ctx, inv.ID, inv.Tool, rec.Start)
	done := func(res Result, err error) (Result, error) {
		e.record(ctx, span, rec, inv.hydrated+time.Since(start), err, res)
		return res, err
	}
	c := &Call{ID: inv.ID, Tool: inv.Tool}
	// Static policy again: the invocation may come from another executor.
	policy, ask, err := e.checkStatic(inv.entry)
	if err != nil {
		rec.Policy = policy
		return done(Result{ID: inv.ID, Tool: inv.Tool}, e.refused(c, inv.Tool, err))
	}
	if ask || inv.ask {
		rec.Policy = policy
		got, err := e.ask(ctx, inv, &rec)
		if err != nil {
			return done(Result{ID: inv.ID, Tool: inv.Tool}, err)
		}
		// What runs is what was approved: a copy, or the edited arguments
		// validated again, never inv.Args as it may be now.
		inv = &Invocation{ID: inv.ID, Tool: inv.Tool, Args: got.args, OriginalArgs: inv.OriginalArgs, Validated: inv.Validated,
			Repaired: inv.Repaired, entry: inv.entry, binding: inv.binding, runner: got.runner, policy: policy, ask: true, hydrated: inv.hydrated}
	}
	runStart := time.Now()
	res, err := e.execute(ctx, inv)
	res.Duration = time.Since(runStart)
	return done(res, err)
}

type runOutcome struct {
	value any
	err   error
}

// execute runs the runner in its own goroutine so that a tool ignoring its
// context cannot hold the caller past the timeout (the goroutine finishes on
// its own; its late result is discarded).
func (e *Executor) execute(ctx context.Context, inv *Invocation) (Result, error) {
	timeout := e.opts.Timeout
	if d, ok := e.opts.ToolTimeouts[inv.Tool]; ok && d != 0 {
		timeout = d
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	ch := make(chan runOutcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- runOutcome{err: fmt.Errorf("the tool panicked: %v", p)}
			}
		}()
		v, err := inv.runner(runCtx)
		ch <- runOutcome{value: v, err: err}
	}()
	res := Result{ID: inv.ID, Tool: inv.Tool}
	var out runOutcome
	select {
	case out = <-ch:
	case <-runCtx.Done():
		select {
		case out = <-ch: // finished at the same moment: keep its answer
		default:
			out.err = runCtx.Err()
		}
	}
	switch {
	case out.err != nil && ctx.Err() != nil:
		return res, &CallError{ID: inv.ID, Tool: inv.Tool, Outcome: OutcomeCanceled, Err: ctx.Err()}
	case out.err != nil && runCtx.Err() == context.DeadlineExceeded:
		res.IsError, res.Outcome = true, OutcomeTimeout
		res.Error = fmt.Sprintf("tool %q timed out after %s", inv.Tool, timeout)
	case out.err != nil:
		// A value returned along with the error is kept: it is the failure's
		// detail (the MCP proxy relays an upstream's isError result this way).
		res.IsError, res.Outcome, res.Error, res.Value = true, OutcomeToolError, out.err.Error(), out.value
	default:
		res.Value, res.Outcome = out.value, OutcomeOK
	}
	return res, nil
}

// record completes and delivers one audit record, and ends the call's
// execute_tool span with the same outcome.
func (e *Executor) record(ctx context.Context, span trace.Span, rec Record, d time.Duration, err error, res ...Result) {
	if e.opts.Audit == nil && !span.IsRecording() {
		span.End()
		return
	}
	rec.Duration = d
	rec.DurationMS = float64(d.Microseconds()) / 1000
	var ce *CallError
	switch {
	case errors.As(err, &ce):
		rec.Outcome, rec.Error = ce.Outcome, ce.Error()
		if ce.Rule != "" {
			rec.Policy = string(ce.Rule) // the rule that refused it, as the error carries it
		}
	case err != nil:
		rec.Outcome, rec.Error = OutcomeRefused, err.Error()
	case len(res) > 0:
		rec.Outcome, rec.Error = res[0].Outcome, res[0].Error
	}
	endToolSpan(span, rec, err, res...)
	if e.opts.Audit == nil {
		return
	}
	// The audit must not be cut short by the very cancellation it records.
	e.opts.Audit(context.WithoutCancel(ctx), rec)
}
