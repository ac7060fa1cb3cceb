package registry

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The definition refusals a front door words in its own names carry their
// rule; the others carry none.
func TestRegistrationRefusalsCarryTheirRule(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Tool)
		rule Rule
	}{
		{"no schema", func(t *Tool) { t.Parameters = nil }, RuleNoSchema},
		{"allowed without a mode", func(t *Tool) { t.Parameters, t.AllowNoSchema = nil, true }, RuleNoSchemaMode},
		{"an unknown mode", func(t *Tool) { t.AllowNoSchema, t.NoSchemaMode = true, "sometimes" }, RuleNoSchemaMode},
		{"a bad type", func(t *Tool) { t.Type = "agent" }, ""},
	} {
		tool := NewTool("x", "X.", json.RawMessage(`{"type":"object"}`))
		c.edit(&tool)
		err := New(nil).Register(tool)
		var re *RegistrationError
		require.True(t, errors.As(err, &re), "%s: %v", c.name, err)
		assert.Equal(t, c.rule, re.Rule, c.name)
	}
}
