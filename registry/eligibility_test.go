package registry

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEligibilityCheckAndFilter(t *testing.T) {
	reg := New(nil)
	tools, _, err := ParseCatalog([]byte(`[
{"name":"open","description":"d","parameters":{"type":"object"}},
{"name":"rm","description":"d","safe":false,"parameters":{"type":"object"}},
{"name":"admin","description":"d","roles":["admin"],"parameters":{"type":"object"}},
{"name":"ro","description":"d","capabilities":["readOnly"],"parameters":{"type":"object"}}]`))
	require.NoError(t, err)
	require.NoError(t, reg.RegisterAll(tools))

	got, excluded := Eligibility{}.Filter(reg.Entries())
	assert.Equal(t, []string{"open", "ro"}, names(got))
	assert.Equal(t, map[Rule]int{RuleUnsafe: 1, RuleRole: 1}, excluded)

	got, excluded = Eligibility{AllowUnsafe: true, Roles: []string{"admin"}, Capabilities: []string{"readOnly"}}.Filter(reg.Entries())
	assert.Equal(t, []string{"ro"}, names(got))
	assert.Equal(t, map[Rule]int{RuleCapability: 3}, excluded)

	rm, _ := reg.Get("rm")
	assert.Equal(t, RuleUnsafe, Eligibility{Roles: []string{"admin"}}.Check(rm.Def()))
	assert.True(t, Eligibility{AllowUnsafe: true}.Allows(rm))
}

func names(es []*Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name()
	}
	return out
}

func TestClipArgs(t *testing.T) {
	l := Limits{MaxArgsDepth: 3, MaxArgsBytes: 1000}
	in := json.RawMessage(`{"a":{"b":[1,{"c":"}]{["}],"s":"x\"{"},"z":2}`)
	assert.Equal(t, `{"a":{"b":[1,"[omitted: nests deeper than 3 levels]"],"s":"x\"{"},"z":2}`, string(l.ClipArgs(in)))
	flat := json.RawMessage(`{"a":[1,2]}`)
	assert.Equal(t, string(flat), string(l.ClipArgs(flat)))

	deep := `{"x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`
	out := defaultLimits.ClipArgs(json.RawMessage(deep))
	require.True(t, json.Valid(out))
	assert.Contains(t, string(out), "nests deeper than 64 levels")
	assert.Less(t, len(out), 200)

	big := json.RawMessage(`{"s":"` + strings.Repeat("x", 2000) + `"}`)
	assert.JSONEq(t, `{"omitted":"[omitted: 2008 bytes, over the limit of 1000]"}`, string(l.ClipArgs(big)))
	assert.JSONEq(t, `{"omitted":"[omitted: not valid JSON]"}`, string(l.ClipArgs(json.RawMessage(`{"a":`))))
}
