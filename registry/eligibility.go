package registry

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
	// Rules are per-tool allow, ask and deny rules by name or pattern;
	// they take precedence over AllowUnsafe and Ask ([ToolRules]).
	Rules ToolRules
}

// Decide is the one rule for whether a call of t may run for the caller el,
// with three outcomes: deny (deny is the rule the call breaks), ask (ask is
// true: run it only after an approver says yes) or allow (neither). The Go
// executor, the C library's authorize verdict (and so Python's run and
// arun), and the MCP proxy all apply it, and nothing else re-derives it.
// In order:
//
//   - a tool a deny rule matches ([ToolRules]) is denied ([RuleDenied]);
//   - an unsafe tool is denied ([RuleUnsafe]) unless an allow or ask rule
//     matches it or, when none does, the caller's unsafe mode lets it run
//     or be asked about: [ToolRules.Unsafe] when set, else ask when the
//     caller can ask, allow when it allows unsafe tools, deny otherwise;
//   - a tool listing roles the caller holds none of is denied ([RuleRole]),
//     as is one lacking a capability the caller requires ([RuleCapability]),
//     whatever the rules say;
//   - a schema-less read-only tool that does not declare readOnly is denied
//     ([RuleNoSchemaReadOnly]);
//   - a tool that needs asking (an ask rule matches it, it requires
//     approval ([Tool.ApprovalRequired]), or it is unsafe and the unsafe
//     mode is ask) is asked about when the caller can ask ([Eligibility.Ask]);
//     giving an approver never loosens: an unsafe tool is asked about even
//     when the caller also allows unsafe tools, unless an allow rule or an
//     explicit unsafe mode "allow" says it runs unasked;
//   - without an approver, a tool an ask rule matches, or one that requires
//     approval, is denied ([RuleApprovalRequired]);
//   - everything else is allowed.
func (el Eligibility) Decide(t *Tool) (deny Rule, ask bool) {
	byRule := el.Rules.decision(t.Name)
	if byRule == decideDeny {
		return RuleDenied, false
	}
	unsafe := byRule
	if unsafe == "" {
		unsafe = el.unsafeMode()
	}
	if !t.Safe && (unsafe == decideDeny || byRule == "" && unsafe == decideAsk && !el.Ask) {
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
	approval := t.ApprovalRequired() || byRule == decideAsk
	switch {
	case el.Ask && (approval || !t.Safe && unsafe == decideAsk):
		return "", true
	case approval:
		return RuleApprovalRequired, false
	}
	return "", false
}

// unsafeMode is what becomes of an unsafe tool no rule matches:
// Rules.Unsafe when set, else ask when the caller can ask, allow when it
// allows unsafe tools, deny otherwise.
func (el Eligibility) unsafeMode() string {
	switch {
	case el.Rules.Unsafe != "":
		return el.Rules.Unsafe
	case el.Ask:
		return decideAsk
	case el.AllowUnsafe:
		return decideAllow
	}
	return decideDeny
}

// Check returns "" when t is eligible to be offered, else the caller's rule
// it breaks ([RuleDenied], [RuleUnsafe], [RuleRole] or [RuleCapability],
// checked in that order): [Eligibility.Decide]'s denials that depend on who the caller is.
// A tool [Eligibility.Decide] would ask about is eligible; one it denies
// for its own definition (a no-schema mode, approval without an approver)
// is offered and refused when called, saying how to let it run.
func (el Eligibility) Check(t *Tool) Rule {
	switch deny, _ := el.Decide(t); deny {
	case RuleDenied, RuleUnsafe, RuleRole, RuleCapability:
		return deny
	}
	return ""
}

// With returns the caller el and other describe together: unsafe tools
// allowed when either allows them, the roles of both and the capabilities
// of both, each once, asking when either can ask, and the rules of both
// (el's unsafe mode, else other's). rank, the selector and the executor each take one
// caller value (their Caller field) and read it With their shorthand fields
// (AllowUnsafe, Roles, Capabilities), so either way of saying it counts.
func (el Eligibility) With(other Eligibility) Eligibility {
	return Eligibility{
		AllowUnsafe:  el.AllowUnsafe || other.AllowUnsafe,
		Roles:        union(el.Roles, other.Roles),
		Capabilities: union(el.Capabilities, other.Capabilities),
		Ask:          el.Ask || other.Ask,
		Rules:        el.Rules.with(other.Rules),
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
