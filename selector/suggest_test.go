package selector

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/registry"
)

// suggestRegistry has a safe tool, an unsafe one a letter away from it, and
// an admin-only one: what a caller may not run must never be suggested.
func suggestRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	r := registry.New(nil)
	obj := json.RawMessage(`{"type":"object"}`)
	require.NoError(t, r.RegisterAll([]registry.Tool{
		{Name: "restart_server", Description: "Restart a server.", Parameters: obj, Safe: true},
		{Name: "reboot_servers", Description: "Reboot every server.", Parameters: obj, Safe: false},
		{Name: "ops.reboot_server", Description: "Reboot one server.", Parameters: obj, Safe: true, Roles: []string{"admin"}},
		{Name: "get_weather", Description: "Weather for a city.", Parameters: obj, Safe: true},
	}))
	return r
}

func dropped(t *testing.T, res *Result) map[string]DroppedCall {
	t.Helper()
	got := map[string]DroppedCall{}
	for _, d := range res.Dropped {
		got[d.Tool] = d
	}
	return got
}

// An unknown or not-offered tool's drop carries the names the model most
// likely meant, as data and in the message, among the tools the caller may
// run only (the order is the registry's, as the
// executor's unknown-tool error and find_tool's didYouMean).
func TestDroppedCallSuggestsOnlyWhatTheCallerMayRun(t *testing.T) {
	reply := content(`{"calls":[{"tool":"reboot_server","args":{}},{"tool":"reboot_servers","args":{}},{"tool":"ops.reboot_server","args":{}},{"tool":"get_weathr","args":{}},{"tool":"zzz","args":{}}]}`)
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": reply}}
	req := testRequest(t)
	req.Registry = suggestRegistry(t)

	res, err := newSel(t, fc, cfgWith(func(c *Config) { c.FailOpen = true })).Select(context.Background(), req)
	require.NoError(t, err)
	got := dropped(t, res)

	// The caller holds no role and does not allow unsafe tools: neither
	// ops.reboot_server (same own name, admin only) nor reboot_servers
	// (one edit, unsafe) may be named; restart_server may.
	unknown := got["reboot_server"]
	assert.Equal(t, DropUnknownTool, unknown.Reason)
	assert.Equal(t, []string{"restart_server"}, unknown.DidYouMean)
	assert.Equal(t, `tool "reboot_server" is not registered (did you mean "restart_server"?)`, unknown.Message)

	unsafe := got["reboot_servers"]
	assert.Equal(t, DropNotOffered, unsafe.Reason)
	assert.Equal(t, registry.RuleUnsafe, unsafe.Rule)
	assert.Empty(t, unsafe.DidYouMean, "never the tool that was refused, and nothing else is near")

	admin := got["ops.reboot_server"]
	assert.Equal(t, registry.RuleRole, admin.Rule)
	assert.Equal(t, []string{"restart_server"}, admin.DidYouMean)
	assert.Contains(t, admin.Message, `[admin], and the caller holds none of them (did you mean "restart_server"?)`)

	assert.Equal(t, []string{"get_weather"}, got["get_weathr"].DidYouMean)
	assert.Empty(t, got["zzz"].DidYouMean, "nothing near: nothing guessed")
	assert.NotContains(t, got["zzz"].Message, "did you mean")
	for _, d := range res.Dropped {
		assert.NotContains(t, d.DidYouMean, "ops.reboot_server")
		assert.NotContains(t, d.DidYouMean, "reboot_servers")
	}

	// The same call by an admin who allows unsafe tools is told of both.
	req.Roles, req.AllowUnsafe = []string{"admin"}, true
	res, err = newSel(t, fc, cfgWith(func(c *Config) { c.FailOpen = true })).Select(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, []string{"ops.reboot_server", "reboot_servers", "restart_server"}, dropped(t, res)["reboot_server"].DidYouMean)

	// Fail closed: the suggestion is in the attempt's rejected calls, the
	// error's text and the JSON.
	req = testRequest(t)
	req.Registry = suggestRegistry(t)
	_, err = newSel(t, fc, cfgWith(nil)).Select(context.Background(), req)
	var se *SelectionError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Error(), `(did you mean "restart_server"?)`)
	b, err := json.Marshal(se.Attempts[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"did_you_mean":["restart_server"]`)
}
