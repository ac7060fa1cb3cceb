package registry

import "slices"

// Eligibility is the one rule for which tools a caller may be offered,
// ranked or run: the rank filters, the selector's offer and the executor's
// policy all apply it (and nothing else re-implements it). It is also the
// one value that describes the caller to all three: rank.Options.Caller,
// selector.Request.Caller and executor.Options.Caller take it. The zero
// value allows every safe tool that lists no roles.
type Eligibility struct {
	// AllowUnsafe lets tools marked safe: false through.
	AllowUnsafe bool
	// Roles the caller holds; a tool that lists roles needs one of them.
	Roles []string
	// Capabilities every tool must declare (e.g. "readOnly").
	Capabilities []string
	// Ask says the caller has someone to ask (an approver): a tool that
	// needs asking (unsafe, [Tool.RequiresApproval], a schema-less
	// human-approval tool) is asked about rather than refused, and unsafe
	// tools become eligible to be offered. Asking never loosens anything:
	// with AllowUnsafe set too, an unsafe tool is still asked about
	// ([Eligibility.Decide]).
	Ask bool
}

// Decide is the one rule for whether a call of t may run for the caller el,
// with three outcomes: deny (deny is the rule the call breaks), ask (ask is
// true: run it only after an approver says yes) or allow (neither). The Go
// executor, the C library's authorize verdict (and so Python's run and
// arun), and the MCP proxy all apply it, and nothing else re-derives it.
// In order:
//
//   - an unsafe tool, for a caller that neither allows unsafe tools nor can
//     ask, is denied ([RuleUnsafe]);
//   - a tool listing roles the caller holds none of is denied ([RuleRole]),
//     as is one lacking a capability the caller requires ([RuleCapability]);
//   - a schema-less read-only tool that does not declare readOnly is denied
//     ([RuleNoSchemaReadOnly]);
//   - a tool that needs asking (unsafe, [Tool.RequiresApproval], or
//     schema-less in human-approval mode) is asked about when the caller can
//     ask ([Eligibility.Ask]), whether or not it also allows unsafe tools;
//   - without an approver, an unsafe tool the caller allows runs, and one
//     that requires approval is denied ([RuleApprovalRequired]);
//   - everything else is allowed.
func (el Eligibility) Decide(t *Tool) (deny Rule, ask bool) {
	if !t.Safe && !el.AllowUnsafe && !el.Ask {
		return RuleUnsafe, false
	}
	if !t.AllowedFor(el.Roles) {
		return RuleRole, false
	}
	for _, c := range el.Capabilities {
		if !t.HasCapability(c) {
			return RuleCapability, false
		}
	}
	if !t.HasSchema() {
		switch t.NoSchemaMode {
		case NoSchemaReadOnly:
			if !t.ReadOnly() {
				return RuleNoSchemaReadOnly, false
			}
		case NoSchemaHumanApproval, NoSchemaFull:
		default:
			// The registry refuses this; fail closed should it ever happen.
			return RuleNoSchemaMode, false
		}
	}
	approval := t.ApprovalRequired()
	switch {
	case el.Ask && (approval || !t.Safe):
		return "", true
	case approval:
		return RuleApprovalRequired, false
	}
	return "", false
}

// Check returns "" when t is eligible to be offered, else the caller's rule
// it breaks ([RuleUnsafe], [RuleRole] or [RuleCapability], checked in that
// order): [Eligibility.Decide]'s denials that depend on who the caller is.
// A tool [Eligibility.Decide] would ask about is eligible; one it denies
// for its own definition (a no-schema mode, approval without an approver)
// is offered and refused when called, saying how to let it run.
func (el Eligibility) Check(t *Tool) Rule {
	switch deny, _ := el.Decide(t); deny {
	case RuleUnsafe, RuleRole, RuleCapability:
		return deny
	}
	return ""
}

// With returns the caller el and other describe together: unsafe tools
// allowed when either allows them, the roles of both and the capabilities
// of both, each once, and asking when either can ask. rank, the selector and the executor each take one
// caller value (their Caller field) and read it With their shorthand fields
// (AllowUnsafe, Roles, Capabilities), so either way of saying it counts.
func (el Eligibility) With(other Eligibility) Eligibility {
	union := func(a, b []string) []string {
		if len(b) == 0 {
			return a
		}
		out := slices.Clip(a)
		for _, s := range b {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	return Eligibility{
		AllowUnsafe:  el.AllowUnsafe || other.AllowUnsafe,
		Roles:        union(el.Roles, other.Roles),
		Capabilities: union(el.Capabilities, other.Capabilities),
		Ask:          el.Ask || other.Ask,
	}
}

// Allows reports whether the entry is eligible.
func (el Eligibility) Allows(e *Entry) bool { return el.Check(e.Def()) == "" }

// Filter returns the eligible entries, in the order given, and how many were
// left out for each reason (keys as returned by Check).
func (el Eligibility) Filter(entries []*Entry) (eligible []*Entry, excluded map[Rule]int) {
	eligible = make([]*Entry, 0, len(entries))
	for _, e := range entries {
		if why := el.Check(e.Def()); why != "" {
			if excluded == nil {
				excluded = map[Rule]int{}
			}
			excluded[why]++
			continue
		}
		eligible = append(eligible, e)
	}
	return eligible, excluded
}
