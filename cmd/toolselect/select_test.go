package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testKey = "sk-test-0123456789abcdef-SECRET"

// chatServer speaks the OpenAI chat completions wire format. reply decides,
// per request (by model), the status and the assistant content or raw body.
type chatServer struct {
	*httptest.Server
	mu    sync.Mutex
	reqs  []map[string]any
	auths []string
}

type chatReply struct {
	status  int    // 0 means 200
	content string // assistant message content (for 200)
	body    string // raw body instead of a completion
}

func newChatServer(t *testing.T, reply func(model string) chatReply) *chatServer {
	t.Helper()
	return newChatServerFor(t, func(req map[string]any) chatReply {
		model, _ := req["model"].(string)
		return reply(model)
	})
}

// newChatServerFor answers each request from its decoded body.
func newChatServerFor(t *testing.T, reply func(req map[string]any) chatReply) *chatServer {
	t.Helper()
	s := &chatServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "not found: "+r.URL.Path, http.StatusNotFound)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var req map[string]any
		_ = json.Unmarshal(b, &req)
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.mu.Unlock()
		model, _ := req["model"].(string)
		rep := reply(req)
		w.Header().Set("Content-Type", "application/json")
		if rep.status != 0 {
			w.WriteHeader(rep.status)
		}
		if rep.body != "" {
			io.WriteString(w, rep.body)
			return
		}
		content, _ := json.Marshal(rep.content)
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":%q,
			"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}`, model, content)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *chatServer) requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.reqs...)
}

func (s *chatServer) env(extra ...string) map[string]string {
	m := map[string]string{
		"LLM_COMMON_TOOL_SELECTION_BASE_URL":  s.URL + "/v1",
		"LLM_COMMON_TOOL_SELECTION_API_KEY":   testKey,
		"LLM_COMMON_TOOL_SELECTION_TIMEOUT_S": "5",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

// selectJSON is the shape select prints.
type selectJSON struct {
	Calls []struct {
		Tool      string          `json:"tool"`
		Args      json.RawMessage `json:"args"`
		Reasoning string          `json:"reasoning"`
	} `json:"calls"`
	Attempts []struct {
		Model string `json:"model"`
		OK    bool   `json:"ok"`
		Error *struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"attempts"`
	Offered []string `json:"offered"`
	Error   *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

// runSelectCLI runs select and checks what holds for every run: no API key in
// any output, one JSON line on stdout when it exits 0 or 3, one line on
// stderr when it exits 2.
func runSelectCLI(t *testing.T, vars map[string]string, args ...string) (cliResult, selectJSON) {
	t.Helper()
	r := execCLI(t, vars, "", append([]string{"select"}, args...)...)
	assert.NotContains(t, r.stdout, testKey, "API key on stdout")
	assert.NotContains(t, r.stderr, testKey, "API key on stderr")
	assert.NotContains(t, r.stdout, "0123456789abcdef", "part of the API key on stdout")
	var out selectJSON
	switch r.code {
	case exitOK, exitFailed:
		oneLine(t, r.stdout)
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
		var raw map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &raw))
		assert.Len(t, raw, 4, "exactly calls, attempts, offered, error: %s", r.stdout)
		assert.NotEqual(t, "null", string(raw["calls"]), "calls is an array, never null")
		assert.NotEqual(t, "null", string(raw["offered"]), "offered is an array, never null")
	case exitUsage:
		assert.Empty(t, r.stdout)
		oneLine(t, r.stderr)
	}
	return r, out
}

func TestSelectOK(t *testing.T) {
	srv := newChatServer(t, func(string) chatReply {
		return chatReply{content: "```json\n" + `{"calls":[
			{"tool":"get_metrics","args":{"service":"checkout-api","metric":"error_rate"},"reasoning":"check the alert"},
			{"tool":"search_logs","args":"{\"service\":\"checkout-api\",\"query\":\"error\",\"since\":\"30m\"}"}]}` + "\n```"}
	})
	ctxFile := writeTemp(t, "ctx.json", `{"service":"checkout-api","alert":"error_rate above 5%"}`)
	r, out := runSelectCLI(t, srv.env(), "--catalog", exampleCatalog(t), "--task", "Investigate the checkout error alert",
		"--subtask", "look at the error rate", "--subtask", "find the failing requests", "--query", "errors checkout", "--context", ctxFile)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	require.Len(t, out.Calls, 2)
	assert.Equal(t, "get_metrics", out.Calls[0].Tool)
	assert.JSONEq(t, `{"service":"checkout-api","metric":"error_rate"}`, string(out.Calls[0].Args))
	assert.Equal(t, "check the alert", out.Calls[0].Reasoning)
	assert.Equal(t, "search_logs", out.Calls[1].Tool)
	assert.JSONEq(t, `{"service":"checkout-api","query":"error","since":"30m"}`, string(out.Calls[1].Args))
	require.Len(t, out.Attempts, 1)
	assert.Equal(t, "glm-4.5-air", out.Attempts[0].Model)
	assert.True(t, out.Attempts[0].OK)
	assert.Nil(t, out.Attempts[0].Error)
	assert.Nil(t, out.Error)

	reqs := srv.requests()
	require.Len(t, reqs, 1)
	req := reqs[0]
	assert.Equal(t, "Bearer "+testKey, srv.auths[0], "the key reaches the server, and only the server")
	assert.Equal(t, "glm-4.5-air", req["model"])
	assert.Equal(t, float64(0), req["temperature"], "temperature 0 reaches the wire")
	assert.Equal(t, map[string]any{"type": "json_object"}, req["response_format"])
	msgs, _ := json.Marshal(req["messages"])
	for _, want := range []string{"Investigate the checkout error alert", "find the failing requests", "errors checkout", "error_rate above 5%"} {
		assert.Contains(t, string(msgs), want)
	}
	// Unsafe and role-restricted tools are not offered unless asked for.
	assert.NotContains(t, string(msgs), "restart_service")
	assert.NotContains(t, string(msgs), "deploy_release")
}

// A misspelt selector variable is named on stderr with the setting it most
// likely meant; the selection still runs (the variable changes nothing).
func TestSelectWarnsOfUnknownVariables(t *testing.T) {
	srv := newChatServer(t, func(string) chatReply { return chatReply{content: `{"calls":[]}`} })
	r, _ := runSelectCLI(t, srv.env("LLM_COMMON_TOOL_SELECTION_MAX_CALS", "3"), "--catalog", exampleCatalog(t), "--task", "say hello")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "toolselect select: warning: LLM_COMMON_TOOL_SELECTION_MAX_CALS names no setting and is ignored (did you mean LLM_COMMON_TOOL_SELECTION_MAX_CALLS?)\n", r.stderr)
}

func TestSelectZeroCallsIsSuccess(t *testing.T) {
	srv := newChatServer(t, func(string) chatReply { return chatReply{content: `{"calls":[]}`} })
	r, out := runSelectCLI(t, srv.env(), "--catalog", exampleCatalog(t), "--task", "say hello")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, `{"calls":[],`), r.stdout)
	assert.Empty(t, out.Calls)
	assert.Nil(t, out.Error)
}

func TestSelectFallback(t *testing.T) {
	srv := newChatServer(t, func(model string) chatReply {
		if model == "primary" {
			return chatReply{content: `this is not JSON`}
		}
		return chatReply{content: `{"calls":[{"tool":"list_incidents","args":{"status":"open"}}]}`}
	})
	r, out := runSelectCLI(t, srv.env("LLM_COMMON_TOOL_SELECTION_MODEL", "primary", "LLM_COMMON_TOOL_SELECTION_FALLBACK_MODEL", "backup"),
		"--catalog", exampleCatalog(t), "--task", "what is on fire?")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Len(t, out.Calls, 1)
	require.Len(t, out.Attempts, 2)
	assert.Equal(t, "primary", out.Attempts[0].Model)
	assert.False(t, out.Attempts[0].OK)
	require.NotNil(t, out.Attempts[0].Error)
	assert.Equal(t, "parse", out.Attempts[0].Error.Kind)
	assert.Equal(t, "backup", out.Attempts[1].Model)
	assert.True(t, out.Attempts[1].OK)
}

func TestSelectFailClosed(t *testing.T) {
	t.Run("server errors on both models", func(t *testing.T) {
		srv := newChatServer(t, func(string) chatReply {
			return chatReply{status: 500, body: `{"error":{"message":"the model is overloaded","type":"server_error"}}`}
		})
		r, out := runSelectCLI(t, srv.env("LLM_COMMON_TOOL_SELECTION_FALLBACK_MODEL", "backup"),
			"--catalog", exampleCatalog(t), "--task", "check the metrics")
		require.Equal(t, exitFailed, r.code, r.stderr)
		assert.Empty(t, out.Calls)
		require.Len(t, out.Attempts, 2)
		for _, a := range out.Attempts {
			require.NotNil(t, a.Error)
			assert.Equal(t, "http_status", a.Error.Kind)
			assert.Contains(t, a.Error.Message, "the model is overloaded", "the server's own message is kept")
		}
		require.NotNil(t, out.Error)
		assert.Equal(t, "fail_closed", out.Error.Kind)
	})
	t.Run("invented and unsafe tools", func(t *testing.T) {
		for _, content := range []string{
			`{"calls":[{"tool":"delete_everything","args":{}}]}`,
			`{"calls":[{"tool":"restart_service","args":{"service":"a","environment":"production","reason":"why not"}}]}`,
			`{"calls":[{"tool":"get_metrics","args":{"service":"a","metric":"bogus"}}]}`,
		} {
			srv := newChatServer(t, func(string) chatReply { return chatReply{content: content} })
			r, out := runSelectCLI(t, srv.env(), "--catalog", exampleCatalog(t), "--task", "t")
			require.Equal(t, exitFailed, r.code, content)
			assert.Empty(t, out.Calls)
			require.Len(t, out.Attempts, 1)
			assert.Equal(t, "validation", out.Attempts[0].Error.Kind)
		}
	})
	t.Run("fail open drops the invalid call", func(t *testing.T) {
		srv := newChatServer(t, func(string) chatReply {
			return chatReply{content: `{"calls":[{"tool":"get_metrics","args":{"service":"a","metric":"bogus"}},{"tool":"list_incidents","args":{}}]}`}
		})
		r, out := runSelectCLI(t, srv.env("LLM_COMMON_TOOL_SELECTION_FAIL_CLOSED", "no"), "--catalog", exampleCatalog(t), "--task", "t")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Len(t, out.Calls, 1)
		assert.Equal(t, "list_incidents", out.Calls[0].Tool)
	})
}

func TestSelectUnsafeAndRolesOnRequest(t *testing.T) {
	srv := newChatServer(t, func(string) chatReply {
		return chatReply{content: `{"calls":[{"tool":"restart_service","args":{"service":"a","environment":"staging","reason":"stuck"}},{"tool":"deploy_release","args":{"service":"a","version":"1.2.3","environment":"staging"}}]}`}
	})
	r, out := runSelectCLI(t, srv.env(), "--catalog", exampleCatalog(t), "--task", "t", "--allow-unsafe", "--role", "sre")
	require.Equal(t, exitOK, r.code, r.stdout)
	assert.Len(t, out.Calls, 2)
}

func TestSelectKeyNeverLeaks(t *testing.T) {
	// A server that echoes the key back in its error, as OpenAI does for a wrong key.
	srv := newChatServer(t, func(string) chatReply {
		return chatReply{status: 401, body: `{"error":{"message":"Incorrect API key provided: ` + testKey + `. Check your key.","type":"invalid_request_error","code":"invalid_api_key"}}`}
	})
	for _, level := range []string{"off", "debug"} {
		r, out := runSelectCLI(t, srv.env(), "--catalog", exampleCatalog(t), "--task", "t", "--log-level", level)
		require.Equal(t, exitFailed, r.code)
		require.NotNil(t, out.Error)
		assert.Contains(t, out.Attempts[0].Error.Message, "Incorrect API key provided")
		if level == "debug" {
			assert.NotEmpty(t, r.stderr, "debug logs reach stderr")
		}
	}
	// OPENAI_API_KEY as well, and a config error mentioning the base URL.
	vars := map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": testKey}
	r, _ := runSelectCLI(t, vars, "--catalog", exampleCatalog(t), "--task", "t", "--log-level", "debug")
	assert.Equal(t, exitFailed, r.code)
	vars["LLM_COMMON_TOOL_SELECTION_BASE_URL"] = "not a url " + testKey
	r, _ = runSelectCLI(t, vars, "--catalog", exampleCatalog(t), "--task", "t")
	assert.Equal(t, exitUsage, r.code)
}

// A placeholder key (local servers take any: "ollama") may be a word of the
// model's valid arguments: the calls come back as validated, never redacted.
// Messages are still redacted.
func TestSelectPlaceholderKeyLeavesCallsAlone(t *testing.T) {
	srv := newChatServer(t, func(string) chatReply {
		return chatReply{content: `{"calls":[{"tool":"search_logs","args":{"service":"ollama","query":"ollama restarts"}}]}`}
	})
	for _, asJSON := range []bool{true, false} {
		args := []string{"--catalog", exampleCatalog(t), "--task", "find why ollama restarts"}
		if asJSON {
			args = append(args, "--json")
		}
		r := execCLI(t, srv.env("LLM_COMMON_TOOL_SELECTION_API_KEY", "ollama"), "", append([]string{"select"}, args...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.NotContains(t, r.stdout, "[REDACTED]")
		assert.Contains(t, r.stdout, "ollama restarts")
	}
	fail := newChatServer(t, func(string) chatReply {
		return chatReply{status: 401, body: `{"error":{"message":"bad key ollama","type":"invalid_request_error"}}`}
	})
	r := execCLI(t, fail.env("LLM_COMMON_TOOL_SELECTION_API_KEY", "ollama"), "", "select", "--catalog", exampleCatalog(t), "--task", "t", "--json")
	require.Equal(t, exitFailed, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "bad key ollama")
}

func TestSelectUsageErrors(t *testing.T) {
	srv := newChatServer(t, func(string) chatReply { return chatReply{content: `{"calls":[]}`} })
	cat := exampleCatalog(t)
	notObject := writeTemp(t, "ctx.json", `[1,2]`)
	badCatalog := writeTemp(t, "cat.json", `[{"name":"x"}]`)
	for name, tc := range map[string]struct {
		vars map[string]string
		args []string
		want string
	}{
		"no endpoint":      {nil, []string{"--catalog", cat, "--task", "t"}, "no model endpoint configured"},
		"no task":          {srv.env(), []string{"--catalog", cat}, "--task is required"},
		"no catalog":       {srv.env(), []string{"--task", "t"}, "--catalog is required"},
		"bad catalog":      {srv.env(), []string{"--catalog", badCatalog, "--task", "t"}, "parameters schema is missing"},
		"context array":    {srv.env(), []string{"--catalog", cat, "--task", "t", "--context", notObject}, "not a JSON object"},
		"context missing":  {srv.env(), []string{"--catalog", cat, "--task", "t", "--context", "/nonexistent.json"}, "--context"},
		"max calls range":  {srv.env("LLM_COMMON_TOOL_SELECTION_MAX_CALLS", "99"), []string{"--catalog", cat, "--task", "t"}, "LLM_COMMON_TOOL_SELECTION_MAX_CALLS"},
		"fail closed bool": {srv.env("LLM_COMMON_TOOL_SELECTION_FAIL_CLOSED", "maybe"), []string{"--catalog", cat, "--task", "t"}, "LLM_COMMON_TOOL_SELECTION_FAIL_CLOSED"},
		"bad log level":    {srv.env(), []string{"--catalog", cat, "--task", "t", "--log-level", "loud"}, "--log-level"},
		"stray argument":   {srv.env(), []string{"--catalog", cat, "--task", "t", "extra"}, "unexpected argument"},
	} {
		t.Run(name, func(t *testing.T) {
			r, _ := runSelectCLI(t, tc.vars, tc.args...)
			assert.Equal(t, exitUsage, r.code)
			assert.Contains(t, r.stderr, tc.want)
			assert.True(t, strings.HasPrefix(r.stderr, "toolselect select: "), r.stderr)
		})
	}
	assert.Empty(t, srv.requests(), "no usage error reaches the model")
}

// promptTools returns the tool names of the system prompt of request i.
func promptTools(t *testing.T, srv *chatServer, i int) []string {
	t.Helper()
	reqs := srv.requests()
	require.Greater(t, len(reqs), i)
	msgs, _ := reqs[i]["messages"].([]any)
	require.NotEmpty(t, msgs)
	system, _ := msgs[0].(map[string]any)["content"].(string)
	at := strings.LastIndex(system, "\nTools:\n")
	require.GreaterOrEqual(t, at, 0, system)
	var tools []struct {
		Name string `json:"name"`
	}
	require.NoError(t, json.Unmarshal([]byte(system[at+len("\nTools:\n"):]), &tools))
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

// bigCatalog is the example catalog (13 tools) plus n unrelated tools.
func bigCatalog(t *testing.T, n int) string {
	t.Helper()
	b, err := os.ReadFile(exampleCatalog(t))
	require.NoError(t, err)
	var tools []json.RawMessage
	require.NoError(t, json.Unmarshal(b, &tools))
	for i := range n {
		tools = append(tools, json.RawMessage(fmt.Sprintf(
			`{"name":"spreadsheet_op_%02d","description":"Spreadsheet formula helper number %d.","parameters":{"type":"object","properties":{"cell":{"type":"string"}}}}`, i, i)))
	}
	out, err := json.Marshal(tools)
	require.NoError(t, err)
	return writeTemp(t, "big.json", string(out))
}

func TestSelectK(t *testing.T) {
	logsCall := `{"calls":[{"tool":"search_logs","args":{"service":"checkout-api","query":"error"}}]}`
	task := "Search the checkout-api logs for errors"
	run := func(t *testing.T, catalog string, args ...string) (*chatServer, cliResult, selectJSON) {
		t.Helper()
		srv := newChatServer(t, func(string) chatReply { return chatReply{content: logsCall} })
		r, out := runSelectCLI(t, srv.env(), append([]string{"--catalog", catalog, "--task", task}, args...)...)
		return srv, r, out
	}

	t.Run("default: a catalog within the token budget is offered whole", func(t *testing.T) {
		srv, r, out := run(t, exampleCatalog(t))
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Len(t, out.Calls, 1)
		// 13 tools less the unsafe and the role-restricted one.
		assert.Len(t, promptTools(t, srv, 0), 11)
		assert.Equal(t, promptTools(t, srv, 0), out.Offered)
		srv, r, out = run(t, bigCatalog(t, 17)) // 30 tools, 28 eligible, about 2,000 tokens
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Len(t, out.Offered, 28)
	})
	t.Run("default: a catalog over the budget is cut to the top 10", func(t *testing.T) {
		srv := newChatServer(t, func(string) chatReply { return chatReply{content: logsCall} })
		r, out := runSelectCLI(t, srv.env("LLM_COMMON_TOOL_SELECTION_OFFER_TOKENS", "500"),
			"--catalog", bigCatalog(t, 17), "--task", task)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Len(t, out.Calls, 1)
		got := promptTools(t, srv, 0)
		assert.LessOrEqual(t, len(got), 10)
		assert.Contains(t, got, "search_logs")
		for _, n := range got {
			assert.NotContains(t, n, "spreadsheet", "unrelated tools are not offered")
		}
	})
	t.Run("--k 0 offers every eligible tool", func(t *testing.T) {
		srv, r, _ := run(t, bigCatalog(t, 17), "--k", "0")
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Len(t, promptTools(t, srv, 0), 28)
	})
	t.Run("--k 2 offers the top 2 in catalog order, the same bytes every time", func(t *testing.T) {
		srv, r, _ := run(t, exampleCatalog(t), "--k", "2")
		require.Equal(t, exitOK, r.code, r.stderr)
		got := promptTools(t, srv, 0)
		require.Len(t, got, 2)
		assert.Contains(t, got, "search_logs")
		// Catalog order: search_logs is the first tool of the catalog.
		assert.Equal(t, "search_logs", got[0])
		srv2, r2, _ := run(t, exampleCatalog(t), "--k", "2")
		require.Equal(t, exitOK, r2.code)
		assert.Equal(t, srv.requests()[0]["messages"], srv2.requests()[0]["messages"])
	})
	t.Run("a call to a tool that was not offered fails closed", func(t *testing.T) {
		srv := newChatServer(t, func(string) chatReply {
			return chatReply{content: `{"calls":[{"tool":"list_incidents","args":{}}]}`}
		})
		r, out := runSelectCLI(t, srv.env(), "--catalog", exampleCatalog(t), "--task", task, "--k", "1")
		require.Equal(t, exitFailed, r.code, r.stdout)
		require.Len(t, out.Attempts, 1)
		require.NotNil(t, out.Attempts[0].Error)
		assert.Equal(t, "validation", out.Attempts[0].Error.Kind)
		assert.Contains(t, out.Attempts[0].Error.Message, "not_offered")
		assert.Equal(t, []string{"search_logs"}, promptTools(t, srv, 0))
	})
	t.Run("nothing ranked, no search round: kind no_ranked_tools, no model asked", func(t *testing.T) {
		srv := newChatServer(t, func(string) chatReply { return chatReply{content: logsCall} })
		r, out := runSelectCLI(t, srv.env("LLM_COMMON_TOOL_SELECTION_OFFER_TOKENS", "500", "LLM_COMMON_TOOL_SELECTION_MAX_SEARCHES", "0"),
			"--catalog", bigCatalog(t, 17), "--task", "zebra quux")
		require.Equal(t, exitFailed, r.code, r.stderr)
		assert.Empty(t, out.Calls)
		require.NotNil(t, out.Error)
		assert.Equal(t, "no_ranked_tools", out.Error.Kind)
		assert.Empty(t, srv.requests())
	})
	t.Run("bad values are usage errors", func(t *testing.T) {
		srv := newChatServer(t, func(string) chatReply { return chatReply{content: logsCall} })
		for _, v := range []string{"-1", "ten", "1001"} {
			r, _ := runSelectCLI(t, srv.env(), "--catalog", exampleCatalog(t), "--task", task, "--k", v)
			assert.Equal(t, exitUsage, r.code)
			assert.Contains(t, r.stderr, "-k")
		}
		assert.Empty(t, srv.requests())
	})
}

// assistantCatalog is examples/assistant.json: 24 tools, among them
// get_weather, none sharing a word with the umbrella task.
func assistantCatalog(t *testing.T) string {
	t.Helper()
	return filepath.Join("..", "..", "examples", "assistant.json")
}

// umbrellaTask shares no word with get_weather, nor a word WordNet relates to
// one of its words: only the search round reaches it.
const umbrellaTask = "Do I pack a parapluie for Lyon?"

// weatherModel calls get_weather when the system prompt lists it, and
// otherwise searches for it.
func weatherModel(req map[string]any) chatReply {
	msgs, _ := req["messages"].([]any)
	system, _ := msgs[0].(map[string]any)["content"].(string)
	if strings.Contains(system, `"name":"get_weather"`) {
		return chatReply{content: `{"calls":[{"tool":"get_weather","args":{"city":"Lyon"}}]}`}
	}
	return chatReply{content: `{"calls":[],"search":"weather forecast"}`}
}

func TestSelectUmbrella(t *testing.T) {
	t.Run("a small catalog reaches the model whole", func(t *testing.T) {
		srv := newChatServerFor(t, weatherModel)
		r, out := runSelectCLI(t, srv.env(), "--catalog", assistantCatalog(t), "--task", umbrellaTask)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Len(t, out.Calls, 1)
		assert.Equal(t, "get_weather", out.Calls[0].Tool)
		require.Len(t, srv.requests(), 1)
		assert.Contains(t, promptTools(t, srv, 0), "get_weather")
		assert.Len(t, out.Offered, 24)
	})
	t.Run("over the budget, the model searches and gets get_weather on the second request", func(t *testing.T) {
		srv := newChatServerFor(t, weatherModel)
		r, out := runSelectCLI(t, srv.env("LLM_COMMON_TOOL_SELECTION_OFFER_TOKENS", "300", "LLM_COMMON_TOOL_SELECTION_TOP_K", "3"),
			"--catalog", assistantCatalog(t), "--task", umbrellaTask)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Len(t, out.Calls, 1)
		assert.Equal(t, "get_weather", out.Calls[0].Tool)
		require.Len(t, srv.requests(), 2)
		assert.NotContains(t, promptTools(t, srv, 0), "get_weather")
		assert.Contains(t, promptTools(t, srv, 1), "get_weather")
		assert.Equal(t, promptTools(t, srv, 1), out.Offered)
		var raw struct {
			Attempts []struct {
				Searches []struct {
					Query   string   `json:"query"`
					Offered []string `json:"offered"`
				} `json:"searches"`
			} `json:"attempts"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &raw))
		require.Len(t, raw.Attempts, 1)
		require.Len(t, raw.Attempts[0].Searches, 1)
		assert.Equal(t, "weather forecast", raw.Attempts[0].Searches[0].Query)
		assert.Equal(t, out.Offered, raw.Attempts[0].Searches[0].Offered)
	})
	t.Run("a lexical hit makes one request", func(t *testing.T) {
		srv := newChatServerFor(t, weatherModel)
		r, out := runSelectCLI(t, srv.env("LLM_COMMON_TOOL_SELECTION_OFFER_TOKENS", "300", "LLM_COMMON_TOOL_SELECTION_TOP_K", "3"),
			"--catalog", assistantCatalog(t), "--task", "What is the weather forecast for Lyon?")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Len(t, out.Calls, 1)
		assert.Len(t, srv.requests(), 1)
	})
	t.Run("nothing eligible: exit 3, kind no_eligible_tools, no request", func(t *testing.T) {
		srv := newChatServerFor(t, weatherModel)
		catalog := writeTemp(t, "unsafe.json", `[{"name":"rm","description":"Delete files.","safe":false,"parameters":{"type":"object"}},
{"name":"reset","description":"Reset.","roles":["admin"],"parameters":{"type":"object"}}]`)
		r, out := runSelectCLI(t, srv.env(), "--catalog", catalog, "--task", umbrellaTask)
		require.Equal(t, exitFailed, r.code, r.stderr)
		require.NotNil(t, out.Error)
		assert.Equal(t, "no_eligible_tools", out.Error.Kind)
		assert.Contains(t, out.Error.Message, "1 unsafe")
		assert.Empty(t, out.Calls)
		assert.Empty(t, out.Offered)
		assert.Empty(t, srv.requests())
	})
	t.Run("a 5,000-deep rejected argument gives shallow output", func(t *testing.T) {
		deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
		srv := newChatServer(t, func(string) chatReply {
			return chatReply{content: `{"calls":[{"tool":"get_weather","args":{"city":"Lyon","x":` + deep + `}}]}`}
		})
		r, out := runSelectCLI(t, srv.env(), "--catalog", assistantCatalog(t), "--task", umbrellaTask)
		require.Equal(t, exitFailed, r.code, r.stderr)
		assert.Equal(t, "fail_closed", out.Error.Kind)
		assert.Contains(t, r.stdout, "nests deeper than 64 levels")
		assert.Less(t, strings.Count(r.stdout, "["), 200)
	})
}
