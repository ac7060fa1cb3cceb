package selector

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolselect/toolselect/registry"
)

// testTools is the catalog most tests use.
const testTools = `[
{"name":"search","description":"Search the web.","parameters":{"type":"object","properties":{"query":{"type":"string","minLength":1}},"required":["query"],"additionalProperties":false}},
{"name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string"},"units":{"enum":["c","f"]}},"required":["city"]}},
{"name":"send.email","description":"Send an email.","parameters":{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}},"required":["to"]}},
{"name":"delete_files","description":"Delete files.","safe":false,"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},
{"name":"admin_reset","description":"Reset the service.","roles":["admin"],"parameters":{"type":"object","properties":{}}},
{"name":"tail_logs","description":"Stream logs.","capabilities":["streaming","readOnly"],"parameters":{"type":"object","properties":{"service":{"type":"string"}}}}
]`

func newTestRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	tools, _, err := registry.ParseCatalog([]byte(testTools))
	require.NoError(t, err)
	r := registry.New(nil)
	require.NoError(t, r.RegisterAll(tools))
	return r
}

func testRequest(t testing.TB) Request {
	return Request{
		Task:     Task{ID: "T1", Description: "Find the weather in Paris and email it to bob.", SubTasks: []SubTask{{ID: "S1", Description: "get the weather"}, {ID: "S2", Description: "send the email"}}},
		Registry: newTestRegistry(t),
		Query:    "weather paris email",
		Context:  map[string]any{"user": "alice", "locale": "fr-FR"},
	}
}

func quiet() option { return withLogger(slog.New(slog.DiscardHandler)) }

// option sets one of the Go-valued fields of a Config, for tests.
type option func(*Config)

func withLogger(l *slog.Logger) option      { return func(c *Config) { c.Logger = l } }
func withRanker(r Ranker) option            { return func(c *Config) { c.Ranker = r } }
func withPrefilter(p Prefilter) option      { return func(c *Config) { c.Prefilter = p } }
func withClock(now func() time.Time) option { return func(c *Config) { c.now = now } }

// newWith is New with cfg (nil: the defaults) changed by opts, on a copy.
func newWith(client ChatClient, cfg *Config, opts ...option) (*ToolSelector, error) {
	c := defaultConfig()
	if cfg != nil {
		c = *cfg
	}
	for _, o := range opts {
		o(&c)
	}
	return New(client, &c)
}

// fakeClient answers per model with scripted replies and records the requests.
type fakeClient struct {
	mu      sync.Mutex
	replies map[string]func(ChatRequest) (ChatResponse, error)
	seen    []ChatRequest
}

func (f *fakeClient) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	f.mu.Lock()
	f.seen = append(f.seen, req)
	h := f.replies[req.Model]
	f.mu.Unlock()
	if h == nil {
		return ChatResponse{}, &ChatError{Kind: KindHTTPStatus, StatusCode: 404, Message: "HTTP 404: no such model"}
	}
	return h(req)
}

func (f *fakeClient) models() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.seen {
		out = append(out, r.Model)
	}
	return out
}

func content(s string) func(ChatRequest) (ChatResponse, error) {
	return func(ChatRequest) (ChatResponse, error) {
		return ChatResponse{Content: s, PromptTokens: 10, CompletionTokens: 5}, nil
	}
}

func failing(err error) func(ChatRequest) (ChatResponse, error) {
	return func(ChatRequest) (ChatResponse, error) { return ChatResponse{}, err }
}

func cfgWith(mut func(*Config)) *Config {
	c := defaultConfig()
	c.Model, c.FallbackModel = "primary", "fallback"
	if mut != nil {
		mut(&c)
	}
	return &c
}

func newSel(t testing.TB, client ChatClient, cfg *Config, opts ...option) *ToolSelector {
	t.Helper()
	s, err := newWith(client, cfg, append([]option{quiet()}, opts...)...)
	require.NoError(t, err)
	return s
}

// wire is an httptest server speaking the OpenAI chat completions format.
type wire struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
}

// newWire starts a server; handle writes the response for each request.
func newWire(t testing.TB, handle func(w http.ResponseWriter, r *http.Request, body []byte)) *wire {
	t.Helper()
	ws := &wire{}
	ws.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ws.mu.Lock()
		ws.bodies = append(ws.bodies, body)
		ws.heads = append(ws.heads, r.Header.Clone())
		ws.mu.Unlock()
		handle(w, r, body)
	}))
	t.Cleanup(ws.Close)
	return ws
}

func (ws *wire) requests() []map[string]any {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var out []map[string]any
	for _, b := range ws.bodies {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		_ = dec.Decode(&m)
		out = append(out, m)
	}
	return out
}

// completion writes a chat completion whose first choice has content.
func completion(w http.ResponseWriter, content string) {
	writeJSON(w, 200, map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// modelOf reads the "model" of a request body.
func modelOf(body []byte) string {
	var m struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &m)
	return m.Model
}

// wireSelector wires the real go-openai adapter to ws.
func wireSelector(t testing.TB, ws *wire, mut func(*Config), opts ...option) *ToolSelector {
	t.Helper()
	cfg := cfgWith(func(c *Config) {
		c.BaseURL = ws.URL + "/v1"
		c.APIKey = "sk-test-SECRET-0123456789"
		if mut != nil {
			mut(c)
		}
	})
	client, err := NewOpenAIClient(cfg, ws.Client())
	require.NoError(t, err)
	return newSel(t, client, cfg, opts...)
}

const validReply = `{"calls":[{"tool":"get_weather","args":{"city":"Paris"},"reasoning":"need the weather"},{"tool":"send.email","args":{"to":"bob","body":"sunny"}}]}`
