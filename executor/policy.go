package executor

import (
	"encoding/json"

	"github.com/toolselect/toolselect/registry"
)

// ApprovalRequest is what an Approver is asked about: the tool's definition
// and the arguments that will run, already validated against its schema (an
// invalid call is refused before anyone is asked).
type ApprovalRequest struct {
	ID   string          // the call's ID, if any
	Tool registry.Tool   // a copy of the tool's definition
	Args json.RawMessage // a copy of the arguments the tool would run with (validated when Validated)
	// Validated is false for a schema-less tool: Args were not checked.
	Validated bool
	// ArgsSHA256 is the hex SHA-256 of Args, the value the audit record
	// carries; an Approval that names it holds for these arguments only.
	ArgsSHA256 string
	// Reason is why the call is asked about: registry.RuleUnsafe for an
	// unsafe tool, registry.RuleApprovalRequired for one that requires
	// approval ([registry.Tool.ApprovalRequired]).
	Reason registry.Rule
}

// Approval is an Approver's answer.
type Approval struct {
	// Approved lets the call run.
	Approved bool
	// By names who decided (a user, a ticket, a policy); it goes to the audit record.
	By string
	// Reason is shown in the refusal when Approved is false.
	Reason string
	// Args, when set, are edited arguments to run instead of the ones asked
	// about: they are validated again (invalid ones are refused, nothing
	// runs) and the audit record says they were edited.
	Args json.RawMessage
	// ArgsSHA256, when set, must be the [ApprovalRequest.ArgsSHA256] of the
	// call answered (or of the pending call resumed): an approval given for
	// other arguments is refused, never applied to these.
	ArgsSHA256 string
}

// caller is who this executor runs calls for, as [registry.Eligibility]
// describes a caller: it can ask when it has an Approver, or when
// [Options.Caller].Ask parks asked calls for [Executor.Resume].
func (e *Executor) caller() registry.Eligibility {
	return registry.Eligibility{AllowUnsafe: e.opts.AllowUnsafe, Roles: e.opts.Roles, Capabilities: e.opts.Capabilities,
		Ask: e.opts.Caller.Ask || e.opts.Approver != nil, Rules: e.opts.Caller.Rules}
}

// checkStatic applies [registry.Eligibility.Decide], the one rule every
// front door applies, to entry for this executor's caller. It returns the
// policy that lets the call run (the audit record's: "schema",
// "no-schema:full", "schema,unsafe-allowed", "schema,ask", ...), whether an
// approver must be asked first, or, on refusal, the error (whose rule the
// record then names).
func (e *Executor) checkStatic(entry *registry.Entry) (string, bool, error) {
	t := entry.Def()
	policy := "schema"
	if !entry.Validated() {
		policy = "no-schema:" + string(t.NoSchemaMode)
	}
	el := e.caller()
	deny, ask := el.Decide(t)
	switch deny {
	case "":
	case registry.RuleDenied:
		return policy, false, refusal(ErrDenied, "%q is denied by a rule", t.Name)
	case registry.RuleUnsafe:
		return policy, false, refusal(ErrUnsafe, "%q is marked unsafe", t.Name)
	case registry.RuleRole:
		return policy, false, refusal(ErrRoleDenied, "%q requires one of the roles %v", t.Name, t.Roles)
	case registry.RuleCapability:
		return policy, false, refusal(ErrCapability, "%q declares %v, the caller requires %v", t.Name, t.Capabilities, el.Capabilities)
	case registry.RuleNoSchemaReadOnly:
		return policy, false, refusal(ErrNotReadOnly, "%q has no schema and may run only as read-only, but does not declare the %q capability", t.Name, registry.CapabilityReadOnly)
	case registry.RuleApprovalRequired:
		switch {
		case t.RequiresApproval:
			return policy, false, refusal(ErrApprovalRequired, "%q requires approval before every call", t.Name)
		case t.ApprovalRequired():
			return policy, false, refusal(ErrApprovalRequired, "%q has no schema and runs only with a human's approval", t.Name)
		}
		return policy, false, refusal(ErrApprovalRequired, "%q is to be asked about before every call (an ask rule names it)", t.Name)
	default:
		// The registry refuses this; fail closed should it ever happen.
		return policy, false, refusal(ErrNotReadOnly, "%q has no schema and no valid mode for running without one", t.Name)
	}
	if ask {
		return policy + ",ask", true, nil
	}
	if !t.Safe {
		policy += ",unsafe-allowed"
	}
	return policy, false, nil
}

// askReason is why Decide asks about t's calls (see [ApprovalRequest.Reason]).
func askReason(t *registry.Tool) registry.Rule {
	if t.ApprovalRequired() || t.Safe { // a safe tool is asked about only by an ask rule
		return registry.RuleApprovalRequired
	}
	return registry.RuleUnsafe
}
