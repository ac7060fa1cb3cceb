package selector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolselect/toolselect/registry"
)

// Every request the adapter sends is a real OpenAI chat completion request.
func TestWireRequestShape(t *testing.T) {
	ws := newWire(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		assert.Equal(t, "/v1/chat/completions", r.URL.Path)
		completion(w, validReply)
	})
	s := wireSelector(t, ws, nil)
	r, err := s.Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	require.Len(t, r.Calls, 2)
	assert.Equal(t, 120, r.Attempts[0].PromptTokens)
	assert.Equal(t, 30, r.Attempts[0].CompletionTokens)

	req := ws.requests()[0]
	assert.Equal(t, "primary", req["model"])
	assert.Equal(t, map[string]any{"type": "json_object"}, req["response_format"])
	msgs := req["messages"].([]any)
	require.Len(t, msgs, 2)
	assert.Equal(t, "system", msgs[0].(map[string]any)["role"])
	assert.Contains(t, msgs[0].(map[string]any)["content"], answerSchema)
	assert.Equal(t, "user", msgs[1].(map[string]any)["role"])
	assert.Equal(t, "Bearer sk-test-SECRET-0123456789", ws.heads[0].Get("Authorization"))
}

// go-openai drops temperature 0 (omitempty); the adapter puts it back, exactly.
func TestWireTemperatureZeroReachesServer(t *testing.T) {
	for _, temp := range []float64{0, 0.1, 1} {
		t.Run(fmt.Sprint(temp), func(t *testing.T) {
			ws := newWire(t, func(w http.ResponseWriter, r *http.Request, body []byte) { completion(w, `{"calls":[]}`) })
			s := wireSelector(t, ws, func(c *Config) { c.Temperature = temp })
			_, err := s.Select(context.Background(), testRequest(t))
			require.NoError(t, err)
			req := ws.requests()[0]
			got, present := req["temperature"]
			require.True(t, present, "temperature must be on the wire: %s", ws.bodies[0])
			assert.Equal(t, json.Number(fmt.Sprint(temp)), got)
		})
	}
}

func TestWireFailureKinds(t *testing.T) {
	big := strings.Repeat("x", 8<<10)
	cases := []struct {
		name    string
		handle  func(w http.ResponseWriter, r *http.Request, body []byte)
		ctxWait time.Duration // caller deadline, 0 for none
		kind    FailureKind
		status  int
		msg     string
	}{
		{name: "slow server times out", ctxWait: 300 * time.Millisecond, kind: KindTimeout, msg: "no reply within",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			}},
		{name: "429 OpenAI body", kind: KindHTTPStatus, status: 429, msg: "HTTP 429: Rate limit reached for requests",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				writeJSON(w, 429, map[string]any{"error": map[string]any{"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}})
			}},
		{name: "500 OpenAI body", kind: KindHTTPStatus, status: 500, msg: "HTTP 500: The server had an error",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				writeJSON(w, 500, map[string]any{"error": map[string]any{"message": "The server had an error", "type": "server_error"}})
			}},
		{name: "Ollama error body", kind: KindHTTPStatus, status: 404, msg: `HTTP 404: model "glm-4.5-air" not found, try pulling it first`,
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				writeJSON(w, 404, map[string]any{"error": `model "glm-4.5-air" not found, try pulling it first`})
			}},
		{name: "vLLM error body", kind: KindHTTPStatus, status: 400, msg: "HTTP 400: This model's maximum context length is 8192 tokens",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				writeJSON(w, 400, map[string]any{"object": "error", "message": "This model's maximum context length is 8192 tokens", "type": "BadRequestError", "param": nil, "code": 400})
			}},
		{name: "HTML 502", kind: KindHTTPStatus, status: 502, msg: "HTTP 502: 502 Bad Gateway",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(502)
				fmt.Fprint(w, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>")
			}},
		{name: "429 with Retry-After seconds", kind: KindHTTPStatus, status: 429, msg: "HTTP 429: slow down (retry after 7s)",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.Header().Set("Retry-After", "7")
				writeJSON(w, 429, map[string]any{"error": map[string]any{"message": "slow down"}})
			}},
		{name: "503 with Retry-After date", kind: KindHTTPStatus, status: 503, msg: "HTTP 503: Service Unavailable (retry after 1m",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.Header().Set("Retry-After", time.Now().Add(90*time.Second).UTC().Format(http.TimeFormat))
				w.WriteHeader(503)
			}},
		{name: "503 with a Retry-After that is neither", kind: KindHTTPStatus, status: 503, msg: "HTTP 503: Service Unavailable",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.Header().Set("Retry-After", "soon")
				w.WriteHeader(503)
			}},
		{name: "empty body 503", kind: KindHTTPStatus, status: 503, msg: "HTTP 503: Service Unavailable",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) { w.WriteHeader(503) }},
		{name: "empty choices", kind: KindEmptyChoices, msg: "no choices",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				writeJSON(w, 200, map[string]any{"id": "x", "object": "chat.completion", "choices": []any{}})
			}},
		{name: "oversized body with Content-Length", kind: KindResponseTooLarge, msg: "is 8192 bytes, over the limit of 1024 (refused unread)",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.Header().Set("Content-Length", "8192")
				w.WriteHeader(200)
				fmt.Fprint(w, big)
			}},
		{name: "oversized chunked body", kind: KindResponseTooLarge, msg: "exceeds the limit of 1024",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(200)
				fmt.Fprint(w, `{"id":"`)
				for range 8 {
					fmt.Fprint(w, strings.Repeat("y", 1000))
					w.(http.Flusher).Flush()
				}
			}},
		{name: "oversized error body", kind: KindResponseTooLarge,
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.WriteHeader(500)
				fmt.Fprint(w, big)
			}},
		{name: "200 with HTML", kind: KindTransport, msg: "not a chat completion",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) { fmt.Fprint(w, "<html>login</html>") }},
		{name: "content not JSON", kind: KindParse, msg: "not a JSON object",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) { completion(w, "I would call get_weather.") }},
		{name: "invented tool", kind: KindValidation, msg: "unknown_tool",
			handle: func(w http.ResponseWriter, r *http.Request, _ []byte) {
				completion(w, `{"calls":[{"tool":"launch_rockets","args":{}}]}`)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := newWire(t, tc.handle)
			s := wireSelector(t, ws, func(c *Config) { c.FallbackModel = ""; c.MaxResponseBytes = 1024 })
			ctx := context.Background()
			if tc.ctxWait > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxWait)
				defer cancel()
			}
			start := time.Now()
			r, err := s.Select(ctx, testRequest(t))
			require.ErrorIs(t, err, ErrFailClosed)
			assert.Empty(t, r.Calls)
			require.Len(t, r.Attempts, 1)
			a := r.Attempts[0]
			assert.Equal(t, tc.kind, a.Kind, a.Message)
			assert.Contains(t, a.Message, tc.msg)
			assert.Equal(t, "primary", a.Model)
			assert.Less(t, time.Since(start), 3*time.Second)
			if tc.kind == KindTimeout {
				assert.GreaterOrEqual(t, a.Latency, 250*time.Millisecond)
			}
		})
	}
}

// Each failure kind through the adapter also moves on to the fallback.
func TestWireFallbackAfterHTTPError(t *testing.T) {
	ws := newWire(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if modelOf(body) == "primary" {
			writeJSON(w, 429, map[string]any{"error": map[string]any{"message": "slow down"}})
			return
		}
		completion(w, "```json\n"+validReply+"\n```")
	})
	r, err := wireSelector(t, ws, nil).Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	assert.Len(t, r.Calls, 2)
	require.Len(t, r.Attempts, 2)
	assert.Equal(t, KindHTTPStatus, r.Attempts[0].Kind)
	assert.Equal(t, []any{"primary", "fallback"}, []any{ws.requests()[0]["model"], ws.requests()[1]["model"]})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"0": 0, "20": 20 * time.Second, " 120 ": 2 * time.Minute, "999999999999": 24 * time.Hour,
		"Sat, 21 Nov 2026 12:00:30 GMT": 30 * time.Second, // HTTP date
		"Sat, 21 Nov 2026 11:00:00 GMT": 0,                // in the past: no wait
	} {
		got, ok := parseRetryAfter(in, now)
		assert.True(t, ok, "parseRetryAfter(%q) refused", in)
		assert.Equal(t, want, got, "parseRetryAfter(%q)", in)
	}
	for _, in := range []string{"", "-5", "soon", "1.5"} {
		_, ok := parseRetryAfter(in, now)
		assert.False(t, ok, "parseRetryAfter(%q) accepted", in)
	}
}

// TestWireRetryAfterOnChatError: a Go caller of the ChatClient gets the wait
// as a Duration too.
func TestWireRetryAfterOnChatError(t *testing.T) {
	ws := newWire(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Retry-After", "3")
		writeJSON(w, 429, map[string]any{"error": map[string]any{"message": "slow down"}})
	})
	cfg := defaultConfig()
	cfg.BaseURL, cfg.APIKey = ws.URL, "sk-test"
	client, err := NewOpenAIClient(&cfg, nil)
	require.NoError(t, err)
	_, err = client.Chat(context.Background(), ChatRequest{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}})
	var ce *ChatError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 429, ce.StatusCode)
	assert.Equal(t, 3*time.Second, ce.RetryAfter)
	assert.Equal(t, "HTTP 429: slow down (retry after 3s)", ce.Message)

	// A long server message is cut in the middle, its end and the wait are kept.
	ws = newWire(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Retry-After", "3")
		writeJSON(w, 503, map[string]any{"error": map[string]any{"message": strings.Repeat("busy ", 400)}})
	})
	cfg.BaseURL = ws.URL
	client, err = NewOpenAIClient(&cfg, nil)
	require.NoError(t, err)
	_, err = client.Chat(context.Background(), ChatRequest{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}})
	require.ErrorAs(t, err, &ce)
	assert.LessOrEqual(t, len(ce.Message), 1024)
	assert.Contains(t, ce.Message, " … ")
	assert.True(t, strings.HasSuffix(ce.Message, "busy (retry after 3s)"), ce.Message)
}

func TestWireTransportError(t *testing.T) {
	ws := newWire(t, func(w http.ResponseWriter, r *http.Request, body []byte) {})
	s := wireSelector(t, ws, nil)
	ws.Close()
	r, err := s.Select(context.Background(), testRequest(t))
	require.ErrorIs(t, err, ErrFailClosed)
	require.Len(t, r.Attempts, 2)
	assert.Equal(t, KindTransport, r.Attempts[0].Kind)
	assert.Equal(t, KindTransport, r.Attempts[1].Kind)
}

func TestWireNativeMode(t *testing.T) {
	req := testRequest(t)
	mapped := req.Registry.ProviderName(registry.FormatOpenAI, "send.email")
	ws := newWire(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		writeJSON(w, 200, map[string]any{"id": "x", "object": "chat.completion", "choices": []any{map[string]any{
			"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant", "content": nil,
				"tool_calls": []any{
					map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris","units":"c"}`}},
					map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": mapped, "arguments": `{"to":"bob@example.com"}`}},
				}}}}})
	})
	s := wireSelector(t, ws, func(c *Config) { c.Mode = ModeNative })
	r, err := s.Select(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, r.Calls, 2)
	assert.Equal(t, "get_weather", r.Calls[0].Tool)
	assert.Equal(t, "send.email", r.Calls[1].Tool)
	assert.JSONEq(t, `{"to":"bob@example.com"}`, string(r.Calls[1].Args))

	sent := ws.requests()[0]
	assert.NotContains(t, sent, "response_format")
	tools := sent["tools"].([]any)
	require.Len(t, tools, 4)
	var names []string
	for _, tl := range tools {
		fn := tl.(map[string]any)["function"].(map[string]any)
		names = append(names, fn["name"].(string))
		assert.NotNil(t, fn["parameters"])
	}
	assert.Equal(t, []string{"search", "get_weather", mapped, "tail_logs"}, names)
	assert.Equal(t, json.Number("0"), sent["temperature"])
}

// The API key never appears in errors, attempts, JSON output or logs, even
// when the server echoes it back.
func TestWireKeyNeverLeaks(t *testing.T) {
	const key = "sk-test-SECRET-0123456789"
	ws := newWire(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		auth := r.Header.Get("Authorization")
		switch modelOf(body) {
		case "primary":
			writeJSON(w, 401, map[string]any{"error": map[string]any{"message": "Incorrect API key provided: " + auth, "type": "invalid_request_error"}})
		default:
			w.WriteHeader(502)
			fmt.Fprintf(w, "<html><title>bad gateway</title><body>%s</body></html>", auth)
		}
	})
	var logs bytes.Buffer
	s := wireSelector(t, ws, nil, withLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	r, err := s.Select(context.Background(), testRequest(t))
	require.ErrorIs(t, err, ErrFailClosed)
	require.Len(t, r.Attempts, 2)
	assert.Contains(t, r.Attempts[0].Message, "Incorrect API key provided")
	assert.Contains(t, r.Attempts[0].Message, "[REDACTED]")
	out, _ := json.Marshal(r)
	act := Action{Kind: ActionDone, Result: r, Err: err}
	for name, s := range map[string]string{"error": err.Error(), "result": string(out), "action": string(act.JSON()), "logs": logs.String(), "config": fmt.Sprintf("%v", s.Config())} {
		assert.NotContains(t, s, key, name)
		assert.NotContains(t, s, "SECRET", name)
	}
	assert.Contains(t, logs.String(), "tool selection attempt failed")
}

func TestNewOpenAIClientSetsHTTPTimeout(t *testing.T) {
	cfg := defaultConfig()
	cfg.Timeout = 10 * time.Second
	c, err := NewOpenAIClient(&cfg, nil)
	require.NoError(t, err)
	d := c.(*openAIClient).doer
	assert.Equal(t, 15*time.Second, d.client.Timeout)
	assert.Equal(t, int64(defaults.MaxResponseBytes), d.limit)

	own := &http.Client{Timeout: 3 * time.Second}
	c, err = NewOpenAIClient(&cfg, own)
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, c.(*openAIClient).doer.client.Timeout)

	noTimeout := &http.Client{}
	c, err = NewOpenAIClient(&cfg, noTimeout)
	require.NoError(t, err)
	assert.Equal(t, 15*time.Second, c.(*openAIClient).doer.client.Timeout)
	assert.Zero(t, noTimeout.Timeout, "the caller's client is not modified")

	cfg.BaseURL = "not a url"
	_, err = NewOpenAIClient(&cfg, nil)
	assert.ErrorIs(t, err, ErrInvalidConfig)
}

// A body exactly at the limit is accepted.
func TestWireBodyAtLimit(t *testing.T) {
	var size int
	ws := newWire(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		var buf bytes.Buffer
		completion(&recorder{h: http.Header{}, buf: &buf}, `{"calls":[]}`+strings.Repeat(" ", 1500))
		size = buf.Len()
		w.Header().Set("Content-Type", "application/json")
		w.Write(buf.Bytes())
	})
	// Learn the size, then set the limit to exactly it.
	_, _ = wireSelector(t, ws, nil).Select(context.Background(), testRequest(t))
	require.Greater(t, size, 1024)
	r, err := wireSelector(t, ws, func(c *Config) { c.MaxResponseBytes = int64(size) }).Select(context.Background(), testRequest(t))
	require.NoError(t, err, "%+v", r)
	_, err = wireSelector(t, ws, func(c *Config) { c.MaxResponseBytes = int64(size - 1); c.FallbackModel = "" }).Select(context.Background(), testRequest(t))
	require.ErrorIs(t, err, ErrFailClosed)
}

type recorder struct {
	h   http.Header
	buf *bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(b []byte) (int, error) { return r.buf.Write(b) }
func (r *recorder) WriteHeader(int)             {}

// Azure OpenAI's classic deployment URL is served in Azure's way, or refused
// as a configuration error that shows the v1 form when it cannot be.
func TestAzureClassicURL(t *testing.T) {
	az, ok, err := azureClassic("https://res.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, azureDeployment{resource: "https://res.openai.azure.com", deployment: "gpt-4o", apiVersion: "2024-10-21"}, az)
	for _, v1 := range []string{"https://res.openai.azure.com/openai/v1", "https://api.openai.com/v1", ""} {
		_, ok, err = azureClassic(v1)
		require.NoError(t, err)
		assert.False(t, ok, v1)
	}
	for url, want := range map[string]string{
		"https://res.openai.azure.com/openai/deployments/gpt-4o":         `needs its api-version (?api-version=2024-10-21); or use the v1 form https://res.openai.azure.com/openai/v1 with model "gpt-4o"`,
		"https://res.openai.azure.com/openai/deployments/?api-version=1": "must name the deployment",
	} {
		cfg := Config{Settings: Settings{BaseURL: url, APIKey: "k"}}
		_, err := NewOpenAIClient(&cfg, nil)
		require.Error(t, err, url)
		assert.ErrorIs(t, err, ErrInvalidConfig)
		assert.Contains(t, err.Error(), want)
	}
	// Whatever provider is named: the URL can only be Azure's.
	cfg := Config{Settings: Settings{BaseURL: "https://res.openai.azure.com/openai/deployments/gpt-4o", APIKey: "k", Provider: ProviderGeneric}}
	_, err = NewOpenAIClient(&cfg, nil)
	assert.ErrorIs(t, err, ErrInvalidConfig)
}
