package registry

import (
	"encoding/json"
	"fmt"
	"strings"
)

// PinStatus is the outcome of a pin check.
type PinStatus string

// The pin statuses, and the kinds of definitions pinned besides tools.
const (
	// PinNew: first sight; the tool is pinned now (and allowed, unless a
	// strict check holds it for its flags).
	PinNew PinStatus = "new"
	// PinOK: the definition matches its pin.
	PinOK PinStatus = "ok"
	// PinChanged: the definition differs from its pin; the tool is held.
	PinChanged PinStatus = "changed"
	// PinUnreviewed: a tool first seen after the first pinning while new
	// tools are held for review (CheckWith's holdNew); held until approved.
	PinUnreviewed PinStatus = "unreviewed"
	// PinUnconfirmed: a definition the pins do not know (new here) while
	// their store cannot be read or written (a shared store away): another
	// process may have pinned or held it meanwhile, so it is held until
	// the store answers. The caller of Check sets it, seeing Save fail.
	PinUnconfirmed PinStatus = "unconfirmed"

	// The kinds of definitions pinned besides tools ([PinCheck.Kind]).
	PinPrompt           = "prompt"
	PinResource         = "resource"
	PinResourceTemplate = "resourceTemplate"
)

// PinCheck is what Check says of one tool.
type PinCheck struct {
	// Tool is the tool's name (the prompt's name, the resource's URI, the
	// resource template's URI template).
	Tool string `json:"tool"`
	// Kind is PinPrompt, PinResource or PinResourceTemplate; empty for a tool.
	Kind   string    `json:"kind,omitempty"`
	Status PinStatus `json:"status"`
	// Changed names the parts that differ (PinChanged).
	Changed []string `json:"changed,omitempty"`
	// Flags name what is suspicious in the definition's text (description,
	// title, schema strings), on any status.
	Flags []string `json:"flags,omitempty"`
	// Held is true when the tool must not be served: changed, new under
	// review, or flagged under a strict check.
	Held bool `json:"held"`
	// SHA256 is the hash of the definition an approval would accept (the
	// pending one; the pin's for a flagged pin): approve NAME@SHA256.
	SHA256 string `json:"sha256,omitempty"`
	// Pinned, Pending and Seen are set by Waiting, for a person to review:
	// the approved definition (canonical JSON; absent for a tool held for
	// review on first sight and in pins written before definitions were
	// kept), the definition waiting (absent for a flagged pin waiting for
	// review: Pinned is the one to review), and how many different
	// definitions waited since the pin.
	Pinned  json.RawMessage `json:"pinned,omitempty"`
	Pending json.RawMessage `json:"pending,omitempty"`
	Seen    int             `json:"seen,omitempty"`
}

// newPinCheck is the check of the entry key ([PinCheck.Key]).
func newPinCheck(key string) PinCheck {
	kind, name := splitPinKey(key)
	return PinCheck{Tool: name, Kind: kind}
}

// Key is the key c's entry is pinned under ([PinCheck.Key]).
func (c PinCheck) Key() string { return pinKey(c.Kind, c.Tool) }

// what names the entry in messages: tool "x", prompt "y"...
func (c PinCheck) what() string {
	kind := map[string]string{"": "tool", PinPrompt: "prompt", PinResource: "resource", PinResourceTemplate: "resource template"}[c.Kind]
	return fmt.Sprintf("%s %q", kind, c.Tool)
}

// Message says why a held tool is held and how to approve it; store is the
// flag naming the pins' store ([Pins.Flag]: "--pins FILE", "--state URL").
func (c PinCheck) Message(store string) string {
	switch {
	case c.Status == PinChanged:
		return fmt.Sprintf("%s changed since it was pinned (%s differ); it is held until approved: toolselect mcp pins approve %s %s",
			c.what(), strings.Join(c.Changed, ", "), c.ApproveArg(), store)
	case c.Status == PinUnreviewed:
		return fmt.Sprintf("%s is new since the first pinning; it is held until reviewed and approved: toolselect mcp pins approve %s %s",
			c.what(), c.ApproveArg(), store)
	case c.Status == PinUnconfirmed:
		return fmt.Sprintf("%s is held: its pin cannot be confirmed while the pin store (%s) cannot be reached; it is served when the store answers again",
			c.what(), store)
	case c.Held:
		return fmt.Sprintf("%s is held: its name, description, title or schema text carries %s (strict descriptions); review it and approve: toolselect mcp pins approve %s %s",
			c.what(), strings.Join(c.Flags, ", "), c.ApproveArg(), store)
	}
	return ""
}

// Refusal says why a held tool is held, for the model that called it: that
// it waits for an operator's approval, and neither the command that
// approves it nor the pin file's path nor the hash an approval names (an
// agent with a shell could approve the change it is being protected from).
// [PinCheck.Message], with the command, is for the operator's log and
// "pins list".
func (c PinCheck) Refusal() string {
	switch {
	case c.Status == PinChanged:
		return fmt.Sprintf("%s changed since it was pinned (%s differ); it is held until an operator reviews and approves the change, and cannot be called until then",
			c.what(), strings.Join(c.Changed, ", "))
	case c.Status == PinUnreviewed:
		return fmt.Sprintf("%s is new since the first pinning; it is held until an operator reviews and approves it, and cannot be called until then", c.what())
	case c.Status == PinUnconfirmed:
		return fmt.Sprintf("%s is held: its pin cannot be confirmed while the pin store cannot be reached; it is served when the store answers again", c.what())
	case c.Held:
		return fmt.Sprintf("%s is held: its name, description, title or schema text carries %s (strict descriptions); it cannot be called until an operator reviews and approves it",
			c.what(), strings.Join(c.Flags, ", "))
	}
	return ""
}

// ApproveArg is what "toolselect mcp pins approve" takes to approve exactly
// this definition: NAME@SHA256, with "KIND:" before the name of a prompt
// or resource (ParseApproveArg reads it back).
func (c PinCheck) ApproveArg() string {
	s := c.Tool
	if c.Kind != "" {
		s = c.Kind + ":" + s
	}
	if c.SHA256 != "" {
		s += "@" + c.SHA256
	}
	return s
}

// Check is CheckWith(t, strict, false).
func (p *Pins) Check(t Tool, strict bool) (PinCheck, bool, error) {
	return p.CheckWith(t, strict, false)
}

// CheckWith checks t against its pin: a tool seen for the first time is
// pinned (and the file marked for saving), a matching one is OK, a changed
// one is recorded as pending and held. With strict, a tool whose definition
// carries a flag is held even on first sight. With holdNew (for tools that
// appear after the first pinning), a tool seen for the first time is held
// for review (PinUnreviewed) instead of pinned; an entry held so stays held
// until approved, whatever later checks say of new tools. It reports
// whether the pin file changed (Save it).
func (p *Pins) CheckWith(t Tool, strict, holdNew bool) (PinCheck, bool, error) {
	h, err := definitionHashes(t)
	if err != nil {
		c := newPinCheck(t.Name)
		return c, false, fmt.Errorf("pins: %s: %w", c.what(), err)
	}
	flags := definitionFlags(t)
	c := newPinCheck(t.Name)
	c.Flags, c.SHA256 = flags, h.whole
	pending := &pendingPin{pinnedDefinition: pinnedDefinition{SHA256: h.whole, Description: h.desc, Schema: h.schema,
		Annotations: h.ann, Title: h.title, OutputSchema: h.output, Definition: h.def, Flags: flags}, Seen: 1}
	p.mu.Lock()
	defer p.mu.Unlock()
	pin := p.file.Tools[t.Name]
	switch {
	case pin == nil && holdNew:
		p.touch(t.Name)
		pending.Changed = []string{"new"}
		p.file.Tools[t.Name] = &toolPin{Pending: pending}
		c.Status, c.Changed, c.Held = PinUnreviewed, pending.Changed, true
		return c, true, nil
	case pin == nil:
		p.touch(t.Name)
		np := pending.pinOf()
		np.Reviewed = false
		p.file.Tools[t.Name] = &np
		c.Status, c.Held = PinNew, strict && len(flags) > 0
		return c, true, nil
	case pin.SHA256 == "": // held for review since its first sight
		c.Status, c.Changed, c.Held = PinUnreviewed, []string{"new"}, true
		pending.Changed = c.Changed
	case pin.SHA256 == h.whole:
		c.Status, c.Held = PinOK, strict && len(flags) > 0 && !pin.approvedFlags(flags)
		if pin.Pending == nil {
			return c, false, nil
		}
		p.touch(t.Name)
		// The definition came back to its pin: nothing waits, but what was
		// reviewed, if anything, is no longer what will come next.
		pin.Changes = pin.Pending.seen()
		pin.Pending = nil
		return c, true, nil
	default:
		c.Status, c.Changed, c.Held = PinChanged, pin.changedParts(h), true
		pending.Changed = c.Changed
	}
	if pin.Pending != nil && pin.Pending.SHA256 == pending.SHA256 {
		return c, false, nil
	}
	if pin.Pending != nil {
		pending.Seen = pin.Pending.seen() + 1
	} else {
		pending.Seen = pin.Changes + 1
	}
	p.touch(t.Name)
	pin.Pending = pending
	return c, true, nil
}

// approvedFlags: flags already in the pin were reviewed with it (an approval
// keeps them), so a strict check does not hold the tool again for them.
func (pin *toolPin) approvedFlags(flags []string) bool {
	for _, f := range flags {
		found := false
		for _, g := range pin.Flags {
			found = found || f == g
		}
		if !found {
			return false
		}
	}
	return pin.Reviewed
}
