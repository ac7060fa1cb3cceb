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
}

// Check returns "" when t is eligible, else the rule it breaks
// ([RuleUnsafe], [RuleRole] or [RuleCapability], checked in that order).
func (el Eligibility) Check(t *Tool) Rule {
	if !t.Safe && !el.AllowUnsafe {
		return RuleUnsafe
	}
	if !t.AllowedFor(el.Roles) {
		return RuleRole
	}
	for _, c := range el.Capabilities {
		if !t.HasCapability(c) {
			return RuleCapability
		}
	}
	return ""
}

// With returns the caller el and other describe together: unsafe tools
// allowed when either allows them, the roles of both and the capabilities
// of both, each once. rank, the selector and the executor each take one
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
