package mcpproxy

import (
	"fmt"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolselect/toolselect/registry"
)

// Pinned definitions (Config.Pins; the check itself is registry.Pins): a
// tool whose definition differs from its pin is held, neither listed nor
// findable, and a call to it is a tool error saying what changed and how to
// approve it. Stats, the log and /metrics name every held and flagged tool.

// loadPins reads the configured pin file.
func (p *Proxy) loadPins() error {
	p.held, p.flagged = map[string]registry.PinCheck{}, map[string]registry.PinCheck{}
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

// hold checks t against its pin and reports whether it must be held. It
// records held and flagged tools and saves the pin file when it changed.
func (p *Proxy) hold(t registry.Tool) bool {
	if p.pins == nil {
		return false
	}
	c, changed, err := p.pins.Check(t, p.cfg.StrictDescriptions)
	if err != nil {
		// A definition that cannot be hashed cannot be vouched for.
		p.log.Warn("mcp tool held: its definition cannot be pinned", "tool", t.Name, "error", err)
		c = registry.PinCheck{Tool: t.Name, Status: registry.PinChanged, Changed: []string{"unhashable"}, Held: true}
	}
	if changed {
		if err := p.pins.Save(); err != nil {
			p.log.Error("mcp pins: the pin file could not be written", "file", p.pins.Path(), "error", err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(c.Flags) > 0 {
		if _, seen := p.flagged[t.Name]; !seen {
			p.log.Warn("mcp tool description flagged", "tool", t.Name, "flags", c.Flags)
		}
		p.flagged[t.Name] = c
	} else {
		delete(p.flagged, t.Name)
	}
	if !c.Held {
		delete(p.held, t.Name)
		return false
	}
	if _, was := p.held[t.Name]; !was {
		p.log.Warn("mcp tool held", "tool", t.Name, "status", c.Status, "changed", c.Changed, "flags", c.Flags,
			"approve", "toolselect mcp pins approve "+t.Name+" --pins "+p.pins.Path())
	}
	p.held[t.Name] = c
	// A tool imported before its change is withdrawn now.
	if _, ok := p.reg.Get(t.Name); ok {
		p.reg.Unregister(t.Name)
	}
	return true
}

// heldResult is the tool error a call to a held tool gets; nil when name is not held.
func (p *Proxy) heldResult(name string) *mcp.CallToolResult {
	p.mu.Lock()
	c, ok := p.held[name]
	p.mu.Unlock()
	if !ok {
		return nil
	}
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
	for _, c := range p.held {
		s.Held = append(s.Held, c)
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
	descFlagged = prometheus.NewDesc("toolselect_mcp_flagged_tools", "Tools whose description carries invisible or bidirectional characters or an HTML comment.", nil, nil)
)
