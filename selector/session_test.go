package selector

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolselect/toolselect/registry"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixedClock makes latencies and timeouts deterministic.
func fixedClock() option {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return withClock(func() time.Time { return t0 })
}

func TestSessionDrivenByJSON(t *testing.T) {
	s := newSel(t, nil, cfgWith(nil), fixedClock())
	ss, err := s.Begin(context.Background(), testRequest(t))
	require.NoError(t, err)

	var chat struct {
		Action   string    `json:"action"`
		Model    string    `json:"model"`
		Messages []Message `json:"messages"`
		Params   struct {
			Temperature    *float64          `json:"temperature"`
			ResponseFormat map[string]string `json:"response_format"`
			TimeoutS       float64           `json:"timeout_s"`
			Tools          []any             `json:"tools"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal(ss.Next().JSON(), &chat))
	assert.Equal(t, "chat", chat.Action)
	assert.Equal(t, "primary", chat.Model)
	assert.Len(t, chat.Messages, 2)
	require.NotNil(t, chat.Params.Temperature, "temperature 0 is written")
	assert.Equal(t, 0.0, *chat.Params.Temperature)
	assert.Equal(t, map[string]string{"type": "json_object"}, chat.Params.ResponseFormat)
	assert.Equal(t, 30.0, chat.Params.TimeoutS)
	assert.Nil(t, chat.Params.Tools)

	// Next is idempotent until fed.
	assert.Equal(t, ss.Next().JSON(), ss.Next().JSON())

	// A malformed feed is refused and changes nothing.
	_, err = ss.FeedJSON(context.Background(), []byte(`{"nothing":1}`))
	require.Error(t, err)
	_, err = ss.FeedJSON(context.Background(), []byte(`not json`))
	require.Error(t, err)
	assert.Equal(t, ActionChat, ss.Next().Kind)

	// Primary fails on the driver's side; the fallback is asked next.
	act, err := ss.FeedJSON(context.Background(), []byte(`{"error":{"kind":"timeout","message":"asyncio timeout after 30s"}}`))
	require.NoError(t, err)
	require.Equal(t, ActionChat, act.Kind)
	assert.Equal(t, "fallback", act.Chat.Model)

	act, err = ss.FeedJSON(context.Background(), []byte(`{"content":`+quote(validReply)+`,"usage":{"prompt_tokens":9,"completion_tokens":3}}`))
	require.NoError(t, err)
	require.Equal(t, ActionDone, act.Kind)
	assert.True(t, ss.Done())

	var done struct {
		Action   string            `json:"action"`
		Calls    []ToolCall        `json:"calls"`
		Attempts []json.RawMessage `json:"attempts"`
		Offered  []string          `json:"offered"`
		Error    *ErrorInfo        `json:"error"`
	}
	raw := act.JSON()
	require.NoError(t, json.Unmarshal(raw, &done))
	assert.Equal(t, "done", done.Action)
	assert.Len(t, done.Calls, 2)
	assert.Nil(t, done.Error)
	assert.Contains(t, string(raw), `"error":null`)
	require.Len(t, done.Attempts, 2)
	assert.JSONEq(t, `{"model":"primary","ok":false,"error":{"kind":"timeout","message":"asyncio timeout after 30s"},"latency_ms":0}`, string(done.Attempts[0]))
	assert.JSONEq(t, `{"model":"fallback","ok":true,"error":null,"latency_ms":0,"prompt_tokens":9,"completion_tokens":3}`, string(done.Attempts[1]))

	// Feeding a finished session returns the same done action.
	again, err := ss.FeedJSON(context.Background(), []byte(`{"content":"{}"}`))
	require.NoError(t, err)
	assert.JSONEq(t, string(raw), string(again.JSON()))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestSessionFeedShapes(t *testing.T) {
	cases := map[string]struct {
		mode  Mode
		feed  string
		kind  FailureKind // "" = success
		calls int
	}{
		"openai completion":       {ModeJSON, `{"choices":[{"message":{"role":"assistant","content":` + quote(validReply) + `}}],"usage":{"prompt_tokens":1}}`, "", 2},
		"openai completion empty": {ModeJSON, `{"object":"chat.completion","choices":[]}`, KindEmptyChoices, 0},
		"unknown error kind":      {ModeJSON, `{"error":{"kind":"weird","message":"x"}}`, KindTransport, 0},
		"http status":             {ModeJSON, `{"error":{"kind":"http_status","message":"HTTP 429: slow down","status_code":429}}`, KindHTTPStatus, 0},
		"tool_calls openai shape": {ModeNative, `{"tool_calls":[{"id":"1","type":"function","function":{"name":"search","arguments":"{\"query\":\"a\"}"}}]}`, "", 1},
		"tool_calls flat, object": {ModeNative, `{"tool_calls":[{"id":"1","name":"search","arguments":{"query":"a"}}]}`, "", 1},
		"native no calls":         {ModeNative, `{"content":"nothing to do","tool_calls":null}`, "", 0},
		"content null":            {ModeJSON, `{"content":null}`, KindParse, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := newSel(t, nil, cfgWith(func(c *Config) { c.Mode = tc.mode; c.FallbackModel = "" }))
			ss, err := s.Begin(context.Background(), testRequest(t))
			require.NoError(t, err)
			act, err := ss.FeedJSON(context.Background(), []byte(tc.feed))
			require.NoError(t, err)
			require.Equal(t, ActionDone, act.Kind)
			if tc.kind == "" {
				require.NoError(t, act.Err)
				assert.Len(t, act.Result.Calls, tc.calls)
				return
			}
			require.ErrorIs(t, act.Err, ErrFailClosed)
			assert.Equal(t, tc.kind, act.Result.Attempts[0].Kind)
			assert.Contains(t, string(act.JSON()), `"error":{"kind":"fail_closed"`)
		})
	}
}

// Golden prompts: the exact chat action for each mode, one txtar file each.
// Run `go test ./selector -run TestGoldenPrompts -update` to rewrite them.
func TestGoldenPrompts(t *testing.T) {
	cases := map[string]func(*Config, *Request){
		"json_mode":   func(*Config, *Request) {},
		"native_mode": func(c *Config, _ *Request) { c.Mode = ModeNative; c.Temperature = 0.2 },
		"minimal_task": func(_ *Config, r *Request) {
			r.Task = Task{Description: "List the files."}
			r.Query = ""
			r.Context = nil
		},
		"unsafe_and_admin": func(_ *Config, r *Request) { r.AllowUnsafe = true; r.Roles = []string{"admin"} },
		"readonly_only":    func(c *Config, r *Request) { r.Capabilities = []string{"readOnly"}; c.MaxCalls = 1 },
		// A ranked subset: the model may ask for a search round.
		"json_mode_search":   func(_ *Config, r *Request) { r.Prefilter = firstTwo },
		"native_mode_search": func(c *Config, r *Request) { c.Mode = ModeNative; r.Prefilter = firstTwo },
	}
	for name, mut := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := cfgWith(nil)
			req := testRequest(t)
			mut(cfg, &req)
			s := newSel(t, nil, cfg, fixedClock())
			ss, err := s.Begin(context.Background(), req)
			require.NoError(t, err)
			act := ss.Next()
			var pretty strings.Builder
			enc := json.NewEncoder(&pretty)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			require.NoError(t, enc.Encode(json.RawMessage(act.JSON())))
			got := formatTxtar([][2]string{
				{"system", act.Chat.Messages[0].Content + "\n"},
				{"user", act.Chat.Messages[1].Content},
				{"action.json", pretty.String()},
			})
			path := filepath.Join("testdata", "prompts", name+".txtar")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update to create %s", path)
			assert.Equal(t, string(want), got, "golden %s differs; run with -update after checking the diff", path)
		})
	}
}

// firstTwo is a Prefilter offering the first two eligible tools.
func firstTwo(_ context.Context, _ string, eligible []*registry.Entry) ([]*registry.Entry, error) {
	return eligible[:2], nil
}

// formatTxtar writes files in the txtar format ("-- name --" headers).
func formatTxtar(files [][2]string) string {
	var b strings.Builder
	for _, f := range files {
		b.WriteString("-- " + f[0] + " --\n")
		b.WriteString(f[1])
		if !strings.HasSuffix(f[1], "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Native mode, finish_reason "length": a reply cut at
// the token limit is the attempt kind truncated, naming the limit and the
// tokens spent, whether it holds partial prose and no call (it was recorded
// ok with no calls), arguments cut short (it was parse), or calls that parse
// (the list may have been cut before its end).
func TestNativeLengthIsTruncated(t *testing.T) {
	for _, tc := range []struct {
		name  string
		resp  ChatResponse
		words string
	}{
		{"partial prose, no call", ChatResponse{Content: "I will look up the weather in Paris, then", FinishReason: "length", CompletionTokens: 64}, "no tool call"},
		{"arguments cut short", ChatResponse{ToolCalls: []NativeCall{{ID: "1", Name: "get_weather", Arguments: `{"city": "Par`}}, FinishReason: "length", CompletionTokens: 64}, "cut short"},
		{"calls that parse", ChatResponse{ToolCalls: []NativeCall{{ID: "1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}, FinishReason: "length", CompletionTokens: 64}, "left calls out"},
		{"nothing", ChatResponse{FinishReason: "length"}, "no answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSel(t, nil, cfgWith(func(c *Config) { c.Mode, c.FallbackModel, c.MaxTokens = ModeNative, "", 64 }))
			ss, err := s.Begin(context.Background(), testRequest(t))
			require.NoError(t, err)
			act := ss.Feed(context.Background(), tc.resp, nil)
			require.Equal(t, ActionDone, act.Kind)
			require.Error(t, act.Err)
			require.Len(t, act.Result.Attempts, 1)
			a := act.Result.Attempts[0]
			assert.Equal(t, KindTruncated, a.Kind, a.Message)
			assert.False(t, a.OK)
			assert.Contains(t, a.Message, "64 tokens ("+envOf("max_tokens")+")")
			assert.Contains(t, a.Message, tc.words)
			if tc.resp.CompletionTokens > 0 {
				assert.Contains(t, a.Message, "after 64 completion tokens")
			}
			assert.Empty(t, act.Result.Calls)
		})
	}
	// Not cut: the same call is the answer.
	s := newSel(t, nil, cfgWith(func(c *Config) { c.Mode, c.FallbackModel = ModeNative, "" }))
	ss, err := s.Begin(context.Background(), testRequest(t))
	require.NoError(t, err)
	act := ss.Feed(context.Background(), ChatResponse{ToolCalls: []NativeCall{{ID: "1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}, FinishReason: "tool_calls"}, nil)
	require.NoError(t, act.Err)
	require.Len(t, act.Result.Calls, 1)
}
