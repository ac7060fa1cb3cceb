package registry

import (
	"fmt"

	"github.com/toolselect/toolselect/internal/toolname"
)

// suggestLimit is how many names an unknown tool's error suggests.
const suggestLimit = 3

// near returns up to k registered names that name, which names no tool,
// most likely meant, best first: a tool whose own part after its namespace
// is the name, then the names a few edits away (rank's Ranker.Suggest
// order, without its ranking of the name's words, so no index is built).
// allow, if not nil, limits the names to the tools the caller may see.
func (r *Registry) near(name string, k int, allow func(*Entry) bool) []string {
	if k <= 0 {
		return nil
	}
	var names []string
	for _, e := range r.Entries() {
		if allow == nil || allow(e) {
			names = append(names, e.tool.Name)
		}
	}
	out := toolname.Near(name, names)
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// Suggest returns up to three registered names that name, which names no
// tool the caller may run, most likely meant, best first: a tool whose own
// part after its namespace is the name, then the names a few edits away
// (the first two steps of rank's Ranker.Suggest; its third, ranking the
// name's words, needs an index and is left to rank). allow, if not nil,
// limits the names to the tools the caller may see: pass the caller's
// [Eligibility.Allows] so that no tool the caller may not run is named.
// [Registry.UnknownTool] and the selector's dropped calls use it.
func (r *Registry) Suggest(name string, allow func(*Entry) bool) []string {
	return r.near(name, suggestLimit, allow)
}

// UnknownTool is the error for a name that names no tool: it wraps
// [ErrUnknownTool] and names the nearest registered names
// (`unknown tool "create_evnt" (did you mean "create_event"?)`), those allow
// lets the caller see (nil: all).
func (r *Registry) UnknownTool(name string, allow func(*Entry) bool) error {
	return fmt.Errorf("%w %q%s", ErrUnknownTool, name, toolname.DidYouMean(r.Suggest(name, allow)))
}
