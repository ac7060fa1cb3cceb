package registry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Per-tool rules take precedence over the caller's unsafe mode: deny first,
// then ask, then allow, whatever the patterns' specificity.
func TestDecideToolRules(t *testing.T) {
	tools, _, err := ParseCatalog([]byte(`[
{"name":"fs__read_file","description":"d","parameters":{"type":"object"}},
{"name":"fs__write_file","description":"d","safe":false,"parameters":{"type":"object"}},
{"name":"fs__delete","description":"d","safe":false,"parameters":{"type":"object"}},
{"name":"fs__pay","description":"d","requiresApproval":true,"parameters":{"type":"object"}},
{"name":"fs__admin","description":"d","safe":false,"roles":["admin"],"parameters":{"type":"object"}},
{"name":"fs__*","description":"a tool named like a pattern","parameters":{"type":"object"}},
{"name":"FS__read_file","description":"d","parameters":{"type":"object"}},
{"name":"FS__WRITE_FILE","description":"d","parameters":{"type":"object"}},
{"name":"FS__ADMIN","description":"d","safe":false,"roles":["admin"],"parameters":{"type":"object"}}]`))
	require.NoError(t, err)
	tool := map[string]*Tool{}
	for i := range tools {
		tool[tools[i].Name] = &tools[i]
	}
	rules := ToolRules{
		Allow:  []string{"fs__write_file", "fs__read_*", "fs__admin"},
		Ask:    []string{"fs__read_file", "fs__pay"},
		Deny:   []string{"fs__write_*", "fs__\\*"},
		Unsafe: decideDeny,
	}
	withApprover := Eligibility{Ask: true, Rules: rules}
	noApprover := Eligibility{Rules: rules}
	for _, c := range []struct {
		tool   string
		caller Eligibility
		deny   Rule
		ask    bool
	}{
		// deny beats an exact allow: the order is the lists', not specificity
		{"fs__write_file", withApprover, RuleDenied, false},
		// ask beats allow
		{"fs__read_file", withApprover, "", true},
		{"fs__read_file", noApprover, RuleApprovalRequired, false},
		// the unsafe mode deny holds for an unsafe tool no rule names, even with an approver
		{"fs__delete", withApprover, RuleUnsafe, false},
		// a tool that requires approval is still asked
		{"fs__pay", withApprover, "", true},
		// an allow rule lets an unsafe tool run but never grants a role
		{"fs__admin", withApprover, RuleRole, false},
		{"fs__admin", Eligibility{Ask: true, Roles: []string{"admin"}, Rules: rules}, "", false},
		// a name made of glob metacharacters is matched literally: the
		// quoted pattern denies it, and "fs__read_*" does not match it
		{"fs__*", withApprover, RuleDenied, false},
		// an upstream changing case does not dodge a deny or ask rule,
		// but gains nothing from an allow rule either
		{"FS__read_file", withApprover, "", true},
		{"FS__WRITE_FILE", withApprover, RuleDenied, false},
		{"FS__ADMIN", Eligibility{Ask: true, Roles: []string{"admin"}, Rules: rules}, RuleUnsafe, false},
	} {
		deny, ask := c.caller.Decide(tool[c.tool])
		assert.Equal(t, c.deny, deny, "%s", c.tool)
		assert.Equal(t, c.ask, ask, "%s", c.tool)
	}

	// Unsafe "allow" with an approver: unsafe tools no rule names run unasked.
	deny, ask := Eligibility{Ask: true, Rules: ToolRules{Unsafe: decideAllow}}.Decide(tool["fs__delete"])
	assert.Equal(t, Rule(""), deny)
	assert.False(t, ask)
	// No Unsafe mode: the caller's Ask decides, as before rules.
	_, ask = Eligibility{Ask: true, AllowUnsafe: true}.Decide(tool["fs__delete"])
	assert.True(t, ask)
	// A deny rule hides a safe tool from offers too.
	assert.Equal(t, RuleDenied, Eligibility{Rules: ToolRules{Deny: []string{"fs__read_file"}}}.Check(tool["fs__read_file"]))
	assert.Equal(t, Rule(""), noApprover.Check(tool["fs__read_file"]), "an ask rule is offered, refused when called without an approver")
}

func TestToolRulesValidateAndUnmatched(t *testing.T) {
	require.NoError(t, ToolRules{Allow: []string{"a*", "b?[cd]", `e\*`}}.Validate())
	err := ToolRules{Ask: []string{"ok", "fs__[write"}}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `ask[1] "fs__[write"`)
	assert.ErrorContains(t, ToolRules{Deny: []string{""}}.Validate(), "deny[0]")
	assert.ErrorContains(t, ToolRules{Unsafe: "maybe"}.Validate(), `unsafe "maybe"`)

	r := ToolRules{Allow: []string{"fs__*"}, Deny: []string{"gh__delete_repo", "fs__rm"}}
	assert.Equal(t, []string{`deny[0] "gh__delete_repo"`}, r.Unmatched([]string{"fs__rm", "fs__read"}))
}

// With joins two callers' rules, each pattern once, without writing into
// either's slices.
func TestToolRulesWith(t *testing.T) {
	deny := make([]string, 1, 4)
	deny[0] = "a"
	a := Eligibility{Rules: ToolRules{Deny: deny, Unsafe: decideAsk}}
	b := a.With(Eligibility{Rules: ToolRules{Deny: []string{"a", "b"}, Allow: []string{"c"}, Unsafe: decideDeny}})
	assert.Equal(t, ToolRules{Deny: []string{"a", "b"}, Allow: []string{"c"}, Unsafe: decideAsk}, b.Rules)
	assert.Equal(t, "", deny[:2][1])
	assert.Equal(t, decideDeny, Eligibility{}.With(Eligibility{Rules: ToolRules{Unsafe: decideDeny}}).Rules.Unsafe)
}
