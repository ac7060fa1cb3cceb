package selector

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The default model sent to api.openai.com (no base URL) is a pair that
// cannot work: New warns, and an attempt the server refuses names both
// settings; a base URL that serves the model, or a caller's own client,
// hears nothing of it.
func TestDefaultModelToOpenAIWarns(t *testing.T) {
	notFound := failing(&ChatError{Kind: KindHTTPStatus, StatusCode: 404, Message: "HTTP 404: The model `glm-4.5-air` does not exist"})
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){DefaultModel: notFound}}
	var logs bytes.Buffer
	cfg := defaultConfig()
	s, err := newWith(fc, &cfg, withLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err, "the defaults construct")
	assert.Contains(t, logs.String(), "cannot work together")
	assert.Contains(t, logs.String(), envOf("base_url"))

	_, err = s.Select(context.Background(), testRequest(t))
	var se *SelectionError
	require.ErrorAs(t, err, &se)
	msg := se.Attempts[0].Message
	assert.Contains(t, msg, "does not exist")
	assert.Contains(t, msg, envOf("base_url"))
	assert.Contains(t, msg, envOf("model"))
	assert.Contains(t, msg, "https://api.z.ai/api/paas/v4")

	for _, mut := range []func(*Config){
		func(c *Config) { c.BaseURL = "https://api.z.ai/api/paas/v4" },
		func(c *Config) { c.OwnClient = true },
		func(c *Config) { c.Model = "gpt-4.1-mini" },
	} {
		c := defaultConfig()
		mut(&c)
		logs.Reset()
		fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){c.Model: notFound}}
		s, err := newWith(fc, &c, withLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		require.NoError(t, err)
		assert.NotContains(t, logs.String(), "cannot work together")
		_, err = s.Select(context.Background(), testRequest(t))
		require.ErrorAs(t, err, &se)
		assert.NotContains(t, se.Attempts[0].Message, envOf("base_url"), c.BaseURL)
	}
}
