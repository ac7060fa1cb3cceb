package executor

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/registry"
)

// Every refusal and invalid call carries its rule as data; the hint is Go's
// by default and the front door's own when Options.Hint is set.
func TestCallErrorCarriesRule(t *testing.T) {
	reg := registry.New(nil)
	wipe := registry.NewTool("wipe", "Wipe.", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`))
	wipe.Safe = false
	admin := registry.NewTool("admin", "Admin.", json.RawMessage(`{"type":"object"}`))
	admin.Roles = []string{"admin"}
	require.NoError(t, reg.RegisterAll([]registry.Tool{wipe, admin, registry.NewTool("free", "Free.", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`))}))
	h := func(context.Context, json.RawMessage) (any, error) { return "ok", nil }
	bind := func(ex *Executor) {
		for _, n := range []string{"wipe", "admin", "free"} {
			require.NoError(t, ex.Handle(n, h))
		}
	}
	var recs []Record
	ex := New(reg, &Options{Audit: func(_ context.Context, r Record) { recs = append(recs, r) }})
	bind(ex)
	ctx := context.Background()
	for _, c := range []struct {
		call Call
		rule registry.Rule
		hint string
	}{
		{Call{Tool: "wipe"}, registry.RuleUnsafe, "set Options.AllowUnsafe"},
		{Call{Tool: "admin"}, registry.RuleRole, "Options.Caller.Roles"},
		{Call{Tool: "nope"}, registry.RuleUnknownTool, ""},
		{Call{Tool: "free", Args: json.RawMessage(`{"n":"x"}`)}, registry.RuleInvalidArgs, ""},
	} {
		_, err := ex.Call(ctx, c.call)
		var ce *CallError
		require.True(t, errors.As(err, &ce), "%s: %v", c.call.Tool, err)
		assert.Equal(t, c.rule, ce.Rule, c.call.Tool)
		// The audit record names the same rule the error carries.
		require.NotEmpty(t, recs, c.call.Tool)
		assert.Equal(t, string(c.rule), recs[len(recs)-1].Policy, c.call.Tool)
		if c.hint != "" {
			assert.Contains(t, ce.Hint, c.hint)
			assert.Contains(t, ce.Error(), "("+ce.Hint+")")
		} else {
			assert.Empty(t, ce.Hint, c.call.Tool)
		}
	}

	worded := New(reg, &Options{Hint: func(r registry.Rule) string {
		if r == registry.RuleUnsafe {
			return "pass allow_unsafe=True"
		}
		return ""
	}})
	bind(worded)
	_, err := worded.Call(ctx, Call{Tool: "wipe"})
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, `call of tool "wipe" refused: unsafe tool not allowed: "wipe" is marked unsafe (pass allow_unsafe=True)`, ce.Error())
	_, err = worded.Call(ctx, Call{Tool: "admin"})
	require.ErrorAs(t, err, &ce)
	assert.NotContains(t, ce.Error(), "Options.")
}
