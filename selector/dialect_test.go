package selector

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/rank"
)

func TestDetectProvider(t *testing.T) {
	for _, tc := range []struct {
		url, model string
		want       Provider
	}{
		{"", "gpt-4o-mini", ProviderOpenAI},
		{"https://api.openai.com/v1", "o3-mini", ProviderOpenAI},
		{"https://my-res.openai.azure.com/openai/v1", "gpt-5", ProviderAzure},
		{"https://my-res.cognitiveservices.azure.com/openai/v1", "gpt-4o-mini", ProviderAzure},
		{"http://127.0.0.1:9000/openai/deployments/gpt-4o?api-version=2024-10-21", "gpt-4o", ProviderAzure}, // the classic URL's path is Azure's own
		{"https://generativelanguage.googleapis.com/v1beta/openai/", "gemini-2.5-flash", ProviderGemini},
		{"http://127.0.0.1:9000/v1beta/openai", "x", ProviderGemini}, // a tunnel to Gemini: only Google uses the path
		{"https://api.anthropic.com/v1/", "claude-sonnet-4-5", ProviderAnthropic},
		{"https://llm.example.com/v1", "anthropic/claude-opus-4-7", ProviderAnthropic}, // Claude behind a gateway
		{"https://llm.example.com/v1", "anthropic.claude-3-7-sonnet-20250219-v1:0", ProviderAnthropic},
		{"https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4.5", ProviderOpenRouter}, // the host wins
		{"https://api.deepseek.com", "deepseek-v4-flash", ProviderDeepSeek},
		{"https://api.z.ai/api/paas/v4", "glm-4.5-air", ProviderZAI},
		{"https://open.bigmodel.cn/api/paas/v4", "glm-4.6", ProviderZAI},
		{"https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "qwen-plus", ProviderQwen},
		{"https://openrouter.ai/api/v1", "deepseek/deepseek-chat", ProviderOpenRouter},
		{"https://api.mistral.ai/v1", "magistral-medium-2509", ProviderMistral},
		{"https://api.moonshot.ai/v1", "kimi-k2.6", ProviderMoonshot},
		{"https://api.moonshot.cn/v1", "kimi-k3", ProviderMoonshot},
		{"https://api.kimi.com/coding/v1", "kimi-for-coding", ProviderMoonshot},
		{"https://llm.example.com/v1", "kimi-k3", ProviderMoonshot}, // a known family at an unknown host: its switches, adapt-once behind them
		{"https://llm.example.com/v1", "openai/gpt-oss-120b", providerGPTOSS},
		{"https://bedrock-runtime.us-west-2.amazonaws.com/openai/v1", "openai.gpt-oss-120b-1:0", providerGPTOSS}, // Bedrock's vendor prefix
		{"https://llm.example.com/v1", "models/gemini-2.5-flash", ProviderGemini},
		{"https://llm.example.com/v1", "deepseek-ai/DeepSeek-V4-Flash", ProviderDeepSeek},
		{"https://llm.example.com/v1", "glm-4-9b-chat", ProviderGeneric}, // GLM before 4.5 does not think
		{"https://llm.example.com/v1", "llama-3.3-70b", ProviderGeneric},
		{"http://localhost:11434/v1", "qwen3:4b", ProviderOllama},
		{"http://127.0.0.1:1234/v1", "qwen/qwen3-4b", ProviderLMStudio},
		{"http://gpu-box:8000/v1", "Qwen/Qwen3-8B", ProviderVLLM},  // the port decides nothing; the family does
		{"https://llm.example.com/v1", "o4-mini", ProviderOpenAI},  // a gateway in front of OpenAI's reasoning model
		{"https://llm.example.com/v1", "glm-4.5-air", ProviderZAI}, // the family's switch
		{"https://example.com:11434/v1", "x", ProviderGeneric},     // a public host on Ollama's port is not Ollama
	} {
		assert.Equal(t, tc.want, detectProvider(tc.url, tc.model), "%s %s", tc.url, tc.model)
	}
	assert.True(t, isOpenAIReasoningModel("openai/o3-mini"))
	assert.False(t, isOpenAIReasoningModel("gpt-5-chat-latest"))
	assert.False(t, isOpenAIReasoningModel("o1x"))
	assert.Equal(t, "none", openAIReasoningEffort("gpt-5.1"))
	assert.Equal(t, "minimal", openAIReasoningEffort("gpt-5-nano"))
	assert.Equal(t, "low", openAIReasoningEffort("o4-mini"))
}

// A 400 that names nothing the selector sent stays a failure: no retry.
func TestAdaptOnlyWhatTheServerNames(t *testing.T) {
	learned.Clear()
	ws := newWire(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "The model `nope` does not exist"}})
	})
	sel := wireSelector(t, ws, nil)
	res, err := sel.Select(context.Background(), testRequest(t))
	require.Error(t, err)
	assert.Len(t, ws.requests(), 2, "primary and fallback once each: nothing adapted")
	for _, a := range res.Attempts {
		assert.Equal(t, KindHTTPStatus, a.Kind)
		assert.Empty(t, a.Adapted)
	}
}

// An adaptation retries the same model inside the attempt: it is not a
// fallback, and the fallback model is not asked.
func TestAdaptationIsNotAFallback(t *testing.T) {
	learned.Clear()
	ws := newWire(t, func(w http.ResponseWriter, _ *http.Request, raw []byte) {
		var body map[string]any
		require.NoError(t, json.Unmarshal(raw, &body))
		if _, ok := body["temperature"]; ok {
			writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "Unsupported parameter: 'temperature' is not supported with this model.", "param": "temperature"}})
			return
		}
		completion(w, validReply)
	})
	sel := wireSelector(t, ws, nil)
	res, err := sel.Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	require.Len(t, res.Attempts, 1)
	assert.True(t, res.Attempts[0].OK)
	assert.Equal(t, []string{"temperature: omitted"}, res.Attempts[0].Adapted)
	reqs := ws.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, reqs[0]["model"], reqs[1]["model"])
	assert.Equal(t, "primary", reqs[1]["model"])
}

// With thinking on, DeepSeek requires every earlier assistant turn's
// reasoning_content back in a tool loop: a native search round continues the
// conversation with the turn that asked for the search, its reasoning, and
// the note as the tool's answer.
func TestDeepSeekSearchRoundReplaysReasoning(t *testing.T) {
	learned.Clear()
	reg := assistantRegistry(t)
	var bodies []map[string]any
	ws := newWire(t, func(w http.ResponseWriter, _ *http.Request, raw []byte) {
		var body map[string]any
		require.NoError(t, json.Unmarshal(raw, &body))
		bodies = append(bodies, body)
		msgs := body["messages"].([]any)
		for _, m := range msgs {
			mm := m.(map[string]any)
			if mm["role"] == "assistant" && mm["tool_calls"] != nil && mm["reasoning_content"] == nil {
				writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "Missing `reasoning_content` field in the assistant message"}})
				return
			}
		}
		name, args := SearchToolName, `{"query":"weather forecast rain"}`
		if len(msgs) > 2 {
			name, args = "get_weather", `{"city":"Lyon","days":2}`
		}
		writeJSON(w, 200, map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{
				"role": "assistant", "content": "", "reasoning_content": "The catalog lacks a weather tool; search.",
				"tool_calls": []any{map[string]any{"id": "call_7", "type": "function",
					"function": map[string]any{"name": name, "arguments": args}}}}}},
			"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 10}})
	})
	sel := wireSelector(t, ws, func(c *Config) {
		c.Mode, c.OfferTokens, c.TopK, c.Provider, c.Reasoning = ModeNative, 300, 3, ProviderDeepSeek, ReasoningHigh
	}, withRanker(&rank.Offering{}))
	res, err := sel.Select(context.Background(), umbrellaRequest(reg))
	require.NoError(t, err)
	require.Len(t, res.Calls, 1)
	assert.Equal(t, "get_weather", res.Calls[0].Tool)
	require.Len(t, bodies, 2)
	assert.Equal(t, map[string]any{"type": "enabled"}, bodies[1]["thinking"])
	msgs := bodies[1]["messages"].([]any)
	require.Len(t, msgs, 4, "system, user, the assistant turn, the tool's answer")
	asst, tool := msgs[2].(map[string]any), msgs[3].(map[string]any)
	assert.Equal(t, "assistant", asst["role"])
	assert.Equal(t, "The catalog lacks a weather tool; search.", asst["reasoning_content"])
	assert.Equal(t, SearchToolName, asst["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["name"])
	assert.Equal(t, "tool", tool["role"])
	assert.Equal(t, "call_7", tool["tool_call_id"])
	assert.Contains(t, tool["content"], "weather forecast rain")
	assert.Equal(t, "deepseek", res.Attempts[0].Dialect)
}

// Thinking off (the default): the search round starts a new request, as for
// every other dialect, so no reasoning is sent back.
func TestDeepSeekThinkingOffNoReplay(t *testing.T) {
	learned.Clear()
	reg := assistantRegistry(t)
	ws := newWire(t, weatherModel(t, true, false))
	sel := wireSelector(t, ws, func(c *Config) {
		c.Mode, c.OfferTokens, c.TopK, c.Provider = ModeNative, 300, 3, ProviderDeepSeek
	}, withRanker(&rank.Offering{}))
	_, err := sel.Select(context.Background(), umbrellaRequest(reg))
	require.NoError(t, err)
	reqs := ws.requests()
	require.Len(t, reqs, 2)
	assert.Len(t, reqs[1]["messages"].([]any), 2)
	assert.Equal(t, map[string]any{"type": "disabled"}, reqs[1]["thinking"])
}

// go-openai's own refusals are configuration errors naming the setting.
func TestGoOpenAIChecksAreConfigErrors(t *testing.T) {
	learned.Clear()
	ws := newWire(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { completion(w, validReply) })
	// gpt-6-astra: go-openai refuses native tools with reasoning on before sending.
	sel := wireSelector(t, ws, func(c *Config) {
		c.Model, c.FallbackModel, c.Mode, c.Provider, c.Reasoning = "gpt-6-astra", "", ModeNative, ProviderGeneric, ReasoningProvider
	})
	res, err := sel.Select(context.Background(), testRequest(t))
	require.Error(t, err)
	assert.Equal(t, KindConfig, res.Attempts[0].Kind, res.Attempts[0].Message)
	assert.Contains(t, res.Attempts[0].Message, envOf("mode"))
	assert.Empty(t, ws.requests(), "refused before sending")
}

// A provider the caller names is taken as said: an explicit generic sends
// the plain request even for a model named like OpenAI's reasoning models,
// while auto still recognises them (the caller knows its endpoint best).
func TestExplicitGenericIsGeneric(t *testing.T) {
	for _, model := range []string{"o3-mini", "gpt-5-mini", "openai/o4-mini"} {
		d := dialectFor(&Config{Settings: Settings{Provider: ProviderGeneric, BaseURL: "https://llm.example.com/v1"}}, model)
		assert.Equal(t, "generic", d.name, model)
		assert.True(t, d.plain, model)
		assert.Equal(t, temperatureSend, d.temperature, model)
		assert.Nil(t, d.thinking, model)
		auto := dialectFor(&Config{Settings: Settings{BaseURL: "https://llm.example.com/v1"}}, model)
		assert.Equal(t, "openai-reasoning", auto.name, model)
	}
}

// go-openai's other refusals are configuration errors too, naming the
// setting, and nothing is sent: a completions-only model (davinci), and a
// temperature a reasoning model cannot take when the caller named generic.
func TestGoOpenAIRefusalsNameTheSetting(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mut     func(*Config)
		setting string
	}{
		{"completions-only model", func(c *Config) { c.Model = "davinci" }, envOf("model")},
		{"completions-only model ada", func(c *Config) { c.Model = "ada" }, envOf("fallback_model")},
		{"temperature for a reasoning model", func(c *Config) {
			c.Model, c.Provider, c.Temperature = "o3-mini", ProviderGeneric, 0.5
		}, envOf("temperature")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			learned.Clear()
			ws := newWire(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { completion(w, validReply) })
			sel := wireSelector(t, ws, func(c *Config) { c.FallbackModel = ""; tc.mut(c) })
			res, err := sel.Select(context.Background(), testRequest(t))
			require.Error(t, err)
			a := res.Attempts[0]
			assert.Equal(t, KindConfig, a.Kind, a.Message)
			assert.Contains(t, a.Message, tc.setting)
			assert.Contains(t, a.Message, "refused before sending")
			assert.NotContains(t, a.Message, "transport")
			assert.Empty(t, ws.requests(), "refused before sending")
		})
	}
}

// go-openai checks the request that goes out: gpt-6-sol with reasoning off
// carries reasoning_effort "none", which go-openai accepts with native tools
// (it refused them when it saw no effort); gpt-6-astra takes no "none", so
// its lowest setting is "low".
func TestGoOpenAISeesTheReasoningEffortSent(t *testing.T) {
	for _, tc := range []struct {
		model, effort string
		mode          Mode
	}{
		{"gpt-6-sol", "none", ModeNative},
		{"gpt-6-astra", "low", ModeJSON},
		{"gpt-6.1-sol", "low", ModeJSON},
	} {
		t.Run(tc.model, func(t *testing.T) {
			learned.Clear()
			ws := newWire(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { completion(w, `{"calls":[]}`) })
			sel := wireSelector(t, ws, func(c *Config) {
				c.Model, c.FallbackModel, c.Mode, c.Provider = tc.model, "", tc.mode, ProviderOpenAI
			})
			res, err := sel.Select(context.Background(), testRequest(t))
			require.NoError(t, err, "%+v", res)
			reqs := ws.requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, tc.effort, reqs[0]["reasoning_effort"])
			assert.NotContains(t, reqs[0], "temperature")
		})
	}
}

// A 400 that asks for reasoning_content back (DeepSeek, thinking on, a tool
// loop without it) names no field toolselect sent: it is not adapted to,
// though it says "thinking" and "reasoning".
func TestAdaptToIgnoresReasoningContentRequests(t *testing.T) {
	req := &ChatRequest{ExtraBody: map[string]json.RawMessage{"thinking": json.RawMessage(`{"type":"enabled"}`)},
		Params: map[string]json.RawMessage{"reasoning_effort": json.RawMessage(`"high"`)}, OmitTemperature: true}
	_, ok := adaptTo("The `reasoning_content` in the thinking mode must be passed back to the API.", req, 0)
	assert.False(t, ok)
	_, ok = adaptTo("Missing `reasoning_content` field in the assistant message at message index 2.", req, 0)
	assert.False(t, ok)
	a, ok := adaptTo(`"deepseek-x" does not support thinking`, req, 0)
	assert.True(t, ok)
	assert.Equal(t, adaptNoReasoning, a)
}

// Each dialect's default token limit (docs/providers.md, "Token limits"):
// none for the plain request (generic stays byte for byte as it was, and
// OpenAI's chat models keep the server's limit); room for reasoning where
// the model reasons; MAX_TOKENS, when set, wins.
func TestDefaultTokenLimits(t *testing.T) {
	for _, tc := range []struct {
		provider Provider
		model    string
		field    string
		want     int
	}{
		{ProviderGeneric, "llama3", "max_tokens", 0},
		{ProviderOpenAI, "gpt-4o-mini", "max_completion_tokens", 0},
		{ProviderOpenAI, "o3-mini", "max_completion_tokens", 25000},
		{ProviderOpenAI, "gpt-5-mini", "max_completion_tokens", 25000},
		{ProviderDeepSeek, "deepseek-v4-flash", "max_tokens", 32768},
		{ProviderZAI, "glm-4.5-air", "max_tokens", 32768},
		{ProviderOllama, "qwen3:4b", "max_tokens", 0},
		{ProviderVLLM, "Qwen/Qwen3-8B", "max_tokens", 0},
		{ProviderLMStudio, "qwen/qwen3-4b", "max_tokens", 0},
		{ProviderMistral, "magistral-small", "max_tokens", 0},
		{ProviderAnthropic, "claude-haiku-4-5", "max_tokens", 0}, // no thinking asked, no limit of its own
	} {
		for _, maxTokens := range []int{0, 700} {
			cfg := &Config{Settings: Settings{Provider: tc.provider, MaxTokens: maxTokens}}
			req := &ChatRequest{Model: tc.model, ResponseFormat: "json_object"}
			shape(cfg, req, callsFormat(false), 0)
			want := tc.want
			if maxTokens > 0 {
				want = maxTokens
			}
			other := otherTokenField(tc.field)
			assert.NotContains(t, req.Params, other, "%s %s", tc.provider, tc.model)
			if want == 0 {
				assert.NotContains(t, req.Params, tc.field, "%s %s", tc.provider, tc.model)
				continue
			}
			assert.Equal(t, fmt.Sprint(want), string(req.Params[tc.field]), "%s %s max_tokens=%d", tc.provider, tc.model, maxTokens)
		}
	}
}

// A reply cut at a dialect's default limit names it, and how to set another.
func TestTruncatedNamesTheDefaultLimit(t *testing.T) {
	s := newSel(t, nil, cfgWith(func(c *Config) { c.Provider, c.Model, c.FallbackModel = ProviderZAI, "glm-4.5-air", "" }))
	ss, err := s.Begin(context.Background(), testRequest(t))
	require.NoError(t, err)
	act := ss.Feed(context.Background(), ChatResponse{Reasoning: "thinking...", FinishReason: "length", CompletionTokens: 32768}, nil)
	require.Error(t, act.Err)
	a := act.Result.Attempts[0]
	assert.Equal(t, KindTruncated, a.Kind)
	assert.Contains(t, a.Message, "32768 tokens (the zai dialect's default; "+envOf("max_tokens")+" sets another)")
	assert.Contains(t, a.Message, "after 32768 completion tokens")
}

// The temperature's three modes (send, omit, only 1), in one table: Kimi's
// thinking models take only 1 and get it; Kimi K2.5/K2.6 without thinking
// have it fixed (0.6) and get none; OpenAI's reasoning models get none.
func TestTemperatureModes(t *testing.T) {
	for _, tc := range []struct {
		provider  Provider
		model     string
		reasoning Reasoning
		want      string // "send", "omit", "1"
		thinking  string // the thinking/effort fields sent, as JSON
	}{
		{ProviderGeneric, "llama3", "", "send", `{}`},
		{ProviderOpenAI, "o3-mini", "", "omit", `{"reasoning_effort":"low"}`},
		{ProviderAzure, "o3-mini", "", "omit", `{"reasoning_effort":"low"}`},
		{ProviderAzure, "gpt-4o-mini", "", "send", `{}`},
		{ProviderGemini, "gemini-2.5-flash", "", "send", `{"reasoning_effort":"none"}`},
		{ProviderGemini, "gemini-2.5-pro", ReasoningHigh, "send", `{"reasoning_effort":"high"}`},
		{ProviderGemini, "gemini-2.5-flash", ReasoningProvider, "send", `{}`},
		{providerGPTOSS, "gpt-oss-20b", "", "send", `{"reasoning_effort":"low"}`},
		{providerGPTOSS, "gpt-oss-20b", ReasoningMedium, "send", `{"reasoning_effort":"medium"}`},
		{ProviderMoonshot, "kimi-k3", "", "1", `{"reasoning_effort":"low"}`},
		{ProviderMoonshot, "kimi-k3.1-pro", ReasoningHigh, "1", `{"reasoning_effort":"high"}`},
		{ProviderMoonshot, "kimi-for-coding", "", "1", `{"reasoning_effort":"low"}`},
		{ProviderMoonshot, "kimi-k2.7-code", "", "1", `{}`},
		{ProviderMoonshot, "kimi-k2.6", "", "omit", `{"thinking":{"type":"disabled"}}`},
		{ProviderMoonshot, "kimi-k2.5", ReasoningLow, "1", `{"thinking":{"type":"enabled"}}`},
		{ProviderMoonshot, "kimi-k2.5", ReasoningProvider, "1", `{}`},
		{ProviderMoonshot, "kimi-k2-0905-preview", "", "send", `{}`},
		{ProviderMoonshot, "moonshot-v1-8k", "", "send", `{}`},
		{ProviderAnthropic, "claude-sonnet-4-5", "", "send", `{}`}, // Claude thinks only when asked
		{ProviderAnthropic, "claude-sonnet-4-5", ReasoningLow, "1", `{"thinking":{"type":"enabled","budget_tokens":1024}}`},
		{ProviderAnthropic, "claude-3-7-sonnet-20250219", ReasoningHigh, "1", `{"thinking":{"type":"enabled","budget_tokens":16384}}`},
		{ProviderAnthropic, "claude-opus-4-6", ReasoningMedium, "1", `{"thinking":{"type":"adaptive"}}`},
		{ProviderAnthropic, "claude-opus-4-7", "", "omit", `{}`},
		{ProviderAnthropic, "claude-opus-4-7", ReasoningLow, "omit", `{"thinking":{"type":"adaptive"}}`},
		{ProviderAnthropic, "claude-opus-5", "", "omit", `{"thinking":{"type":"disabled"}}`}, // Opus 5 thinks by default
		{ProviderAnthropic, "claude-opus-5", ReasoningProvider, "omit", `{}`},
	} {
		cfg := &Config{Settings: Settings{Provider: tc.provider, Reasoning: tc.reasoning, Temperature: 0.2}}
		req := &ChatRequest{Model: tc.model, Temperature: cfg.Temperature, ResponseFormat: "json_object"}
		shape(cfg, req, callsFormat(false), 0)
		switch tc.want {
		case "omit":
			assert.True(t, req.OmitTemperature, tc.model)
		case "1":
			assert.False(t, req.OmitTemperature, tc.model)
			assert.Equal(t, 1.0, req.Temperature, tc.model)
		default:
			assert.False(t, req.OmitTemperature, tc.model)
			assert.Equal(t, 0.2, req.Temperature, tc.model)
		}
		got := map[string]json.RawMessage{}
		for _, k := range reasoningKeys {
			if v, ok := req.Params[k]; ok {
				got[k] = v
			}
			if v, ok := req.ExtraBody[k]; ok {
				got[k] = v
			}
		}
		b, _ := json.Marshal(got)
		assert.JSONEq(t, tc.thinking, string(b), "%s %s", tc.model, tc.reasoning)
	}
}

// Claude's generation, as its names spell it, decides the Anthropic rules.
func TestClaudeVersion(t *testing.T) {
	for name, want := range map[string]int{
		"claude-opus-4-7": 47, "claude-opus-4.7": 47, "anthropic/claude-opus-4-7": 47,
		"claude-3-7-sonnet-20250219": 37, "claude-3-5-haiku-latest": 35, "claude-opus-4-20250514": 40,
		"claude-sonnet-4-5-20250929": 45, "claude-haiku-4-5@20251001": 45, "anthropic.claude-opus-4-6-v1:0": 46,
		"claude-sonnet-5": 50, "claude-opus-5-5": 55, "claude-instant-1.2": 12,
	} {
		v, ok := claudeVersion(name)
		assert.True(t, ok, name)
		assert.Equal(t, want, v, name)
	}
	_, ok := claudeVersion("claude-sonnet-latest")
	assert.False(t, ok)
	// A configured limit bounds the budget: half of it, at least the API's 1024.
	d := anthropicDialect(ReasoningHigh, 6000, "claude-sonnet-4-5")
	assert.Equal(t, map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 3000}}, d.thinking(ReasoningHigh, ""))
	limit, _ := tokenLimit(&Config{}, anthropicDialect(ReasoningMedium, 0, "claude-sonnet-4-5"))
	assert.Equal(t, 4096+anthropicAnswerRoom, limit, "the budget plus room for the answer")
	limit, _ = tokenLimit(&Config{}, anthropicDialect(ReasoningOff, 0, "claude-sonnet-4-5"))
	assert.Zero(t, limit, "no thinking, no limit of its own")
}

// A caller's own client whose base URL is unknown (Config.OwnClient, no
// BaseURL): the model name decides, then generic, never api.openai.com's
// dialect; and each such selector learns for itself (two unknown endpoints
// may behave differently).
func TestOwnClientUnknownEndpoint(t *testing.T) {
	own := &Config{OwnClient: true}
	assert.Equal(t, "deepseek", dialectFor(own, "deepseek-v4-flash").name, "a known family by its name")
	assert.Equal(t, "generic", dialectFor(own, "gpt-4o-mini").name)
	assert.Equal(t, "openai-reasoning", dialectFor(own, "o3-mini").name)
	assert.Equal(t, "openai", dialectFor(&Config{}, "gpt-4o-mini").name, "the built-in client's empty base URL is api.openai.com")
	known := &Config{Settings: Settings{BaseURL: "https://api.deepseek.com"}, OwnClient: true}
	assert.Equal(t, "deepseek", dialectFor(known, "deepseek-v4-flash").name)
	named := &Config{Settings: Settings{Provider: ProviderZAI}, OwnClient: true}
	assert.Equal(t, "zai", dialectFor(named, "glm-4.5-air").name)

	a, err := New(nil, &Config{OwnClient: true})
	require.NoError(t, err)
	b, err := New(nil, &Config{OwnClient: true})
	require.NoError(t, err)
	ka, kb := a.cfg.learnKey(), b.cfg.learnKey()
	assert.NotEqual(t, ka, kb, "two unknown endpoints learn apart")
	assert.NotEqual(t, "", ka)
	c, err := New(nil, &Config{Settings: Settings{BaseURL: "https://api.deepseek.com"}, OwnClient: true})
	require.NoError(t, err)
	assert.Equal(t, "https://api.deepseek.com", c.cfg.learnKey(), "a known endpoint is learned for by its URL")
}

// One vocabulary for adaptations (so a log reads the same either way): what an attempt
// records when it adapts is what a later attempt records when it starts
// from what was learned, with "learned earlier: " in front (it was "token
// limit field swapped" and "reasoning control: omitted" before).
func TestAdaptationNamesOneVocabulary(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refuses string // a request field the server answers 400 for
		message string
		mut     func(*Config)
		want    []string
	}{
		{"token field", "max_completion_tokens", "Unsupported parameter: 'max_completion_tokens'",
			func(c *Config) { c.Provider, c.Model, c.MaxTokens = ProviderOpenAI, "gpt-4o-mini", 300 },
			[]string{"max_completion_tokens -> max_tokens"}},
		{"thinking switch", "thinking", "Unrecognized request argument supplied: thinking",
			func(c *Config) { c.Provider, c.Model = ProviderDeepSeek, "deepseek-v4-flash" },
			[]string{"thinking: omitted"}},
		{"thinking and effort", "thinking", "thinking is not supported",
			func(c *Config) {
				c.Provider, c.Model, c.Reasoning = ProviderDeepSeek, "deepseek-v4-flash", ReasoningHigh
			},
			[]string{"reasoning_effort: omitted", "thinking: omitted"}},
		{"temperature", "temperature", "Unsupported parameter: 'temperature'",
			func(c *Config) {}, []string{"temperature: omitted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			learned.Clear()
			ws := newWire(t, func(w http.ResponseWriter, _ *http.Request, raw []byte) {
				var body map[string]any
				require.NoError(t, json.Unmarshal(raw, &body))
				if _, ok := body[tc.refuses]; ok {
					writeJSON(w, 400, map[string]any{"error": map[string]any{"message": tc.message}})
					return
				}
				completion(w, validReply)
			})
			sel := wireSelector(t, ws, func(c *Config) { c.FallbackModel = ""; tc.mut(c) })
			res, err := sel.Select(context.Background(), testRequest(t))
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Attempts[0].Adapted)
			res, err = sel.Select(context.Background(), testRequest(t))
			require.NoError(t, err)
			var want []string
			for _, w := range tc.want {
				want = append(want, "learned earlier: "+w)
			}
			assert.Equal(t, want, res.Attempts[0].Adapted)
		})
	}
}

// A temperature the caller set that the dialect does not send is said, not
// dropped in silence.
func TestUnsentTemperatureIsLogged(t *testing.T) {
	for _, tc := range []struct {
		provider Provider
		model    string
		temp     float64
		warned   bool
	}{
		{ProviderOpenAI, "o3-mini", 0.5, true},
		{ProviderMoonshot, "kimi-k3", 0.3, true},
		{ProviderMoonshot, "kimi-k3", 1, false},
		{ProviderOpenAI, "o3-mini", 0, false}, // the default: nothing was asked
		{ProviderGeneric, "llama3", 0.5, false},
	} {
		var buf strings.Builder
		logger := slog.New(slog.NewTextHandler(&buf, nil))
		s := newSel(t, nil, cfgWith(func(c *Config) {
			c.Provider, c.Model, c.Temperature, c.FallbackModel = tc.provider, tc.model, tc.temp, ""
		}), withLogger(logger))
		_, err := s.Begin(context.Background(), testRequest(t))
		require.NoError(t, err)
		assert.Equal(t, tc.warned, strings.Contains(buf.String(), "the configured temperature is not sent"), "%s %v: %s", tc.model, tc.temp, buf.String())
		if tc.warned {
			assert.Contains(t, buf.String(), envOf("temperature"))
		}
	}
}
