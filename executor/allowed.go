package executor

import (
	"fmt"
	"sync"

	"github.com/toolselect/toolselect/registry"
)

// Allowed reports whether this executor would run the named tool (canonical
// or provider-mapped name), before looking at arguments: nil when the tool is
// registered, bound to a handler or constructor and allowed by the static
// policy (unsafe, roles, no-schema mode); otherwise the *CallError a call
// would get. The find_tool meta-tool (package executor/metatool) finds
// exactly the tools for which Allowed is nil.
func (e *Executor) Allowed(name string) error {
	entry, ok := e.reg.Lookup(name)
	if !ok {
		return e.invalid(&Call{Tool: name}, name, fmt.Errorf("%w %q", registry.ErrUnknownTool, name))
	}
	if err := e.refusal(entry, e.binding(entry.Name()) != nil); err != nil {
		return e.refused(&Call{Tool: entry.Name()}, entry.Name(), err)
	}
	return nil
}

// Refused returns the canonical names of the registered tools for which
// [Executor.Allowed] is not nil: no binding, or refused by the static
// policy. The set is computed once per registry and binding change and
// shared: the caller must not modify it.
func (e *Executor) Refused() map[string]struct{} { return e.hiddenTools() }

// Invalid returns the *CallError this executor gives c for the invalid
// arguments err (a *registry.ValidationError's violations are kept), with
// its rule and its front door's hint: for checks of arguments made outside
// Hydrate, such as a meta-tool's own.
func (e *Executor) Invalid(c Call, err error) *CallError {
	return e.invalid(&c, c.Tool, err)
}

// refusal is why this executor would not run a registered tool before
// looking at arguments (nil: it would): no binding, or the static policy.
// Allowed and Refused both ask it.
func (e *Executor) refusal(entry *registry.Entry, bound bool) error {
	if !bound {
		return fmt.Errorf("%w %q", ErrNoHandler, entry.Name())
	}
	_, _, err := e.checkStatic(entry)
	return err
}

// hiddenCache remembers which registry tools the executor would refuse, per
// registry generation and binding generation.
type hiddenCache struct {
	mu       sync.Mutex
	valid    bool
	gen, bgn uint64
	names    map[string]struct{}
}

// hiddenTools returns the canonical names of registered tools this executor
// would not run: no binding, or refused by the static policy.
func (e *Executor) hiddenTools() map[string]struct{} {
	entries, gen := e.reg.Snapshot()
	b := e.handlers
	b.mu.RLock()
	bgn := b.gen
	b.mu.RUnlock()
	h := &e.hidden
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.valid && h.gen == gen && h.bgn == bgn {
		return h.names
	}
	names := map[string]struct{}{}
	b.mu.RLock()
	for _, en := range entries {
		if e.refusal(en, b.bindings[en.Name()] != nil) != nil {
			names[en.Name()] = struct{}{}
		}
	}
	bgn = b.gen
	b.mu.RUnlock()
	h.valid, h.gen, h.bgn, h.names = true, gen, bgn, names
	return names
}

// Caller returns who this executor runs calls for: [Options.Caller] with the
// shorthand fields added (Ask when it has an approver), the value to give
// ranking and selection so they offer what this executor would run or ask
// about.
func (e *Executor) Caller() registry.Eligibility {
	el := e.caller()
	el.Roles, el.Capabilities = append([]string(nil), el.Roles...), append([]string(nil), el.Capabilities...)
	return el
}
