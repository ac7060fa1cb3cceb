package registry

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tool registered with Safe false (a Go literal that never set it reads
// the same) is warned of once per name, one record per registration; a safe
// tool, and a registry without a logger, say nothing.
func TestUnsafeRegistrationWarnsOnce(t *testing.T) {
	var buf bytes.Buffer
	r := New(&Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	obj := json.RawMessage(`{"type":"object"}`)

	require.NoError(t, r.Register(Tool{Name: "delete_ticket", Description: "Delete a ticket.", Parameters: obj}))
	require.NoError(t, r.Register(NewTool("get_ticket", "Read a ticket.", obj)))
	require.NoError(t, r.RegisterAll([]Tool{
		{Name: "close_ticket", Description: "Close.", Parameters: obj},
		{Name: "merge_tickets", Description: "Merge.", Parameters: obj},
		NewTool("list_tickets", "List.", obj),
	}))
	require.NoError(t, r.Replace(Tool{Name: "delete_ticket", Description: "Delete a ticket for good.", Parameters: obj}))

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2, "one record per registration that added unsafe tools, each name once: %s", buf.String())
	var first, second struct {
		Level string   `json:"level"`
		Msg   string   `json:"msg"`
		Tools []string `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &second))
	assert.Equal(t, "WARN", first.Level)
	assert.Equal(t, []string{"delete_ticket"}, first.Tools)
	assert.Equal(t, []string{"close_ticket", "merge_tickets"}, second.Tools)
	assert.Contains(t, first.Msg, "Safe: true")
	assert.Contains(t, first.Msg, "NewTool")

	silent := New(nil)
	require.NoError(t, silent.Register(Tool{Name: "delete_ticket", Description: "Delete.", Parameters: obj}))
	e, _ := silent.Get("delete_ticket")
	assert.False(t, e.Def().Safe, "the zero value still fails safe")
}
