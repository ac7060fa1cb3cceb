package registry

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The three outcomes, for every kind of tool and caller: the table the
// README's "who may do what" shows.
func TestDecide(t *testing.T) {
	tools, _, err := ParseCatalog([]byte(`[
{"name":"read","description":"d","parameters":{"type":"object"}},
{"name":"rm","description":"d","safe":false,"parameters":{"type":"object"}},
{"name":"pay","description":"d","requiresApproval":true,"parameters":{"type":"object"}},
{"name":"wipe","description":"d","safe":false,"requiresApproval":true,"parameters":{"type":"object"}},
{"name":"admin","description":"d","roles":["admin"],"safe":false,"parameters":{"type":"object"}},
{"name":"shell","description":"d","allowNoSchema":true,"noSchemaMode":"human-approval"},
{"name":"peek","description":"d","allowNoSchema":true,"noSchemaMode":"read-only"}]`))
	require.NoError(t, err)
	byName := map[string]*Tool{}
	for i := range tools {
		byName[tools[i].Name] = &tools[i]
	}
	require.True(t, byName["pay"].RequiresApproval, "the catalog carries requiresApproval")

	plain := Eligibility{}
	unsafe := Eligibility{AllowUnsafe: true}
	ask := Eligibility{Ask: true}
	both := Eligibility{AllowUnsafe: true, Ask: true}
	admin := Eligibility{Ask: true, Roles: []string{"admin"}}
	for _, c := range []struct {
		tool   string
		caller Eligibility
		deny   Rule
		ask    bool
	}{
		{"read", plain, "", false},
		{"read", ask, "", false},
		{"rm", plain, RuleUnsafe, false},
		{"rm", unsafe, "", false},
		{"rm", ask, "", true},
		{"rm", both, "", true}, // an approver never loosens anything
		{"pay", plain, RuleApprovalRequired, false},
		{"pay", unsafe, RuleApprovalRequired, false},
		{"pay", ask, "", true},
		{"wipe", unsafe, RuleApprovalRequired, false},
		{"wipe", both, "", true},
		{"admin", ask, RuleRole, false}, // asking does not stand in for a role
		{"admin", admin, "", true},
		{"shell", plain, RuleApprovalRequired, false},
		{"shell", ask, "", true},
		{"peek", ask, RuleNoSchemaReadOnly, false},
		{"read", Eligibility{Ask: true, Capabilities: []string{"readOnly"}}, RuleCapability, false},
	} {
		deny, ask := c.caller.Decide(byName[c.tool])
		assert.Equal(t, c.deny, deny, "%s for %+v", c.tool, c.caller)
		assert.Equal(t, c.ask, ask, "%s for %+v", c.tool, c.caller)
	}
	// Check, the offer rule, is Decide's caller denials: what is asked about is offered.
	assert.Equal(t, Rule(""), ask.Check(byName["rm"]))
	assert.Equal(t, RuleUnsafe, plain.Check(byName["rm"]))
	assert.Equal(t, Rule(""), plain.Check(byName["pay"]), "offered, refused when called with how to give an approver")
	assert.True(t, Eligibility{}.With(Eligibility{Ask: true}).Ask)
}

// requiresApproval round-trips through the canonical view, and removing it
// from a pinned tool is a change held for review (an attacker cannot drop
// the gate unnoticed).
func TestRequiresApprovalIsCarriedAndPinned(t *testing.T) {
	reg := New(nil)
	tl := NewTool("pay", "Pay.", json.RawMessage(`{"type":"object"}`))
	tl.RequiresApproval = true
	require.NoError(t, reg.Register(tl))
	out, err := reg.View(FormatCanonical)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"requiresApproval":true`)
	back, _, err := ParseCatalog(out)
	require.NoError(t, err)
	require.Len(t, back, 1)
	assert.True(t, back[0].RequiresApproval)

	pins, err := LoadPins(filepath.Join(t.TempDir(), "pins.json"))
	require.NoError(t, err)
	_, _, err = pins.Check(tl, false)
	require.NoError(t, err)
	dropped := tl
	dropped.RequiresApproval = false
	c, _, err := pins.Check(dropped, false)
	require.NoError(t, err)
	assert.True(t, c.Held)
	assert.Equal(t, []string{"annotations"}, c.Changed)
}
