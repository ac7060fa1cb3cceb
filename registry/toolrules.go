package registry

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// ToolRules are an operator's rules for tools by name, as Claude Code's
// permission rules: each list holds patterns matched against the tool's
// name (its canonical name; in the MCP proxy the served, namespaced one)
// with [path.Match] ('*' any run of characters but '/', '?' one character
// but '/', '[...]' a class, '\' quoting the next character). A tool whose
// name holds '*', '?' or '[' is matched as those literal characters, never
// read as a pattern. Allow patterns match case for case; deny and ask
// patterns match whatever the case (of both), so that an upstream cannot
// dodge a deny rule for "fs__delete" by naming its tool "DELETE", while
// allowing "fs__read" lets only that exact name run.
//
// For a tool, Deny is read first, then Ask, then Allow: the first list with
// a matching pattern decides, whatever the others say and however specific
// their patterns are, so a deny rule can never be undone by an allow rule.
// A tool no rule matches is decided as before by the caller's Unsafe mode,
// AllowUnsafe and Ask ([Eligibility.Decide]).
type ToolRules struct {
	// Allow: the tool runs without asking, even when unsafe. A tool that
	// itself requires approval ([Tool.ApprovalRequired]) is still asked.
	Allow []string `json:"allow,omitempty"`
	// Ask: every call is asked about first, even of a safe tool; without
	// an approver it is refused ([RuleApprovalRequired]).
	Ask []string `json:"ask,omitempty"`
	// Deny: neither offered nor run ([RuleDenied]), even a safe or
	// read-only tool.
	Deny []string `json:"deny,omitempty"`
	// Unsafe is what becomes of an unsafe tool no rule matches: "deny",
	// "ask" or "allow". Empty: the caller's AllowUnsafe and Ask decide (ask
	// when it can ask, else allow when it allows unsafe tools, else deny).
	// It lets a caller with an approver (for its ask rules) still refuse
	// the unsafe tools no rule names (the MCP proxy's --destructive mode).
	Unsafe string `json:"-"`
}

// The decisions a rule gives (and the values of [ToolRules.Unsafe]).
const (
	decideDeny  = "deny"
	decideAsk   = "ask"
	decideAllow = "allow"
)

// Validate reports the first pattern [path.Match] cannot read, naming its
// list, or an Unsafe value that is not "deny", "ask" or "allow".
func (r ToolRules) Validate() error {
	for _, l := range r.lists() {
		for i, p := range l.patterns {
			if p == "" {
				return fmt.Errorf("%s[%d]: an empty pattern matches no tool", l.name, i)
			}
			if _, err := path.Match(p, ""); err != nil {
				return fmt.Errorf("%s[%d] %q: %w (patterns use Go's path.Match syntax: *, ?, [...], \\ to quote)", l.name, i, p, err)
			}
		}
	}
	switch r.Unsafe {
	case "", decideDeny, decideAsk, decideAllow:
		return nil
	}
	return fmt.Errorf("unsafe %q is not %q, %q or %q", r.Unsafe, decideDeny, decideAsk, decideAllow)
}

// Unmatched returns the patterns (as "deny[0] \"fs__rm*\"") that match none
// of names: a rule that names no tool is most likely misspelt.
func (r ToolRules) Unmatched(names []string) []string {
	var out []string
	for _, l := range r.lists() {
		for i, p := range l.patterns {
			if !slices.ContainsFunc(names, func(n string) bool { return l.match(p, n) }) {
				out = append(out, fmt.Sprintf("%s[%d] %q", l.name, i, p))
			}
		}
	}
	return out
}

// ruleList is one list of r with its name.
type ruleList struct {
	name, decision string
	patterns       []string
	fold           bool // match whatever the case: the lists that restrict
}

// lists are r's lists in the order they are read: deny, ask, allow.
func (r ToolRules) lists() []ruleList {
	return []ruleList{{"deny", decideDeny, r.Deny, true}, {"ask", decideAsk, r.Ask, true}, {"allow", decideAllow, r.Allow, false}}
}

// match reports whether pattern of l matches name.
func (l ruleList) match(pattern, name string) bool {
	if l.fold {
		pattern, name = strings.ToLower(pattern), strings.ToLower(name)
	}
	return match(pattern, name)
}

// decision is what the rules say of the tool named name: "deny", "ask",
// "allow", or "" when no pattern matches it.
func (r ToolRules) decision(name string) string {
	for _, l := range r.lists() {
		for _, p := range l.patterns {
			if l.match(p, name) {
				return l.decision
			}
		}
	}
	return ""
}

// match reports whether pattern matches name; a pattern path.Match cannot
// read matches nothing (Validate reports it).
func match(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

// with returns r's and other's rules together (each pattern once), and
// r's Unsafe mode, else other's.
func (r ToolRules) with(other ToolRules) ToolRules {
	u := r.Unsafe
	if u == "" {
		u = other.Unsafe
	}
	return ToolRules{Allow: union(r.Allow, other.Allow), Ask: union(r.Ask, other.Ask), Deny: union(r.Deny, other.Deny), Unsafe: u}
}

// union is a followed by the strings of b it lacks, without writing into
// a's spare capacity.
func union(a, b []string) []string {
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
