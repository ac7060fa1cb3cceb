package mcpproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolselect/toolselect/internal/statestore"
	"github.com/toolselect/toolselect/registry"
)

// Pinned definitions ([Config.Pins]; the check itself is [registry.Pins]): a
// tool whose definition differs from its pin is held, neither listed nor
// findable, and a call to it is a tool error saying what changed and how to
// approve it. Prompts, resources and resource templates are pinned too: a
// held one is not listed (nor, a prompt, served). With Config.PinsNew
// "review", what appears after the first pinning is held as well. Stats,
// the log and /metrics name every held and flagged definition.
//
// A pin file that vanishes or no longer reads once loaded changes nothing:
// the pins read before stay in force (held stays held), the log says so
// once, and the file is read again when it is back.
//
// An approval (toolselect mcp pins approve, or an edit of the file) reaches
// a running proxy: the file is read again when it changed, before a call, a
// find, a tools/list and the stats, and once a second while anything is
// held, and the held tools it releases are served as an import serves them.
// The proxy saves only its own changes, merged with the file (registry.Pins.Save).

// pinPollInterval is how often the pin file is looked at while a tool is held.
const pinPollInterval = time.Second

// heldTool is a held tool: why, and its definition and source, kept to serve
// it when approved. A held prompt or resource (check.Kind set) is served by
// listing its upstream's prompts or resources again.
type heldTool struct {
	check registry.PinCheck
	def   registry.Tool
	up    *upstream // nil for a catalog tool
	// catalog is the catalog file of a catalog tool.
	catalog string
}

// otherSource is an upstream's prompts (registry.PinPrompt) or resources
// and resource templates (registry.PinResource).
type otherSource struct {
	up   *upstream
	kind string
}

// loadPins reads the configured pin file, or the pins of the shared store
// ([Config.State]). A shared store away at start is no error: the pins start
// empty, every tool they cannot confirm is held (registry.PinUnconfirmed),
// /readyz says "state", and the store is read again once a second until it
// answers.
func (p *Proxy) loadPins() error {
	p.held, p.flagged = map[string]*heldTool{}, map[string]registry.PinCheck{}
	if p.cfg.Pins == "" && p.cfg.State == "" {
		if p.cfg.StrictDescriptions {
			return fmt.Errorf("strictDescriptions needs a pin file (pins) or a shared store (state)")
		}
		return nil
	}
	var pins *registry.Pins
	var err error
	if p.cfg.State != "" {
		store, oerr := statestore.Open(p.cfg.State, p.cfg.StatePasswordFile)
		if oerr != nil {
			return oerr
		}
		store.Observe = p.metrics.observeState
		p.state = store
		pins, err = registry.OpenPins(store)
		if errors.Is(err, registry.ErrPinStoreUnavailable) {
			p.log.Warn("mcp state: the store cannot be reached; what it holds is not known, so every tool is held until it answers", "state", store.Where(), "error", err)
			p.pinsErr, err = err.Error(), nil
		}
	} else {
		pins, err = registry.LoadPins(p.cfg.Pins)
	}
	if err != nil {
		return err
	}
	p.pins = pins
	// The first pinning is this start when the file holds nothing yet.
	p.pinnedBefore = !pins.Empty()
	p.others = map[otherSource][]string{}
	return nil
}

// pinPolicy is what a check holds now besides changed definitions: flagged
// ones (strict) and new ones (holdNew). The caller holds importMu.
func (p *Proxy) pinPolicy() (strict, holdNew bool) {
	// A held tool whose entry the file no longer has (a file put back
	// from an older copy, an entry deleted) stays held: rechecking, a
	// missing entry is new and is held for review.
	hold := p.recheckingPins || p.cfg.PinsNew == pinsNewReview && p.pinnedBefore
	return p.cfg.StrictDescriptions, hold
}

// holdTools checks tools (all from up, or from the catalog file) against
// their pins, records the held and flagged ones (a held tool that was
// served is withdrawn), saves the pin file once when it changed, and
// reports which tools are held. The caller holds importMu.
func (p *Proxy) holdTools(tools []registry.Tool, up *upstream, catalog string) map[string]bool {
	if p.pins == nil || len(tools) == 0 {
		return nil
	}
	checks := p.checkPins(tools)
	held := map[string]bool{}
	for i, t := range tools {
		if p.record(checks[i], &heldTool{check: checks[i], def: t, up: up, catalog: catalog}) {
			held[t.Name] = true
		}
	}
	return held
}

// holdOthers is holdTools for an upstream's prompts or resources (src),
// each given as a registry.Tool named by its pin key (pinKey); what it held
// before and no longer sees is forgotten. It reports the keys held.
func (p *Proxy) holdOthers(src otherSource, defs []registry.Tool) map[string]bool {
	if p.pins == nil {
		return nil
	}
	p.importMu.Lock()
	defer p.importMu.Unlock()
	p.mu.Lock()
	before := p.others[src]
	keys := make([]string, len(defs))
	for i, d := range defs {
		keys[i] = d.Name
	}
	p.others[src] = keys
	p.mu.Unlock()
	var gone []string
	for _, k := range before {
		if !slices.Contains(keys, k) {
			gone = append(gone, k)
		}
	}
	p.forget(gone)
	if len(defs) == 0 {
		return nil
	}
	checks := p.checkPins(defs)
	held := map[string]bool{}
	for i, d := range defs {
		if p.record(checks[i], &heldTool{check: checks[i], def: d, up: src.up}) {
			held[d.Name] = true
		}
	}
	return held
}

// promptPinDefs are the pinned definitions of an upstream's prompts, as
// served: name, title, description and every argument's name, title and
// description.
func (p *Proxy) promptPinDefs(u *upstream, prompts []*mcp.Prompt) []registry.Tool {
	defs := make([]registry.Tool, 0, len(prompts))
	for _, pr := range prompts {
		args, _ := json.Marshal(map[string]any{"arguments": pr.Arguments})
		defs = append(defs, pinDef(pinKey(registry.PinPrompt, p.served(u, pr.Name)), pr.Title, pr.Description, args))
	}
	return defs
}

// resourcePinDefs are the pinned definitions of an upstream's resources
// and templates under their proxy URIs: name, title, description, URI and
// MIME type (not the size or annotations, which change with the content;
// the content itself is never pinned).
func (p *Proxy) resourcePinDefs(u *upstream, resources []*mcp.Resource, templates []*mcp.ResourceTemplate) []registry.Tool {
	var defs []registry.Tool
	for _, r := range resources {
		if uri, ok := p.proxyURI(u, r.URI); ok {
			b, _ := json.Marshal(map[string]any{"uri": r.URI, "name": r.Name, "mimeType": r.MIMEType})
			defs = append(defs, pinDef(pinKey(registry.PinResource, uri), r.Title, r.Description, b))
		}
	}
	for _, t := range templates {
		if tmpl, ok := p.proxyURI(u, t.URITemplate); ok {
			b, _ := json.Marshal(map[string]any{"uriTemplate": t.URITemplate, "name": t.Name, "mimeType": t.MIMEType})
			defs = append(defs, pinDef(pinKey(registry.PinResourceTemplate, tmpl), t.Title, t.Description, b))
		}
	}
	return defs
}

// pinKey is the key a prompt or resource (kind) is pinned and held under.
func pinKey(kind, name string) string { return registry.PinCheck{Kind: kind, Tool: name}.Key() }

// pinDef is a prompt's or resource's definition as the pins check it.
func pinDef(key, title, desc string, def json.RawMessage) registry.Tool {
	t := registry.NewTool(key, desc, def)
	if title != "" {
		t.Metadata = map[string]any{"title": title}
	}
	return t
}

// checkPins checks definitions against their pins and saves the pin file
// once when it changed. The caller holds importMu.
func (p *Proxy) checkPins(tools []registry.Tool) []registry.PinCheck {
	strict, holdNew := p.pinPolicy()
	checks := make([]registry.PinCheck, len(tools))
	// Save merges with the file, and gives up a change to an entry the file
	// changed meanwhile (an approval): the tools are checked again against
	// the merged pins until nothing changes.
	for range 3 {
		changed := false
		for i, t := range tools {
			c, ch, err := p.pins.CheckWith(t, strict, holdNew)
			if err != nil {
				// A definition that cannot be hashed cannot be vouched for.
				p.log.Warn("mcp tool held: its definition cannot be pinned", "tool", c.Tool, "error", err)
				c.Status, c.Changed, c.Held = registry.PinChanged, []string{"unhashable"}, true
			}
			checks[i], changed = c, changed || ch
		}
		if !changed {
			break
		}
		if err := p.pins.Save(); err != nil {
			p.log.Error("mcp pins: the pin file could not be written; the pins stay in force here and are written when it can be", "file", p.pins.Path(), "error", err)
			if errors.Is(err, registry.ErrPinStoreUnavailable) {
				p.holdUnconfirmed(checks)
			}
			break
		}
	}
	return checks
}

// holdUnconfirmed holds each served definition whose pin was made or
// changed here and not written: with the shared store away, another
// replica may have pinned it otherwise (or held it), so it is not served
// fresh (fail closed). What the store confirmed before stays served.
func (p *Proxy) holdUnconfirmed(checks []registry.PinCheck) {
	for i, c := range checks {
		if !c.Held && p.pins.Unsaved(c.Key()) {
			checks[i].Status, checks[i].Held, checks[i].Changed = registry.PinUnconfirmed, true, []string{"unconfirmed"}
		}
	}
}

// record notes what a pin check said of a tool (or prompt or resource) and
// reports whether it is held.
func (p *Proxy) record(c registry.PinCheck, h *heldTool) bool {
	key, what := c.Key(), "tool"
	if c.Kind != "" {
		what = c.Kind
	}
	p.mu.Lock()
	if len(c.Flags) > 0 {
		if _, seen := p.flagged[key]; !seen {
			p.log.Warn("mcp "+what+" description flagged", "tool", c.Tool, "flags", c.Flags)
		}
		p.flagged[key] = c
	} else {
		delete(p.flagged, key)
	}
	if !c.Held {
		if _, was := p.held[key]; was {
			p.log.Info("mcp "+what+" approved: served again", "tool", c.Tool)
		}
		delete(p.held, key)
		p.mu.Unlock()
		return false
	}
	if _, was := p.held[key]; !was {
		p.log.Warn("mcp "+what+" held", "tool", c.Tool, "status", c.Status, "changed", c.Changed, "flags", c.Flags,
			"approve", "toolselect mcp pins approve "+c.ApproveArg()+" "+p.pins.Flag())
	}
	p.held[key] = h
	p.mu.Unlock()
	// A tool imported before its change is withdrawn now.
	if _, ok := p.reg.Get(key); ok && c.Kind == "" {
		p.reg.Unregister(key)
	}
	return true
}

// forget drops what is recorded of tools that are no longer listed.
func (p *Proxy) forget(names []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range names {
		delete(p.held, n)
		delete(p.flagged, n)
	}
}

// syncPins reads the pin file again when a tool is held and the file
// changed, and serves the tools it no longer holds.
func (p *Proxy) syncPins() {
	if p.pins == nil {
		return
	}
	p.mu.Lock()
	n := len(p.held)
	p.mu.Unlock()
	if n == 0 {
		return
	}
	p.pollPins()
}

// pollPins reads the pin file again if it changed, and acts on it. Reading
// the file again is a stat when it did not change: done before queueing
// behind imports, so requests made while a tool is held do not wait on
// each other.
func (p *Proxy) pollPins() {
	edited, err := p.pins.Reload()
	p.mu.Lock()
	failing := p.pinsErr != ""
	p.mu.Unlock()
	if err == nil && !edited && !failing {
		return
	}
	p.importMu.Lock()
	defer p.importMu.Unlock()
	p.applyPins(edited, err)
}

// syncPinsLocked reads the pin file again if it changed (an approval, an
// edit) and checks every held tool against it: the ones released are served
// as an import serves them. The caller holds importMu.
func (p *Proxy) syncPinsLocked() {
	if p.pins == nil {
		return
	}
	edited, err := p.pins.Reload()
	p.applyPins(edited, err)
}

// applyPins acts on a Reload of the pin file: a read error (the file gone,
// unreadable, not a pin file, writable by others) is warned about once and
// changes nothing; the file reading again is said, and what was pinned
// meanwhile is written; an edit re-checks every held tool. The caller
// holds importMu.
func (p *Proxy) applyPins(edited bool, err error) {
	if err != nil {
		p.mu.Lock()
		warn := err.Error() != p.pinsErr
		p.pinsErr = err.Error()
		p.mu.Unlock()
		if warn {
			p.log.Warn("mcp pins: the pin file cannot be read again; the pins read before stay in force (held tools stay held) until it reads again", "file", p.pins.Path(), "error", err)
		}
		return
	}
	p.mu.Lock()
	recovered := p.pinsErr != ""
	p.pinsErr = ""
	p.mu.Unlock()
	if recovered {
		p.log.Info("mcp pins: the pin file reads again", "file", p.pins.Path())
		if err := p.pins.Save(); err != nil {
			p.log.Error("mcp pins: the pin file could not be written", "file", p.pins.Path(), "error", err)
		}
	}
	if !edited && !recovered { // recovered: what was held unconfirmed is checked again
		return
	}
	p.recheckingPins = true
	defer func() { p.recheckingPins = false }()
	type source struct {
		up      *upstream
		catalog string
	}
	groups := map[source][]registry.Tool{}
	others := map[otherSource][]*heldTool{}
	p.mu.Lock()
	for _, h := range p.held {
		if h.check.Kind != "" {
			s := otherSource{h.up, otherKind(h.check.Kind)}
			others[s] = append(others[s], h)
			continue
		}
		s := source{h.up, h.catalog}
		groups[s] = append(groups[s], h.def)
	}
	p.mu.Unlock()
	p.releaseOthers(others)
	if len(groups) == 0 {
		return
	}
	released := false
	for s, tools := range groups {
		sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
		held := p.holdTools(tools, s.up, s.catalog)
		var free []registry.Tool
		for _, t := range tools {
			if !held[t.Name] {
				free = append(free, t)
			}
		}
		if len(free) == 0 {
			continue
		}
		released = true
		if s.up == nil {
			p.serveCatalogTools(s.catalog, free)
			continue
		}
		for _, t := range free {
			if err := p.serveUpstreamTool(s.up, t); err != nil {
				tool, _ := t.Metadata["upstreamTool"].(string)
				p.log.Warn("mcp upstream tool left out", "upstream", s.up.cfg.Name, "tool", tool, "error", err)
				s.up.mu.Lock()
				s.up.refused = append(s.up.refused, refusal{Tool: tool, Reason: err.Error()})
				s.up.mu.Unlock()
				continue
			}
			s.up.mu.Lock()
			s.up.names = append(s.up.names, t.Name)
			s.up.mu.Unlock()
		}
	}
	if released {
		p.syncExposed(p.life)
		p.relayToolsChanged() // find_tool finds the released tools now
	}
}

// releaseOthers checks held prompts and resources against the pins just
// read and, for each upstream and kind with one released, lists them again
// in the background (which serves them). The caller holds importMu.
func (p *Proxy) releaseOthers(others map[otherSource][]*heldTool) {
	for src, hs := range others {
		defs := make([]registry.Tool, len(hs))
		for i, h := range hs {
			defs[i] = h.def
		}
		checks := p.checkPins(defs)
		released := false
		for i, c := range checks {
			released = !p.record(c, hs[i]) || released
		}
		if !released || src.up == nil || p.life.Err() != nil {
			continue
		}
		relist := src.up.refreshPrompts
		if src.kind == registry.PinResource {
			relist = src.up.refreshResources
		}
		p.bg.Go(relist)
	}
}

// otherKind is the otherSource kind of a pin kind: resource templates are
// listed with resources.
func otherKind(kind string) string {
	if kind == registry.PinResourceTemplate {
		return registry.PinResource
	}
	return kind
}

// watchPins looks at the pin file once a pinPollInterval (a stat when it
// did not change), so an approval reaches the agent's tools/list without a
// request first and a pin file that vanishes is said at once; it ends when
// the proxy closes.
func (p *Proxy) watchPins() {
	tick := time.NewTicker(pinPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-p.life.Done():
			return
		case <-tick.C:
			p.pollPins()
		}
	}
}

// watchState reads the shared store's pins again as soon as a replica
// announces a write (the once-a-second watchPins is the safety net for an
// announcement missed); it ends when the proxy closes.
func (p *Proxy) watchState() {
	p.state.Watch(p.life, p.pollPins)
}

// checkPromptText scans the texts of a prompt's messages (what the model
// reads, filled in by the upstream on each get, so never pinned) for
// hidden text: flagged, it is logged, and refused under strict
// descriptions.
func (p *Proxy) checkPromptText(name string, res *mcp.GetPromptResult) error {
	var texts []string
	if res.Description != "" {
		texts = append(texts, res.Description)
	}
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		if t, ok := m.Content.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	flags := p.pins.TextFlags(texts...)
	if len(flags) == 0 {
		return nil
	}
	p.log.Warn("mcp prompt text flagged", "prompt", name, "flags", flags)
	if p.cfg.StrictDescriptions {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %q is refused: its text carries %s (strict descriptions)", name, strings.Join(flags, ", "))}
	}
	return nil
}

// heldResult is the tool error a call to a held tool gets; nil when name is not held.
func (p *Proxy) heldResult(name string) *mcp.CallToolResult {
	p.mu.Lock()
	h, ok := p.held[name]
	p.mu.Unlock()
	if !ok {
		return nil
	}
	// The model learns that the tool waits for an operator, never how to
	// approve it: the command (and the pin file, and the hash it names) is
	// in the log and "pins list".
	c := h.check
	msg := c.Refusal()
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}},
		StructuredContent: map[string]any{"error": msg, "tool": name, "outcome": "held", "changed": c.Changed, "flags": c.Flags}}
}

// pinStats lists the held and flagged tools.
type pinStats struct {
	// File and Flag name the store (--pins FILE, --state URL); absent from
	// the toolselect://stats resource (readStats).
	File    string              `json:"file,omitempty"`
	Flag    string              `json:"flag,omitempty"`
	Held    []registry.PinCheck `json:"held"`
	Flagged []registry.PinCheck `json:"flagged"`
}

// pinStats is the Stats section (nil without a pin file).
func (p *Proxy) pinStats() *pinStats {
	if p.pins == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := &pinStats{File: p.pins.Path(), Flag: p.pins.Flag(), Held: []registry.PinCheck{}, Flagged: []registry.PinCheck{}}
	for _, h := range p.held {
		s.Held = append(s.Held, h.check)
	}
	for _, c := range p.flagged {
		s.Flagged = append(s.Flagged, c)
	}
	sort.Slice(s.Held, func(i, j int) bool { return s.Held[i].Tool < s.Held[j].Tool })
	sort.Slice(s.Flagged, func(i, j int) bool { return s.Flagged[i].Tool < s.Flagged[j].Tool })
	return s
}

var (
	descHeld    = prometheus.NewDesc("toolselect_mcp_held_tools", "Tools held because their definition changed since it was pinned (or, with strict descriptions, flagged).", nil, nil)
	descFlagged = prometheus.NewDesc("toolselect_mcp_flagged_tools", "Tools whose description, title or schema text carries invisible or bidirectional characters or an HTML comment.", nil, nil)
)
