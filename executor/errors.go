package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolselect/toolselect/registry"
)

// Sentinel errors. Every error Hydrate, Run and Call return is a *CallError
// that matches exactly one of ErrUnknownTool ... ErrApprovalDenied (or
// context.Canceled, context.DeadlineExceeded) with errors.Is.
var (
	// ErrUnknownTool: the call names no registered tool (registry.ErrUnknownTool).
	ErrUnknownTool = registry.ErrUnknownTool
	// ErrInvalidArgs: the arguments broke the tool's schema or its constructor's
	// rules, after at most one repair (registry.ErrInvalidArgs).
	ErrInvalidArgs = registry.ErrInvalidArgs
	// ErrNoHandler: the tool is registered but no handler or constructor is bound to it.
	ErrNoHandler = errors.New("no handler bound to the tool")
	// ErrUnsafe: the tool is marked unsafe and the executor does not allow unsafe tools.
	ErrUnsafe = errors.New("unsafe tool not allowed")
	// ErrRoleDenied: the tool lists roles and the caller holds none of them.
	ErrRoleDenied = errors.New("caller holds none of the tool's roles")
	// ErrCapability: the tool does not declare a capability the caller requires ([Options.Capabilities]).
	ErrCapability = errors.New("tool lacks a capability the caller requires")
	// ErrDenied: a deny rule of the caller's names the tool
	// ([registry.ToolRules]), whatever else it is.
	ErrDenied = errors.New("tool denied by rule")
	// ErrNotReadOnly: a schema-less tool in read-only mode does not declare the readOnly capability.
	ErrNotReadOnly = errors.New("schema-less read-only tool is not declared readOnly")
	// ErrApprovalRequired: a tool that requires approval (RequiresApproval,
	// schema-less in human-approval mode, or named by an ask rule of the
	// caller's) and no Approver configured.
	ErrApprovalRequired = errors.New("human approval required but no approver is configured")
	// ErrApprovalDenied: the approver said no, failed, or did not answer in time.
	ErrApprovalDenied = errors.New("approval denied")
	// ErrApprovalPending: the call waits for an approval not given yet: a
	// *CallError with Outcome [OutcomePending] and the [CallError.PendingID]
	// that [Executor.Resume] takes; its Rule is approval_required. An
	// Approver returns it (or an error wrapping it) to decide later.
	ErrApprovalPending = errors.New("approval pending")
)

// CallError is why a call was not run: the call could not be hydrated
// (unknown tool, invalid arguments) or policy refused it. A tool's own failure
// is never a CallError; it is a Result with IsError set.
type CallError struct {
	// ID is the call's ID, if it had one.
	ID string
	// Tool is the tool's canonical name, or the name as received when unknown.
	Tool string
	// Outcome is OutcomeInvalid, OutcomeRefused, OutcomeCanceled or OutcomePending.
	Outcome Outcome
	// Violations lists the broken rules for OutcomeInvalid (after repair, if any).
	Violations []registry.Violation
	// RepairAttempted is true when a model was asked to repair the arguments.
	RepairAttempted bool
	// RepairErr is why the repair step itself failed (transport, unparsable reply), if it did.
	RepairErr error
	// Err is the cause; it wraps one of the sentinels.
	Err error
	// Rule names the sentinel Err wraps, as data ("" for a canceled call);
	// the audit record's Policy carries the same value.
	Rule registry.Rule
	// Hint says what would let the call run, in the words of the front door
	// that refused it ([Options.Hint]; Go's by default), or "".
	Hint string
	// PendingID, for OutcomePending, is the ID [Executor.Resume] takes to
	// answer the parked call; Args are the arguments it was asked about (to
	// show) and ArgsSHA256 their hash (for [Approval.ArgsSHA256]).
	PendingID  string
	Args       json.RawMessage
	ArgsSHA256 string
}

// Error says which call failed, how, and why.
func (e *CallError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "call of tool %q %s: %v", e.Tool, e.Outcome, e.Err)
	if e.Hint != "" {
		fmt.Fprintf(&sb, " (%s)", e.Hint)
	}
	if e.RepairAttempted {
		sb.WriteString(" (after one repair attempt")
		if e.RepairErr != nil {
			fmt.Fprintf(&sb, ", which failed: %v", e.RepairErr)
		}
		sb.WriteString(")")
	}
	return sb.String()
}

// Unwrap returns the cause.
func (e *CallError) Unwrap() error { return e.Err }

// policyRefusal is a refusal by the static policy (unsafe, roles,
// capabilities, no-schema modes): err is the sentinel it matches
// ([ErrUnsafe], [ErrRoleDenied], ...) and reason says what about the tool
// broke the rule. How to let it run is the CallError's Hint, worded by the
// front door ([Options.Hint]); a front door with names of its own reaches the
// bare reason through errors.As with an interface{ PolicyReason() string }.
type policyRefusal struct {
	err    error
	reason string
}

// Error is the sentinel's text and the reason.
func (r *policyRefusal) Error() string { return r.err.Error() + ": " + r.reason }

// Unwrap returns the sentinel.
func (r *policyRefusal) Unwrap() error { return r.err }

// PolicyReason is the reason, without any hint.
func (r *policyRefusal) PolicyReason() string { return r.reason }

func refusal(err error, format string, args ...any) *policyRefusal {
	return &policyRefusal{err: err, reason: fmt.Sprintf(format, args...)}
}

func (e *Executor) refused(c *Call, tool string, err error) *CallError {
	return e.worded(&CallError{ID: c.ID, Tool: tool, Outcome: OutcomeRefused, Err: err})
}

func (e *Executor) invalid(c *Call, tool string, err error) *CallError {
	ce := &CallError{ID: c.ID, Tool: tool, Outcome: OutcomeInvalid, Err: err}
	var ve *registry.ValidationError
	if errors.As(err, &ve) {
		ce.Violations = ve.Violations
	}
	return e.worded(ce)
}

// worded sets the error's Rule, from the sentinel it wraps, and the Hint
// this executor's front door gives for it ([Options.Hint], else Go's words).
func (e *Executor) worded(ce *CallError) *CallError {
	for _, r := range rules {
		if errors.Is(ce.Err, r.err) {
			ce.Rule = r.rule
			break
		}
	}
	if e.opts.Hint != nil {
		ce.Hint = e.opts.Hint(ce.Rule)
	} else {
		ce.Hint = goHints[ce.Rule]
	}
	return ce
}

// rules maps each sentinel to its rule.
var rules = []struct {
	err  error
	rule registry.Rule
}{
	{ErrUnknownTool, registry.RuleUnknownTool},
	{ErrInvalidArgs, registry.RuleInvalidArgs},
	{ErrNoHandler, registry.RuleNoHandler},
	{ErrUnsafe, registry.RuleUnsafe},
	{ErrRoleDenied, registry.RuleRole},
	{ErrCapability, registry.RuleCapability},
	{ErrDenied, registry.RuleDenied},
	{ErrNotReadOnly, registry.RuleNoSchemaReadOnly},
	{ErrApprovalRequired, registry.RuleApprovalRequired},
	{ErrApprovalDenied, registry.RuleApprovalDenied},
	{ErrApprovalPending, registry.RuleApprovalRequired},
}

// goHints are the Go program's words: what to set for a refused call to
// run, one entry per rule ("" where the reason says it all, or where the
// executor never meets the rule).
var goHints = map[registry.Rule]string{
	registry.RuleUnknownTool:      "",
	registry.RuleInvalidArgs:      "",
	registry.RuleNoHandler:        "bind one with Handle, HandleConstructor, Register or AddTool on this executor or on any view of it from With; bindings made on another executor over the same registry are that executor's own",
	registry.RuleUnsafe:           "set Options.AllowUnsafe to run it",
	registry.RuleRole:             "give the caller one of them in Options.Caller.Roles (or Options.Roles)",
	registry.RuleCapability:       "",
	registry.RuleDenied:           "",
	registry.RuleNoSchemaReadOnly: "",
	registry.RuleApprovalRequired: "set Options.Approver to ask for approval",
	registry.RuleApprovalDenied:   "",
	registry.RuleNotInOffer:       "",
	registry.RuleNoSchema:         "",
	registry.RuleNoSchemaMode:     "",
}
