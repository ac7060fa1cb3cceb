package registry

// Eligibility is the one rule for which tools a caller may be offered,
// ranked or run: the rank filters, the selector's offer and the executor's
// policy all apply it (and nothing else re-implements it). The zero value
// allows every safe tool that lists no roles.
type Eligibility struct {
	// AllowUnsafe lets tools marked safe: false through.
	AllowUnsafe bool
	// Roles the caller holds; a tool that lists roles needs one of them.
	Roles []string
	// Capabilities every tool must declare (e.g. "readOnly").
	Capabilities []string
}

// Ineligible says why a tool is not eligible; "" means it is.
type Ineligible string

// The reasons [Eligibility.Check] gives.
const (
	IneligibleUnsafe     Ineligible = "unsafe"     // safe: false and AllowUnsafe unset
	IneligibleRole       Ineligible = "role"       // the tool lists roles the caller holds none of
	IneligibleCapability Ineligible = "capability" // the tool lacks a required capability
)

// Check returns "" when t is eligible, else why not (IneligibleUnsafe,
// IneligibleRole or IneligibleCapability, checked in that order).
func (el Eligibility) Check(t *Tool) Ineligible {
	if !t.Safe && !el.AllowUnsafe {
		return IneligibleUnsafe
	}
	if !t.AllowedFor(el.Roles) {
		return IneligibleRole
	}
	for _, c := range el.Capabilities {
		if !t.HasCapability(c) {
			return IneligibleCapability
		}
	}
	return ""
}

// Allows reports whether the entry is eligible.
func (el Eligibility) Allows(e *Entry) bool { return el.Check(e.Def()) == "" }

// Filter returns the eligible entries, in the order given, and how many were
// left out for each reason (keys as returned by Check).
func (el Eligibility) Filter(entries []*Entry) (eligible []*Entry, excluded map[Ineligible]int) {
	eligible = make([]*Entry, 0, len(entries))
	for _, e := range entries {
		if why := el.Check(e.Def()); why != "" {
			if excluded == nil {
				excluded = map[Ineligible]int{}
			}
			excluded[why]++
			continue
		}
		eligible = append(eligible, e)
	}
	return eligible, excluded
}
