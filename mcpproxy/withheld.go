package mcpproxy

// What find_tool says of the matches it did not return: how many, and why
// (destructive, held, role, ...), never which, nor anything that would help
// call them.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolselect/toolselect/executor/metatool"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// The reasons find_tool gives for a withheld match, in the proxy's words.
const (
	withheldDestructive = "destructive"
	withheldHeld        = "held"
	withheldRole        = "role"
	withheldDenied      = "denied by rule"
)

// withheldReasons words the executor's rules in the proxy's vocabulary;
// another rule is given by its own name.
var withheldReasons = map[registry.Rule]string{
	registry.RuleUnsafe: withheldDestructive,
	registry.RuleRole:   withheldRole,
	registry.RuleDenied: withheldDenied,
}

// withheldWhy says, per reason, why such a match is not offered, for the
// model: what it is waiting for, not how to get it.
var withheldWhy = map[string]string{
	withheldDestructive: "destructive, which this proxy is set not to run",
	withheldHeld:        "held: its definition changed or is new, and waits for an operator's review",
	withheldRole:        "reserved for roles this client does not hold",
	withheldDenied:      "denied by a rule of this proxy's configuration",
}

// withheld counts the matches of a find_tool of query at limit that the
// policy or the pins kept out of found, by reason.
func (p *Proxy) withheld(ctx context.Context, query string, limit int, found []metatool.FoundTool) map[string]int {
	out := map[string]int{}
	byRule, err := p.meta.Withheld(ctx, query, limit, found)
	if err != nil {
		p.log.Debug("mcp find_tool: counting withheld matches failed", "error", err)
	}
	for rule, n := range byRule {
		why, ok := withheldReasons[rule]
		if !ok {
			why = string(rule)
		}
		out[why] += n
	}
	if n := p.heldMatches(ctx, query, limit); n > 0 {
		out[withheldHeld] = n
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// heldMatches counts the held tools (not prompts or resources) a find_tool
// of query would rank among its limit results, ranked among themselves:
// they are not in the registry, so not in any other ranking.
func (p *Proxy) heldMatches(ctx context.Context, query string, limit int) int {
	p.mu.Lock()
	var defs []registry.Tool
	for _, h := range p.held {
		if h.check.Kind == "" {
			defs = append(defs, h.def)
		}
	}
	p.mu.Unlock()
	if len(defs) == 0 {
		return 0
	}
	reg := registry.New(nil)
	for _, d := range defs {
		d.Safe = true // counted as held, whatever else would withhold it
		d.Roles = nil
		_ = reg.Register(d) // a definition the registry refuses matches nothing
	}
	if limit <= 0 {
		limit = rank.DefaultFindLimit
	}
	picks, err := rank.For(reg).Rank(ctx, query, &rank.Options{MaxCandidates: min(limit, rank.MaxFindLimit)})
	if err != nil {
		return 0
	}
	return len(picks)
}

// withheldNote words counts for the model: "2 matching tools were
// withheld: 1 destructive, ...; 1 held: ...".
func withheldNote(counts map[string]int) string {
	total := 0
	var parts []string
	for _, why := range slices.Sorted(maps.Keys(counts)) {
		total += counts[why]
		text := withheldWhy[why]
		if text == "" {
			text = "refused here (" + why + ")"
		}
		parts = append(parts, fmt.Sprintf("%d %s", counts[why], text))
	}
	tools := "tools"
	if total == 1 {
		tools = "tool"
	}
	return fmt.Sprintf("%d more matching %s withheld and not callable: %s", total, tools, strings.Join(parts, "; "))
}
