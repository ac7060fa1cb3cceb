package selector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/registry"
)

// A call of a registered tool that was not offered names the one reason
// that applied, as data (DroppedCall.Rule) and in words; and a selection
// whose every attempt failed has its kind set.
func TestNotOfferedNamesTheReason(t *testing.T) {
	reply := content(`{"calls":[{"tool":"delete_files","args":{"path":"/"}},{"tool":"admin_reset","args":{}},{"tool":"get_weather","args":{"city":"Paris"}},{"tool":"search","args":{"query":"x"}}]}`)
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": reply}}
	only := func(names ...string) Prefilter {
		return func(_ context.Context, _ string, eligible []*registry.Entry) ([]*registry.Entry, error) {
			var out []*registry.Entry
			for _, e := range eligible {
				for _, n := range names {
					if e.Name() == n {
						out = append(out, e)
					}
				}
			}
			return out, nil
		}
	}
	s := newSel(t, fc, cfgWith(func(c *Config) { c.FailOpen = true }), withPrefilter(only("search")))
	req := testRequest(t)
	res, err := s.Select(context.Background(), req)
	require.NoError(t, err)
	got := map[string]DroppedCall{}
	for _, d := range res.Dropped {
		got[d.Tool] = d
	}
	assert.Equal(t, registry.RuleUnsafe, got["delete_files"].Rule)
	assert.Contains(t, got["delete_files"].Message, "marked unsafe")
	assert.Equal(t, registry.RuleRole, got["admin_reset"].Rule)
	assert.Contains(t, got["admin_reset"].Message, "[admin]")
	assert.Equal(t, registry.RuleNotInOffer, got["get_weather"].Rule)
	assert.Contains(t, got["get_weather"].Message, "only 1 of the 4 eligible tools were offered")
	for _, d := range res.Dropped {
		assert.Equal(t, DropNotOffered, d.Reason)
		assert.NotContains(t, d.Message, " or ", "one reason, not a list of possible ones")
	}

	req.Capabilities = []string{"readOnly"}
	s = newSel(t, fc, cfgWith(func(c *Config) { c.FailOpen = true }))
	res, err = s.Select(context.Background(), req)
	require.NoError(t, err)
	for _, d := range res.Dropped {
		if d.Tool == "get_weather" {
			assert.Equal(t, registry.RuleCapability, d.Rule)
			assert.Contains(t, d.Message, `the capability "readOnly"`)
		}
	}

	// A deny rule keeps a tool out whatever else allows it, and the drop
	// says so rather than that the caller may use it.
	req = testRequest(t)
	req.Caller.Rules = registry.ToolRules{Deny: []string{"GET_*"}}
	res, err = newSel(t, fc, cfgWith(func(c *Config) { c.FailOpen = true })).Select(context.Background(), req)
	require.NoError(t, err)
	got = map[string]DroppedCall{}
	for _, d := range res.Dropped {
		got[d.Tool] = d
	}
	assert.Equal(t, registry.RuleDenied, got["get_weather"].Rule)
	assert.Contains(t, got["get_weather"].Message, "a deny rule of the caller's names it")
	assert.NotContains(t, got["get_weather"].Message, "may use it")

	failing := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content("prose"), "fallback": content("more prose")}}
	_, err = newSel(t, failing, cfgWith(nil)).Select(context.Background(), testRequest(t))
	var se *SelectionError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, EmptyFailClosed, se.Kind)
	assert.Equal(t, "fail_closed", ErrorKind(err))
	assert.Len(t, se.Attempts, 2)
	assert.Contains(t, se.Error(), "primary: parse")
}
