package registry

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// waiting is what an approval of pin would accept: the pending definition,
// or the pin itself when its flags were not reviewed; nil when nothing waits.
func (pin *toolPin) waiting() (sha string, seen int, ok bool) {
	switch {
	case pin == nil:
		return "", 0, false
	case pin.Pending != nil:
		return pin.Pending.SHA256, pin.Pending.seen(), true
	case len(pin.Flags) > 0 && !pin.Reviewed:
		return pin.SHA256, pin.Changes + 1, true
	}
	return "", 0, false
}

// approve makes what waits the pin. The caller holds p.mu and checked that something waits.
func (p *Pins) approve(name string) {
	p.touch(name)
	pin := p.file.Tools[name]
	if pin.Pending != nil {
		*pin = pin.Pending.pinOf()
		return
	}
	pin.Reviewed, pin.Changes = true, 0
}

// Approve makes each named tool's pending definition its pin (and marks a
// flagged pin as reviewed), whatever is pending now. It returns the names
// it did not find with anything to approve. A person approving what they
// reviewed uses ApproveDefinition, which approves that definition only.
func (p *Pins) Approve(names ...string) (missing []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range names {
		if _, _, ok := p.file.Tools[n].waiting(); !ok {
			missing = append(missing, n)
			continue
		}
		p.approve(n)
	}
	return missing
}

// ApproveDefinition approves the definition of tool name whose hash is
// sha256 ([PinCheck.SHA256], shown by "pins list"), and only it: when another
// one waits, it is ErrStaleApproval naming the hash that waits. With sha256
// "", it approves what waits only when exactly one definition waited since
// the pin, counting one that stopped waiting when the definition came back
// to the pin (a second one may have arrived after the person looked: v1
// pinned, v2 reviewed, v1 back, v3 arriving is refused by name). It returns
// the hash it approved.
func (p *Pins) ApproveDefinition(name, sha256 string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sha, seen, ok := p.file.Tools[name].waiting()
	switch {
	case !ok:
		return "", fmt.Errorf("%w: %s", ErrNothingToApprove, name)
	case sha256 != "" && !strings.EqualFold(sha256, sha):
		return "", fmt.Errorf("%w: %s@%s; what waits now is %s@%s", ErrStaleApproval, name, sha256, name, sha)
	case sha256 == "" && seen > 1:
		return "", fmt.Errorf("%w: %d definitions of %s waited since it was pinned (one that came back to the pinned definition counts), so its name alone does not say which was reviewed; review it again (pins list) and approve the one you reviewed: %s@%s is the one waiting now", ErrStaleApproval, seen, name, name, sha)
	}
	p.approve(name)
	return sha, nil
}

// ApproveNamed approves what arg names, as "toolselect mcp pins approve"
// takes it ([PinCheck.ApproveArg]): NAME@SHA256 approves that definition only
// (ApproveDefinition), NAME alone only the one definition that waited since
// the pin; a prompt or resource is KIND:NAME (prompt:..., resource:...,
// resourceTemplate:...). A name that is both a tool's and, read as
// KIND:NAME, a prompt's or resource's is refused as ambiguous. It returns
// what it approved.
func (p *Pins) ApproveNamed(arg string) (PinCheck, error) {
	key, sha, err := p.resolve(arg)
	if err != nil {
		return PinCheck{}, err
	}
	c := newPinCheck(key)
	p.mu.Lock()
	if d := p.file.Tools[key]; d != nil && d.Pending != nil {
		c.Status, c.Changed, c.Flags = PinChanged, d.Pending.Changed, d.Pending.Flags
		if d.SHA256 == "" {
			c.Status = PinUnreviewed
		}
	} else if d != nil {
		c.Status, c.Flags = PinOK, d.Flags
	}
	p.mu.Unlock()
	c.SHA256, err = p.ApproveDefinition(key, sha)
	return c, err
}

// resolve reads arg into an entry's key and the hash named ("" for none).
func (p *Pins) resolve(arg string) (key, sha string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := func(name string) []string {
		var out []string
		if _, ok := p.file.Tools[name]; ok {
			out = append(out, name)
		}
		if kind, n, ok := strings.Cut(name, ":"); ok {
			if _, known := pinKindMaps[kind]; known {
				if _, ok := p.file.Tools[pinKey(kind, n)]; ok {
					out = append(out, pinKey(kind, n))
				}
			}
		}
		return out
	}
	name := arg
	found := keys(name)
	if i := strings.LastIndexByte(arg, '@'); len(found) == 0 && i >= 0 {
		name, sha = arg[:i], arg[i+1:]
		found = keys(name)
	}
	if len(found) > 1 && sha != "" { // the hash tells them apart
		found = slices.DeleteFunc(found, func(k string) bool {
			w, _, _ := p.file.Tools[k].waiting()
			return !strings.EqualFold(w, sha)
		})
	}
	switch len(found) {
	case 0:
		return "", "", fmt.Errorf("%w: %s", ErrNothingToApprove, arg)
	case 1:
		return found[0], sha, nil
	}
	return "", "", fmt.Errorf("%q names both a tool and a %s; approve the one you reviewed by its hash (NAME@SHA256, from the list)", name, newPinCheck(found[1]).what())
}

// Waiting lists, by name, the tools an approval would change, with the
// definitions to review (Pinned, Pending, Seen): each with a pending
// changed definition (Status PinChanged, Held, the parts Changed and the
// new definition's Flags), each held for review on first sight (Status
// PinUnreviewed), and each pinned with flags not yet reviewed (Status
// PinOK, its Flags, Held false: a check holds it only when strict).
// Approve accepts exactly these; SHA256 is the hash ApproveDefinition takes.
func (p *Pins) Waiting() []PinCheck {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []PinCheck
	for n, pin := range p.file.Tools {
		sha, seen, ok := pin.waiting()
		if !ok {
			continue
		}
		c := newPinCheck(n)
		c.SHA256, c.Pinned, c.Seen = sha, pin.Definition, seen
		switch d := pin.Pending; {
		case d != nil:
			c.Status, c.Changed, c.Flags, c.Held, c.Pending = PinChanged, d.Changed, d.Flags, true, d.Definition
			if pin.SHA256 == "" {
				c.Status = PinUnreviewed
			}
		default:
			c.Status, c.Flags = PinOK, pin.Flags
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}
