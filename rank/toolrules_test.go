package rank_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// A deny rule on the caller keeps a tool out of a ranking, and Hidden says
// so (denied_by_rule).
func TestRankHonoursToolRules(t *testing.T) {
	reg := registry.New(nil)
	schema := json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"}}}`)
	require.NoError(t, reg.RegisterAll([]registry.Tool{registry.NewTool("reset_service", "Reset a service.", schema),
		registry.NewTool("service_status", "Status of a service.", schema)}))
	ctx := context.Background()
	r := rank.For(reg)
	o := &rank.Options{Caller: registry.Eligibility{Rules: registry.ToolRules{Deny: []string{"reset_*"}}}}
	picks, err := r.Rank(ctx, "reset the billing service", o)
	require.NoError(t, err)
	for _, p := range picks {
		assert.NotEqual(t, "reset_service", p.Tool)
	}
	hidden, err := r.Hidden(ctx, "reset the billing service", o, picks)
	require.NoError(t, err)
	require.Len(t, hidden, 1)
	assert.Equal(t, "reset_service", hidden[0].Tool)
	assert.Equal(t, registry.RuleDenied, hidden[0].Hidden)
}
