package executor

import (
	"encoding/json"

	"github.com/toolselect/toolselect/registry"
)

// ApprovalRequest is what an Approver is asked about.
type ApprovalRequest struct {
	ID   string          // the call's ID, if any
	Tool registry.Tool   // a copy of the tool's definition
	Args json.RawMessage // the arguments the tool would run with (not schema-validated)
}

// Approval is an Approver's answer.
type Approval struct {
	// Approved lets the call run.
	Approved bool
	// By names who decided (a user, a ticket, a policy); it goes to the audit record.
	By string
	// Reason is shown in the refusal when Approved is false.
	Reason string
}

// checkStatic applies the rules that need no one's answer: unsafe tools and
// roles (registry.Eligibility, the rule the selector and rank apply too), and
// the read-only no-schema mode. It returns the policy that lets the call
// run (the audit record's, "schema", "no-schema:read-only,unsafe-allowed",
// ...) or, on refusal, the error (whose rule the record then names).
func (e *Executor) checkStatic(entry *registry.Entry) (string, error) {
	t := entry.Def()
	policy := "schema"
	if !entry.Validated() {
		policy = "no-schema:" + string(t.NoSchemaMode)
	}
	switch e.eligibility().Check(t) {
	case registry.RuleUnsafe:
		return policy, refusal(ErrUnsafe, "%q is marked unsafe", t.Name)
	case registry.RuleRole:
		return policy, refusal(ErrRoleDenied, "%q requires one of the roles %v", t.Name, t.Roles)
	case registry.RuleCapability:
		return policy, refusal(ErrCapability, "%q declares %v, the caller requires %v", t.Name, t.Capabilities, e.opts.Capabilities)
	}
	if !t.Safe {
		policy += ",unsafe-allowed"
	}
	if !entry.Validated() {
		switch t.NoSchemaMode {
		case registry.NoSchemaReadOnly:
			if !t.ReadOnly() {
				return policy, refusal(ErrNotReadOnly, "%q has no schema and may run only as read-only, but does not declare the %q capability", t.Name, registry.CapabilityReadOnly)
			}
		case registry.NoSchemaHumanApproval:
			if e.opts.Approver == nil {
				return policy, refusal(ErrApprovalRequired, "%q has no schema and runs only with a human's approval", t.Name)
			}
		case registry.NoSchemaFull:
		default:
			// The registry refuses this; fail closed should it ever happen.
			return policy, refusal(ErrNotReadOnly, "%q has no schema and no valid mode for running without one", t.Name)
		}
	}
	return policy, nil
}

// needsApproval reports whether a call of entry waits on the Approver.
func needsApproval(entry *registry.Entry) bool {
	return !entry.Validated() && entry.Def().NoSchemaMode == registry.NoSchemaHumanApproval
}
