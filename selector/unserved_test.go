package selector

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
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

// The built-in client with no base URL and no API key would POST to
// api.openai.com, which can only refuse: the first selection fails before
// any request, naming the base URL and API key settings and the fake
// models for tests; any base URL, or a key, lets it through.
func TestKeylessDefaultEndpointFailsBeforeAnyRequest(t *testing.T) {
	for _, base := range []string{"", "https://api.openai.com/v1"} {
		cfg := defaultConfig()
		cfg.BaseURL = base
		client, err := NewOpenAIClient(&cfg, &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			assert.Fail(t, "a request was sent", r.URL.String())
			return nil, errors.New("no network in this test")
		})})
		require.NoError(t, err, "the defaults construct")
		s, err := New(client, &cfg)
		require.NoError(t, err)
		res, err := s.Select(context.Background(), testRequest(t))
		require.ErrorIs(t, err, ErrInvalidConfig)
		assert.Empty(t, res.Calls)
		for _, want := range []string{envOf("api_key"), envOf("base_url"), "OPENAI_BASE_URL", "modeltest.New", "toolselect.testing.FakeModel"} {
			assert.Contains(t, err.Error(), want)
		}
	}
	for _, mut := range []func(*Config){
		func(c *Config) { c.BaseURL = "http://127.0.0.1:1/v1" },
		func(c *Config) { c.APIKey = "sk-test" },
	} {
		cfg := defaultConfig()
		mut(&cfg)
		assert.NoError(t, cfg.keyless(), "%+v", cfg)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
