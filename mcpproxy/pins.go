package mcpproxy

import (
	"fmt"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolselect/toolselect/registry"
)

// Pinned definitions (Config.Pins; the check itself is registry.Pins): a
// tool whose definition differs from its pin is held, neither listed nor
// findable, and a call to it is a tool error saying what changed and how to
// approve it. Stats, the log and /metrics name every held and flagged tool.
//
// An approval (toolselect mcp pins approve, or an edit of the file) reaches
// a running proxy: the file is read again when it changed, before a call, a
// find, a tools/list and the stats, and once a second while anything is
// held, and the held tools it releases are served as an import serves them.
// The proxy saves only its own changes, merged with the file (registry.Pins.Save).

// pinPollInterval is how often the pin file is looked at while a tool is held.
const pinPollInterval = time.Second

// heldTool is a held tool: why, and its definition and source, kept to serve
// it when approved.
type heldTool struct {
	check registry.PinCheck
	def   registry.Tool
	up    *upstream // nil for a catalog tool
	// catalog is the catalog file of a catalog tool.
	catalog string
}

// loadPins reads the configured pin file.
func (p *Proxy) loadPins() error {
	p.held, p.flagged = map[string]*heldTool{}, map[string]registry.PinCheck{}
	if p.cfg.Pins == "" {
		if p.cfg.StrictDescriptions {
			return fmt.Errorf("strictDescriptions needs a pin file (pins)")
		}
		return nil
	}
	pins, err := registry.LoadPins(p.cfg.Pins)
	if err != nil {
		return err
	}
	p.pins = pins
	return nil
}

// holdTools checks tools (all from up, or from the catalog file) against
// their pins, records the held and flagged ones (a held tool that was
// served is withdrawn), saves the pin file once when it changed, and
// reports which tools are held. The caller holds importMu.
func (p *Proxy) holdTools(tools []registry.Tool, up *upstream, catalog string) map[string]bool {
	if p.pins == nil || len(tools) == 0 {
		return nil
	}
	checks := make([]registry.PinCheck, len(tools))
	// Save merges with the file, and gives up a change to an entry the file
	// changed meanwhile (an approval): the tools are checked again against
	// the merged pins until nothing changes.
	for range 3 {
		changed := false
		for i, t := range tools {
			c, ch, err := p.pins.Check(t, p.cfg.StrictDescriptions)
			if err != nil {
				// A definition that cannot be hashed cannot be vouched for.
				p.log.Warn("mcp tool held: its definition cannot be pinned", "tool", t.Name, "error", err)
				c = registry.PinCheck{Tool: t.Name, Status: registry.PinChanged, Changed: []string{"unhashable"}, Held: true}
			}
			checks[i], changed = c, changed || ch
		}
		if !changed {
			break
		}
		if err := p.pins.Save(); err != nil {
			p.log.Error("mcp pins: the pin file could not be written", "file", p.pins.Path(), "error", err)
			break
		}
	}
	held := map[string]bool{}
	for i, t := range tools {
		if p.record(checks[i], &heldTool{check: checks[i], def: t, up: up, catalog: catalog}) {
			held[t.Name] = true
		}
	}
	return held
}

// record notes what a pin check said of a tool and reports whether it is held.
func (p *Proxy) record(c registry.PinCheck, h *heldTool) bool {
	name := c.Tool
	p.mu.Lock()
	if len(c.Flags) > 0 {
		if _, seen := p.flagged[name]; !seen {
			p.log.Warn("mcp tool description flagged", "tool", name, "flags", c.Flags)
		}
		p.flagged[name] = c
	} else {
		delete(p.flagged, name)
	}
	if !c.Held {
		if _, was := p.held[name]; was {
			p.log.Info("mcp tool approved: served again", "tool", name)
		}
		delete(p.held, name)
		p.mu.Unlock()
		return false
	}
	if _, was := p.held[name]; !was {
		p.log.Warn("mcp tool held", "tool", name, "status", c.Status, "changed", c.Changed, "flags", c.Flags,
			"approve", "toolselect mcp pins approve "+name+" --pins "+p.pins.Path())
	}
	p.held[name] = h
	p.mu.Unlock()
	// A tool imported before its change is withdrawn now.
	if _, ok := p.reg.Get(name); ok {
		p.reg.Unregister(name)
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
	// Reading the file again is a stat when it did not change: done before
	// queueing behind imports, so requests made while a tool is held do
	// not wait on each other.
	edited, err := p.pins.Reload()
	if err == nil && !edited {
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

// applyPins acts on a Reload of the pin file: a read error is warned about
// once; an edit re-checks every held tool. The caller holds importMu.
func (p *Proxy) applyPins(edited bool, err error) {
	if err != nil {
		p.mu.Lock()
		warn := err.Error() != p.pinsErr
		p.pinsErr = err.Error()
		p.mu.Unlock()
		if warn {
			p.log.Warn("mcp pins: the pin file cannot be read again; the pins read before stay in force", "file", p.pins.Path(), "error", err)
		}
		return
	}
	p.mu.Lock()
	p.pinsErr = ""
	if !edited {
		p.mu.Unlock()
		return
	}
	type source struct {
		up      *upstream
		catalog string
	}
	groups := map[source][]registry.Tool{}
	for _, h := range p.held {
		s := source{h.up, h.catalog}
		groups[s] = append(groups[s], h.def)
	}
	p.mu.Unlock()
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

// watchPins looks at the pin file once a pinPollInterval while a tool is
// held, so an approval reaches the agent's tools/list without a request
// first; it ends when the proxy closes.
func (p *Proxy) watchPins() {
	tick := time.NewTicker(pinPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-p.life.Done():
			return
		case <-tick.C:
			p.syncPins()
		}
	}
}

// heldResult is the tool error a call to a held tool gets; nil when name is not held.
func (p *Proxy) heldResult(name string) *mcp.CallToolResult {
	p.mu.Lock()
	h, ok := p.held[name]
	p.mu.Unlock()
	if !ok {
		return nil
	}
	c := h.check
	msg := c.Message(p.pins.Path())
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}},
		StructuredContent: map[string]any{"error": msg, "tool": name, "outcome": "held", "changed": c.Changed, "flags": c.Flags}}
}

// pinStats lists the held and flagged tools.
type pinStats struct {
	File    string              `json:"file"`
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
	s := &pinStats{File: p.pins.Path(), Held: []registry.PinCheck{}, Flagged: []registry.PinCheck{}}
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
