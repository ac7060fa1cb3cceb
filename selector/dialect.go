package selector

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Provider picks a provider dialect (Config.Provider,
// LLM_COMMON_TOOL_SELECTION_PROVIDER): what a request carries and how a reply
// is read. ProviderAuto decides from the base URL's host, then the model name.
type Provider string

// The providers. docs/providers.md gives each one's rules and their sources.
const (
	ProviderAuto       Provider = "auto"
	ProviderGeneric    Provider = "generic"
	ProviderOpenAI     Provider = "openai"
	ProviderDeepSeek   Provider = "deepseek"
	ProviderZAI        Provider = "zai"
	ProviderQwen       Provider = "qwen"
	ProviderVLLM       Provider = "vllm"
	ProviderOllama     Provider = "ollama"
	ProviderLMStudio   Provider = "lmstudio"
	ProviderLlamaCpp   Provider = "llamacpp"
	ProviderOpenRouter Provider = "openrouter"
	ProviderMistral    Provider = "mistral"
	ProviderMoonshot   Provider = "moonshot"
	ProviderGemini     Provider = "gemini"
	ProviderAzure      Provider = "azure"
	ProviderAnthropic  Provider = "anthropic"
)

// Providers lists every Provider value, auto first.
var providers = []Provider{ProviderAuto, ProviderGeneric, ProviderOpenAI, ProviderDeepSeek, ProviderZAI, ProviderQwen,
	ProviderVLLM, ProviderOllama, ProviderLMStudio, ProviderLlamaCpp, ProviderOpenRouter, ProviderMistral, ProviderMoonshot,
	ProviderGemini, ProviderAzure, ProviderAnthropic}

// Reasoning says how much a model may think before it selects
// (Config.Reasoning, LLM_COMMON_TOOL_SELECTION_REASONING). Selection is a
// short, structured answer: thinking spends the token budget and the time,
// so it is off unless asked for.
type Reasoning string

// The reasoning levels.
const (
	// ReasoningOff maps to each dialect's lowest setting (off where it can be turned off). The default.
	ReasoningOff Reasoning = "off"
	// ReasoningLow, ReasoningMedium and ReasoningHigh ask for that much thinking where the dialect has a control.
	ReasoningLow    Reasoning = "low"
	ReasoningMedium Reasoning = "medium"
	ReasoningHigh   Reasoning = "high"
	// ReasoningProvider sends no reasoning control: the provider's default applies.
	ReasoningProvider Reasoning = "provider"
)

var reasoningLevels = []Reasoning{ReasoningOff, ReasoningLow, ReasoningMedium, ReasoningHigh, ReasoningProvider}

// dialect is one row of the dialect table: what a request to a provider
// carries, and what its replies need. Every rule cites its source in
// testdata/providers/ and docs/providers.md.
type dialect struct {
	// name is what attempts and spans report: the provider, or
	// "openai-reasoning" for OpenAI's reasoning models.
	name string
	// plain: the request is the plain OpenAI chat request (generic, and
	// OpenAI's chat models); records and actions then name no dialect, so
	// they read as they did before dialects existed.
	plain bool
	// temperature says what becomes of the configured temperature.
	temperature temperatureMode
	// tokenField carries Config.MaxTokens: "max_tokens" or "max_completion_tokens".
	tokenField string
	// defaultLimit is the token limit sent when Config.MaxTokens is 0: room
	// for the reasoning the model may do and the answer. 0 sends none, so the
	// server's own limit applies (the generic request stays as it was).
	defaultLimit int
	// jsonSchema: JSON mode asks with response_format json_schema (the calls
	// schema) instead of json_object, which the server refuses.
	jsonSchema bool
	// thinking returns the request fields that set the reasoning level for
	// model (nil: the dialect has no control, send nothing).
	thinking func(level Reasoning, model string) map[string]any
	// replayReasoning: with thinking on, a continued conversation must send
	// each earlier assistant turn's reasoning_content back (DeepSeek).
	replayReasoning bool
	// noFormatWhenThinking: structured output is refused in thinking mode
	// (DashScope), so JSON mode sends no response_format while thinking.
	noFormatWhenThinking bool
}

// The default token limits (docs/providers.md, "Token limits"). A limit
// caps the reply; it allocates nothing, so a generous one costs nothing
// when the model answers briefly, and it names the limit when a reply is cut.
const (
	// reasoningRoom is OpenAI's advice for its reasoning models: "reserve
	// at least 25,000 tokens for reasoning and outputs" (the reasoning guide).
	reasoningRoom = 25000
	// thinkingRoom is for providers whose models think by default or always
	// (DeepSeek, Z.ai GLM, Moonshot Kimi), whose own default limit is model
	// dependent, and for Kimi low when none is sent: 32,768, the limit
	// Moonshot's own example sends, within every one of their models'
	// maximum output (GLM-4.5 96K, DeepSeek V4 384K).
	thinkingRoom = 32768
)

// temperatureMode is a dialect's rule for the temperature, one of the three
// that providers follow: send, omit, or only 1.
type temperatureMode uint8

const (
	// temperatureSend sends the configured temperature.
	temperatureSend temperatureMode = iota
	// temperatureOmit sends none: the model takes only its own (OpenAI's
	// reasoning models refuse the field; Kimi K2.5/K2.6 without thinking
	// fix it at 0.6).
	temperatureOmit
	// temperatureOne sends 1, the one value the model takes (Moonshot's Kimi
	// models that think: "invalid temperature: only 1 is allowed for this
	// model"). Sent rather than omitted, so that a caller's own client that
	// fills in its own default when none is passed sends 1 too.
	temperatureOne
)

// effort is the usual low/medium/high mapping of a level that is not off.
func effort(level Reasoning) string { return string(level) }

// openAIReasoningEffort is the lowest reasoning_effort each OpenAI reasoning
// family takes, for ReasoningOff: "none" from gpt-5.1 on, "minimal" for
// gpt-5, "low" for the o-series and for gpt-6-astra and gpt-6.1-sol, which
// take no "none" (go-openai's reasoning_validator.go refuses it for them).
func openAIReasoningEffort(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case strings.HasPrefix(m, "gpt-6-astra"), strings.HasPrefix(m, "gpt-6.1-sol"):
		return "low"
	case strings.HasPrefix(m, "gpt-5."), strings.HasPrefix(m, "gpt-6"):
		return "none"
	case strings.HasPrefix(m, "gpt-5"):
		return "minimal"
	}
	return "low"
}

// isOpenAIReasoningModel reports the OpenAI reasoning families: gpt-5*, o1*, o3*, o4*.
func isOpenAIReasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 { // "openai/o3-mini" behind a router
		m = m[i+1:]
	}
	if strings.HasPrefix(m, "gpt-5") || strings.HasPrefix(m, "gpt-6") {
		return !strings.Contains(m, "-chat") // gpt-5-chat-latest is a chat model
	}
	for _, p := range []string{"o1", "o3", "o4"} {
		if strings.HasPrefix(m, p) && (len(m) == 2 || m[2] == '-') {
			return true
		}
	}
	return false
}

// dialectFor returns the dialect of a request to model under cfg.
func dialectFor(cfg *Config, model string) dialect {
	p := cfg.provider()
	if p == ProviderAuto {
		p = detectProvider(cfg.BaseURL, model)
		if cfg.unknownEndpoint() {
			// Not api.openai.com: the caller's own client goes where we
			// cannot see. Only the model name can tell.
			p = detectModel(model)
		}
	}
	switch p {
	case ProviderOpenAI, ProviderAzure:
		// Azure OpenAI serves OpenAI's models under OpenAI's request rules;
		// what differs is the URL and the key's header (openai.go, azureClassic).
		if isOpenAIReasoningModel(model) {
			return dialect{name: "openai-reasoning", temperature: temperatureOmit, tokenField: "max_completion_tokens",
				defaultLimit: reasoningRoom,
				thinking: func(level Reasoning, model string) map[string]any {
					if level == ReasoningOff {
						return map[string]any{"reasoning_effort": openAIReasoningEffort(model)}
					}
					return map[string]any{"reasoning_effort": effort(level)}
				}}
		}
		return dialect{name: string(ProviderOpenAI), plain: true, tokenField: "max_completion_tokens"}
	case ProviderDeepSeek:
		return dialect{name: string(p), tokenField: "max_tokens", defaultLimit: thinkingRoom, replayReasoning: true, thinking: thinkingSwitch(true)}
	case ProviderZAI:
		return dialect{name: string(p), tokenField: "max_tokens", defaultLimit: thinkingRoom, thinking: thinkingSwitch(false)}
	case ProviderQwen:
		return dialect{name: string(p), tokenField: "max_tokens", noFormatWhenThinking: true,
			thinking: func(level Reasoning, _ string) map[string]any {
				return map[string]any{"enable_thinking": level != ReasoningOff}
			}}
	case ProviderVLLM, ProviderLlamaCpp:
		return dialect{name: string(p), tokenField: "max_tokens",
			thinking: func(level Reasoning, _ string) map[string]any {
				return map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": level != ReasoningOff}}
			}}
	case ProviderOllama:
		return dialect{name: string(p), tokenField: "max_tokens",
			thinking: func(level Reasoning, _ string) map[string]any {
				if level == ReasoningOff {
					return map[string]any{"reasoning_effort": "none"}
				}
				return map[string]any{"reasoning_effort": effort(level)}
			}}
	case ProviderLMStudio:
		return dialect{name: string(p), tokenField: "max_tokens", jsonSchema: true}
	case ProviderOpenRouter:
		return dialect{name: string(p), tokenField: "max_tokens",
			thinking: func(level Reasoning, _ string) map[string]any {
				if level == ReasoningOff {
					return map[string]any{"reasoning": map[string]any{"enabled": false}}
				}
				return map[string]any{"reasoning": map[string]any{"effort": effort(level)}}
			}}
	case ProviderMistral:
		return dialect{name: string(p), tokenField: "max_tokens"}
	case ProviderMoonshot:
		return moonshotDialect(cfg.reasoning(), model)
	case ProviderGemini:
		// Gemini's OpenAI-compatible endpoint: 2.5 Flash and later think by
		// default and count it against the limit; reasoning_effort "none"
		// turns thinking off where the model can (2.5 Pro and the 3 series
		// cannot: their 400 names thinking, and adapt-once drops the field).
		return dialect{name: string(p), tokenField: "max_tokens",
			thinking: func(level Reasoning, _ string) map[string]any {
				if level == ReasoningOff {
					return map[string]any{"reasoning_effort": "none"}
				}
				return map[string]any{"reasoning_effort": effort(level)}
			}}
	case ProviderAnthropic:
		return anthropicDialect(cfg.reasoning(), cfg.MaxTokens, model)
	case providerGPTOSS:
		// gpt-oss cannot stop reasoning; "low" is its least (the Harmony
		// format's "Reasoning: low"), and servers that host it take the
		// OpenAI field (vLLM, Ollama, Groq, OpenRouter).
		return dialect{name: string(p), tokenField: "max_tokens",
			thinking: func(level Reasoning, _ string) map[string]any {
				if level == ReasoningOff {
					return map[string]any{"reasoning_effort": "low"}
				}
				return map[string]any{"reasoning_effort": effort(level)}
			}}
	}
	// ProviderGeneric, named or detected: the plain request, whatever the
	// model is called. ProviderAuto already looked at the model name
	// (detectProvider); a provider the caller names is taken as said.
	return dialect{name: string(ProviderGeneric), plain: true, tokenField: "max_tokens"}
}

// moonshotDialect is Moonshot's Kimi API, whose rules depend on the model
// family (docs/providers.md, sources in testdata/providers/moonshot-*):
//
//   - kimi-k3* (and Kimi Code's k3*, kimi-for-coding) always reason:
//     reasoning_effort low, high or max (max when none is sent), no thinking
//     switch; temperature 1 only.
//   - kimi-k2.7-code* always think, with no control; temperature 1 only.
//   - kimi-k2.5*, kimi-k2.6* think unless {"thinking":{"type":"disabled"}};
//     the temperature is fixed, 1 while thinking and 0.6 without, so it is 1
//     while thinking and omitted otherwise.
//   - the rest (kimi-k2 series, kimi-k2-thinking, moonshot-v1) take the
//     temperature as configured.
func moonshotDialect(level Reasoning, model string) dialect {
	d := dialect{name: string(ProviderMoonshot), tokenField: "max_tokens", defaultLimit: thinkingRoom}
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case strings.HasPrefix(m, "kimi-k3"), strings.HasPrefix(m, "k3"), strings.HasPrefix(m, "kimi-for-coding"):
		d.temperature = temperatureOne
		d.thinking = func(level Reasoning, _ string) map[string]any {
			e := "low" // the lowest: thinking cannot be turned off
			if level == ReasoningMedium || level == ReasoningHigh {
				e = "high"
			}
			return map[string]any{"reasoning_effort": e}
		}
	case strings.HasPrefix(m, "kimi-k2.7-code"):
		d.temperature = temperatureOne
	case strings.HasPrefix(m, "kimi-k2.5"), strings.HasPrefix(m, "kimi-k2.6"):
		d.thinking = thinkingSwitch(false)
		d.temperature = temperatureOne
		if level == ReasoningOff {
			d.temperature = temperatureOmit
		}
	}
	return d
}

// Anthropic's extended thinking budgets (budget_tokens) per reasoning level:
// 1024 is the least the API takes, and a budget must stay below max_tokens.
var anthropicBudgets = map[Reasoning]int{ReasoningLow: 1024, ReasoningMedium: 4096, ReasoningHigh: 16384}

// anthropicAnswerRoom is what a thinking request's default limit keeps for
// the answer beyond the level's budget: 16384 + 4096 is within the output
// maximum of every Claude model that thinks (Claude Opus 4's 32,000 the least).
const anthropicAnswerRoom = 4096

// anthropicDialect is Anthropic's OpenAI SDK compatibility layer
// (api.anthropic.com/v1), whose rules depend on the Claude generation
// (claudeVersion; docs/providers.md, sources in testdata/providers/anthropic-*).
// reasoning_effort is ignored there; thinking is the documented extra_body
// field:
//
//   - before Claude 5, Claude thinks only when asked: off sends nothing;
//     Claude Opus 5 thinks by default, so off sends {"type":"disabled"}
//     (Opus 5.5 cannot stop: its 400 names thinking, and adapt-once drops it);
//   - low, medium and high send {"type":"enabled","budget_tokens":N} before
//     Claude 4.6, and {"type":"adaptive"} from 4.6 on (4.7 and later refuse
//     budgets), with a limit of the level's budget plus room for the answer
//     (a configured limit stays; the budget is then half of it at most);
//   - thinking takes temperature 1 only, and from Claude 4.7 on the
//     temperature is refused outright, so it is omitted.
//
// A Claude name without a version gets the rules before 4.6; adapt-once
// answers what they miss.
func anthropicDialect(level Reasoning, maxTokens int, model string) dialect {
	d := dialect{name: string(ProviderAnthropic), tokenField: "max_tokens"}
	v, _ := claudeVersion(model)
	budget, thinks := anthropicBudgets[level]
	switch {
	case thinks:
		d.temperature = temperatureOne
		d.defaultLimit = budget + anthropicAnswerRoom
		if maxTokens > 0 {
			budget = max(min(budget, maxTokens/2), anthropicBudgets[ReasoningLow])
		}
		thinking := map[string]any{"type": "enabled", "budget_tokens": budget}
		if v >= 46 {
			thinking = map[string]any{"type": "adaptive"}
		}
		d.thinking = func(Reasoning, string) map[string]any { return map[string]any{"thinking": thinking} }
	case level == ReasoningOff && v >= 50:
		d.thinking = func(Reasoning, string) map[string]any {
			return map[string]any{"thinking": map[string]any{"type": "disabled"}}
		}
	}
	if v >= 47 {
		d.temperature = temperatureOmit
	}
	return d
}

// claudeVersion reads a Claude model name's generation as major*10+minor
// (claude-opus-4-7 and claude-opus-4.7: 47; claude-3-7-sonnet-20250219: 37;
// claude-opus-4-20250514: 40; claude-sonnet-5: 50), after any org/ or
// vendor. part. ok is false for a name without one.
func claudeVersion(model string) (v int, ok bool) {
	m := strings.ToLower(model)
	i := strings.Index(m, "claude-")
	if i < 0 {
		return 0, false
	}
	parts := strings.FieldsFunc(m[i+len("claude-"):], func(r rune) bool { return r == '-' || r == '.' || r == '@' || r == ':' })
	small := func(s string) (int, bool) { // a version number, not a date
		n, err := strconv.Atoi(s)
		return n, err == nil && len(s) <= 2
	}
	for j, p := range parts {
		major, isNum := small(p)
		if !isNum {
			continue
		}
		minor := 0
		if j+1 < len(parts) {
			if n, isMinor := small(parts[j+1]); isMinor && n < 10 {
				minor = n
			}
		}
		return major*10 + minor, true
	}
	return 0, false
}

// thinkingSwitch is DeepSeek's and Z.ai's {"thinking":{"type":"enabled|disabled"}};
// withEffort adds reasoning_effort when thinking is on (DeepSeek).
func thinkingSwitch(withEffort bool) func(Reasoning, string) map[string]any {
	return func(level Reasoning, _ string) map[string]any {
		if level == ReasoningOff {
			return map[string]any{"thinking": map[string]any{"type": "disabled"}}
		}
		out := map[string]any{"thinking": map[string]any{"type": "enabled"}}
		if withEffort {
			out["reasoning_effort"] = effort(level)
		}
		return out
	}
}

// hostProviders maps a base URL's host (or a parent domain of it) to its provider.
var hostProviders = map[string]Provider{
	"api.openai.com":                    ProviderOpenAI,
	"openai.azure.com":                  ProviderAzure,
	"cognitiveservices.azure.com":       ProviderAzure,
	"generativelanguage.googleapis.com": ProviderGemini,
	"api.anthropic.com":                 ProviderAnthropic,
	"api.deepseek.com":                  ProviderDeepSeek,
	"api.z.ai":                          ProviderZAI,
	"open.bigmodel.cn":                  ProviderZAI,
	"dashscope.aliyuncs.com":            ProviderQwen,
	"dashscope-intl.aliyuncs.com":       ProviderQwen,
	"dashscope-us.aliyuncs.com":         ProviderQwen,
	"openrouter.ai":                     ProviderOpenRouter,
	"api.mistral.ai":                    ProviderMistral,
	"api.moonshot.ai":                   ProviderMoonshot,
	"api.moonshot.cn":                   ProviderMoonshot,
	"api.kimi.com":                      ProviderMoonshot,
}

// portProviders are local servers recognised by their documented default
// port (Ollama 11434, LM Studio 1234). Ports that many servers share (8000,
// 8080) decide nothing.
var portProviders = map[string]Provider{"11434": ProviderOllama, "1234": ProviderLMStudio}

// pathProviders are base URL paths only one provider uses, so that a
// gateway or a tunnel in front of it is still recognised: Gemini's
// OpenAI-compatible endpoint (/v1beta/openai) and Azure OpenAI's classic
// deployment URL (/openai/deployments/NAME).
var pathProviders = []struct {
	part     string
	provider Provider
}{
	{"/v1beta/openai", ProviderGemini},
	{"/openai/deployments/", ProviderAzure},
}

// detectProvider is ProviderAuto: the base URL's host (an empty base URL is
// api.openai.com), then a path only one provider uses, then its port for
// local servers; then the model name (detectModel); anything else is generic.
func detectProvider(baseURL, model string) Provider {
	if strings.TrimSpace(baseURL) == "" {
		return ProviderOpenAI
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return ProviderGeneric
	}
	host := strings.ToLower(u.Hostname())
	for h := host; h != ""; {
		if p, ok := hostProviders[h]; ok {
			return p
		}
		_, parent, ok := strings.Cut(h, ".")
		if !ok {
			break
		}
		h = parent
	}
	path := strings.ToLower(u.EscapedPath())
	for _, pp := range pathProviders {
		if strings.Contains(path+"/", pp.part) {
			return pp.provider
		}
	}
	if p, ok := portProviders[u.Port()]; ok && isLocalHost(host) {
		return p
	}
	return detectModel(model)
}

// providerGPTOSS is the dialect of OpenAI's open-weight gpt-oss models,
// which many servers host: reached by the model's name only (modelFamilies),
// never a Provider a caller names.
const providerGPTOSS Provider = "gpt-oss"

// modelFamilies are the model families recognised by name where the endpoint
// names no provider (a gateway, a proxy, a tunnel, a local server on a
// shared port, a caller's own client whose base URL is unknown): a model
// name starting with prefix (after any "org/" part, any case) gets that
// provider's switches, and adapt-once drops a field the server refuses.
// Sources in docs/providers.md ("How auto decides").
var modelFamilies = []struct {
	prefix   string
	provider Provider
	name     string // the family, in messages
}{
	{"deepseek", ProviderDeepSeek, "DeepSeek"},
	{"glm-4.5", ProviderZAI, "GLM"}, {"glm-4.6", ProviderZAI, "GLM"}, {"glm-4.7", ProviderZAI, "GLM"}, {"glm-5", ProviderZAI, "GLM"},
	{"qwen3", ProviderVLLM, "Qwen3"},
	{"kimi-", ProviderMoonshot, "Kimi"},
	{"gemini-", ProviderGemini, "Gemini"},
	{"gpt-oss", providerGPTOSS, "gpt-oss"},
	{"claude-", ProviderAnthropic, "Claude"},
}

// modelFamily returns the family a model name clearly belongs to, if any.
func modelFamily(model string) (provider Provider, name string, ok bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 { // "Qwen/Qwen3-8B", "models/gemini-2.5-flash"
		m = m[i+1:]
	}
	names := []string{m}
	if vendor, rest, ok := strings.Cut(m, "."); ok && vendor != "" && strings.Trim(vendor, "abcdefghijklmnopqrstuvwxyz") == "" {
		names = append(names, rest) // Amazon Bedrock's "openai.gpt-oss-120b-1:0", "deepseek.v3-v1:0"
	}
	for _, n := range names {
		for _, f := range modelFamilies {
			if strings.HasPrefix(n, f.prefix) {
				return f.provider, f.name, true
			}
		}
	}
	return "", "", false
}

// detectModel is ProviderAuto for an endpoint that names nothing: OpenAI's
// reasoning models and the known families (modelFamilies) by their name,
// anything else generic.
func detectModel(model string) Provider {
	if isOpenAIReasoningModel(model) {
		return ProviderOpenAI
	}
	if p, _, ok := modelFamily(model); ok {
		return p
	}
	return ProviderGeneric
}

func isLocalHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".local") || strings.HasSuffix(host, ".internal") || !strings.Contains(host, ".") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate())
}

// The adaptations a 400 may ask for, at most once each per attempt.
type adaptation uint8

const (
	adaptNoTemperature adaptation = 1 << iota
	adaptTokenField
	adaptJSONSchema
	adaptNoResponseFormat
	adaptNoReasoning
)

// reasoningKeys are the request fields a thinking control may set.
var reasoningKeys = []string{"reasoning_effort", "thinking", "enable_thinking", "chat_template_kwargs", "reasoning"}

// learned remembers, for the process's life, the adaptations each base URL
// and model needed: key baseURL + "\n" + model.
var learned sync.Map

func learnedKey(baseURL, model string) string { return baseURL + "\n" + model }

func learnedFor(baseURL, model string) adaptation {
	if v, ok := learned.Load(learnedKey(baseURL, model)); ok {
		return v.(adaptation)
	}
	return 0
}

func learn(baseURL, model string, a adaptation) {
	key := learnedKey(baseURL, model)
	for {
		old, loaded := learned.LoadOrStore(key, a)
		if !loaded {
			return
		}
		if learned.CompareAndSwap(key, old, old.(adaptation)|a) {
			return
		}
	}
}

// answerFormat is what JSON mode asks for where the dialect wants a
// json_schema response format rather than json_object: the schema's name
// and the schema.
type answerFormat struct {
	name   string
	schema json.RawMessage
}

// callsFormat is the selector's answer, with or without the search round.
func callsFormat(search bool) answerFormat {
	if search {
		return answerFormat{"tool_calls", json.RawMessage(answerSchemaSearch)}
	}
	return answerFormat{"tool_calls", json.RawMessage(answerSchema)}
}

// Shape applies the provider dialect of req.Model under c (docs/providers.md)
// to a chat request built outside a selection, such as
// the executor/chat Repairer's: the temperature (sent, omitted, or 1), the token
// limit in the dialect's field, the reasoning control, and, for a request
// in JSON mode (ResponseFormat "json_object"), a json_schema response format
// named name with schema where the provider refuses json_object. A request
// so shaped speaks the dialect the selector's own requests speak.
func (c *Config) Shape(req *ChatRequest, name string, schema json.RawMessage) {
	cc := *c
	cc.normalize()
	shape(&cc, req, answerFormat{name, schema}, 0)
}

// shape fills a chat request's dialect fields for model: temperature,
// response format (format where a json_schema is wanted), token limit and
// reasoning control, with the adaptations in have applied. It returns the
// dialect.
func shape(cfg *Config, req *ChatRequest, format answerFormat, have adaptation) dialect {
	d := dialectFor(cfg, req.Model)
	req.Dialect = d.name
	if d.plain {
		req.Dialect = ""
	}
	req.Params, req.ExtraBody = nil, nil
	set := func(k string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		if slices.Contains(openAIRequestKeys, k) {
			if req.Params == nil {
				req.Params = map[string]json.RawMessage{}
			}
			req.Params[k] = b
			return
		}
		if req.ExtraBody == nil {
			req.ExtraBody = map[string]json.RawMessage{}
		}
		req.ExtraBody[k] = b
	}
	req.OmitTemperature = d.temperature == temperatureOmit || have&adaptNoTemperature != 0
	if d.temperature == temperatureOne {
		req.Temperature = 1
	}
	level := cfg.reasoning()
	thinkingOn := level != ReasoningOff
	if d.thinking != nil && level != ReasoningProvider && have&adaptNoReasoning == 0 {
		for k, v := range d.thinking(level, req.Model) {
			set(k, v)
		}
	}
	if d.thinking == nil || level == ReasoningProvider || have&adaptNoReasoning != 0 {
		thinkingOn = false // nothing was asked of the server
	}
	if req.ResponseFormat != "" {
		switch {
		case have&adaptNoResponseFormat != 0 || (d.noFormatWhenThinking && thinkingOn):
			req.ResponseFormat = ""
		case d.jsonSchema || have&adaptJSONSchema != 0:
			req.ResponseFormat = "json_schema"
			set("response_format", map[string]any{"type": "json_schema", "json_schema": map[string]any{
				"name": format.name, "strict": false, "schema": format.schema}})
		}
	}
	if limit, _ := tokenLimit(cfg, d); limit > 0 {
		field := d.tokenField
		if have&adaptTokenField != 0 {
			field = otherTokenField(field)
		}
		set(field, limit)
	}
	return d
}

// tokenLimit is the token limit a request to dialect d carries under cfg
// (0: none) and where it comes from, in words for messages.
func tokenLimit(cfg *Config, d dialect) (int, string) {
	switch {
	case cfg.MaxTokens > 0:
		return cfg.MaxTokens, fmt.Sprintf("%d tokens (%s)", cfg.MaxTokens, envOf("max_tokens"))
	case d.defaultLimit > 0:
		return d.defaultLimit, fmt.Sprintf("%d tokens (the %s dialect's default; %s sets another)", d.defaultLimit, d.name, envOf("max_tokens"))
	}
	return 0, fmt.Sprintf("the server's own limit (none was sent; %s sets one)", envOf("max_tokens"))
}

func otherTokenField(f string) string {
	if f == "max_tokens" {
		return "max_completion_tokens"
	}
	return "max_tokens"
}

// openAIRequestKeys are the chat request fields OpenAI's API defines: the
// OpenAI SDKs take them as keyword arguments. Others go in ExtraBody (the
// SDKs' extra_body).
var openAIRequestKeys = []string{"max_tokens", "max_completion_tokens", "reasoning_effort", "response_format"}

// rememberable reports whether an adaptation a 400 asked for is remembered
// for the base URL and model: not when the server accepted the field and the
// model failed under it (json_validate_failed), which the next request may not.
func rememberable(msg string) bool {
	return !strings.Contains(strings.ToLower(msg), "json_validate_failed")
}

// adaptTo decides the adaptation a 400 asks for: the first field we sent
// that the server's message names, changed in its documented way
// (adaptationNames says what it changes). ok is false when the message
// names nothing we can change, or only what was already adapted.
func adaptTo(msg string, req *ChatRequest, have adaptation) (adaptation, bool) {
	m := strings.ToLower(msg)
	if !req.OmitTemperature && have&adaptNoTemperature == 0 && strings.Contains(m, "temperature") {
		return adaptNoTemperature, true
	}
	for _, f := range []string{"max_tokens", "max_completion_tokens"} {
		if _, sent := req.Params[f]; sent && have&adaptTokenField == 0 && strings.Contains(m, f) {
			return adaptTokenField, true
		}
	}
	// Groq's json_validate_failed: JSON mode could not hold the model to
	// JSON. The field is accepted, so dropping it is tried once and not
	// remembered (rememberable says so); the reader finds the JSON itself.
	if req.ResponseFormat != "" && have&adaptNoResponseFormat == 0 && strings.Contains(m, "json_validate_failed") {
		return adaptNoResponseFormat, true
	}
	if req.ResponseFormat != "" && (strings.Contains(m, "response_format") || strings.Contains(m, "json_object") ||
		strings.Contains(m, "json_schema") || strings.Contains(m, "response format")) {
		if req.ResponseFormat == "json_object" && have&adaptJSONSchema == 0 {
			return adaptJSONSchema, true
		}
		if have&adaptNoResponseFormat == 0 {
			return adaptNoResponseFormat, true
		}
	}
	// DeepSeek's "The `reasoning_content` in the thinking mode must be passed
	// back to the API." asks for a field of the conversation, not for one of
	// ours to go: dropping the thinking switch would turn thinking on.
	if have&adaptNoReasoning == 0 && !strings.Contains(m, "reasoning_content") {
		for _, k := range reasoningKeys {
			_, p := req.Params[k]
			_, e := req.ExtraBody[k]
			if (p || e) && (strings.Contains(m, k) || strings.Contains(m, "thinking") || strings.Contains(m, "reasoning")) {
				return adaptNoReasoning, true
			}
		}
	}
	return 0, false
}
