package selector

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/registry"
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

// A selection that ends in an error returns it and does not also log it at
// Error (or Warn): the caller logs what it returns. Its text is the same
// from run to run: latencies stay in the attempts' fields.
func TestReturnedErrorIsNotLoggedAtError(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	failing := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content("prose"), "fallback": content("more prose")}}
	s, err := New(failing, cfgWith(func(c *Config) { c.Logger = log }))
	require.NoError(t, err)
	_, err = s.SelectToolCalls(context.Background(), testRequest(t))
	require.ErrorIs(t, err, ErrFailClosed)

	var levels []string
	var ended bool
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(line, &rec))
		levels = append(levels, rec["level"].(string))
		assert.NotEqual(t, "ERROR", rec["level"], "%s", line)
		if rec["msg"] == "tool selection: no calls; the error is returned" {
			ended = true
			assert.Equal(t, "DEBUG", rec["level"])
			assert.Equal(t, "fail_closed", rec["kind"])
		}
	}
	assert.True(t, ended, "the end is still recorded, at debug: %v", levels)

	var se *SelectionError
	require.ErrorAs(t, err, &se)
	se.Attempts[0].Latency, se.Attempts[1].Latency = 1234*time.Millisecond, 7*time.Millisecond
	text := se.Error()
	se.Attempts[0].Latency, se.Attempts[1].Latency = 0, 0
	assert.Equal(t, text, se.Error(), "the text does not carry the latency")
	assert.NotRegexp(t, `\(\d+(\.\d+)?m?s\)`, text)

	buf.Reset()
	req := testRequest(t)
	req.Roles, req.Registry = nil, registry.New(nil)
	_, err = s.SelectToolCalls(context.Background(), req)
	require.ErrorIs(t, err, ErrNoEligibleTools)
	assert.NotContains(t, buf.String(), `"level":"ERROR"`)
	assert.NotContains(t, buf.String(), `"level":"WARN"`)
}
