package executor

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/modeltest"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// One caller value is read alike by ranking, selection and execution; the
// old fields still work as shorthands and add to it; and Rank's Hidden says
// what a forgotten role cost.
func TestOneCallerEverywhere(t *testing.T) {
	reg := registry.New(nil)
	schema := json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"}}}`)
	reset := registry.NewTool("reset_service", "Reset the service.", schema)
	reset.Roles = []string{"admin"}
	purge := registry.NewTool("purge_service", "Purge the service cache.", schema)
	purge.Safe = false
	require.NoError(t, reg.RegisterAll([]registry.Tool{reset, purge, registry.NewTool("status_service", "Service status.", schema)}))
	caller := registry.Eligibility{Roles: []string{"admin"}, AllowUnsafe: true}
	ctx := context.Background()
	const task = "reset or purge the service"

	names := func(picks []rank.Pick) []string {
		out := []string{}
		for _, p := range picks {
			out = append(out, p.Tool)
		}
		slices.Sort(out)
		return out
	}
	r := rank.For(reg)
	picks, err := r.Rank(ctx, task, &rank.Options{Caller: caller})
	require.NoError(t, err)
	assert.Equal(t, []string{"purge_service", "reset_service", "status_service"}, names(picks))
	short, err := r.Rank(ctx, task, &rank.Options{Roles: []string{"admin"}, AllowUnsafe: true})
	require.NoError(t, err)
	assert.Equal(t, names(picks), names(short), "the shorthand fields say the same")

	bare, err := r.Rank(ctx, task, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"status_service"}, names(bare))
	hidden, err := r.Hidden(ctx, task, nil, bare)
	require.NoError(t, err)
	why := map[string]registry.Rule{}
	for _, h := range hidden {
		why[h.Tool] = h.Hidden
	}
	assert.Equal(t, map[string]registry.Rule{"reset_service": registry.RuleRole, "purge_service": registry.RuleUnsafe}, why)
	none, err := r.Hidden(ctx, task, &rank.Options{Caller: caller}, picks)
	require.NoError(t, err)
	assert.Empty(t, none)

	fake := modeltest.NewServer(modeltest.Reply{Calls: []modeltest.Call{{Tool: "reset_service", Args: map[string]any{"service": "db"}}}})
	defer fake.Close()
	cfg := selector.Config{Settings: selector.Settings{BaseURL: fake.URL}}
	client, err := selector.NewOpenAIClient(&cfg, nil)
	require.NoError(t, err)
	sel, err := selector.New(client, &cfg)
	require.NoError(t, err)
	res, err := sel.Select(ctx, selector.Request{Registry: reg, Task: selector.Task{Description: task}, Caller: caller})
	require.NoError(t, err)
	offered := slices.Clone(res.Offered)
	slices.Sort(offered)
	assert.Equal(t, []string{"purge_service", "reset_service", "status_service"}, offered)

	ran := 0
	handler := func(context.Context, json.RawMessage) (any, error) { ran++; return "ok", nil }
	ex := New(reg, &Options{Caller: caller})
	require.NoError(t, ex.Handle("reset_service", handler))
	_, err = ex.Call(ctx, Call{Tool: "reset_service", Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	assert.Equal(t, 1, ran)
	plain := New(reg, nil)
	require.NoError(t, plain.Handle("reset_service", handler))
	_, err = plain.Call(ctx, Call{Tool: "reset_service", Args: json.RawMessage(`{}`)})
	assert.ErrorIs(t, err, ErrRoleDenied)
}
