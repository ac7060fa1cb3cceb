package selector

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A nil Config.Logger logs nothing, whatever the program's default logger
// is; a logger given logs each attempt and the decision.
func TestNilLoggerLogsNothing(t *testing.T) {
	var def bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	reply := content(`{"calls":[{"tool":"get_weather","args":{"city":"Paris"}}]}`)

	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": reply}}
	s, err := New(fc, cfgWith(nil))
	require.NoError(t, err)
	_, err = s.SelectToolCalls(context.Background(), testRequest(t))
	require.NoError(t, err)
	assert.Empty(t, def.String(), "a nil logger must not fall back to slog.Default()")

	var own bytes.Buffer
	s, err = New(fc, cfgWith(func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&own, nil)) }))
	require.NoError(t, err)
	_, err = s.SelectToolCalls(context.Background(), testRequest(t))
	require.NoError(t, err)
	assert.Contains(t, own.String(), "tool selection done")
	assert.Empty(t, def.String())
}
