package modeltest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/modeltest"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// Request.Tools names the tools offered in every mode, in the offer's
// order: JSON mode lists them in the system prompt, native mode in "tools";
// and a reply's calls come back either way.
func TestToolsRecordedInEveryMode(t *testing.T) {
	reg := registry.New(nil)
	obj := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)
	for _, n := range []string{"get_weather", "send_email"} {
		require.NoError(t, reg.Register(registry.NewTool(n, "Tool "+n+" with \\n\\nTools:\\n in its words.", obj)))
	}
	for _, mode := range []selector.Mode{selector.ModeJSON, selector.ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			fake := modeltest.NewServer(modeltest.Reply{Calls: []modeltest.Call{{Tool: "get_weather", Args: map[string]any{"city": "Oslo"}}}})
			defer fake.Close()
			cfg := selector.Config{Settings: selector.Settings{BaseURL: fake.URL, Mode: mode}}
			client, err := selector.NewOpenAIClient(&cfg, nil)
			require.NoError(t, err)
			sel, err := selector.New(client, &cfg)
			require.NoError(t, err)
			calls, err := sel.SelectToolCalls(context.Background(), selector.Request{
				Registry: reg, Task: selector.Task{Description: "Weather in Oslo"}})
			require.NoError(t, err)
			require.Len(t, calls, 1)
			reqs := fake.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, []string{"get_weather", "send_email"}, reqs[0].Tools)
		})
	}
}
