package selector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caarlos0/env/v11"
	"github.com/go-playground/validator/v10"
)

// Defaults, identical to the Python code the selector replaces.
const (
	DefaultModel            = "glm-4.5-air"
	DefaultMaxCalls         = 5
	DefaultTimeout          = 30 * time.Second
	DefaultTemperature      = 0.0
	DefaultFailClosed       = true
	DefaultMode             = ModeJSON
	DefaultMaxResponseBytes = 4 << 20 // 4 MiB
	DefaultOfferTokens      = 10000
	DefaultTopK             = 10
	DefaultMaxSearches      = 1
	// MaxTopK bounds TopK and every per-request top K (select --k, the C
	// ABI's top_k): a model offered more tools than this gains nothing from ranking.
	MaxTopK = 1000
	// MaxOfferTokens bounds OfferTokens.
	MaxOfferTokens = 10_000_000
	// MaxMaxSearches bounds MaxSearches.
	MaxMaxSearches = 10
)

// Mode is how the model is asked (Config.Mode): two ways, one policy.
type Mode string

// The modes, and the function native mode offers for the search round.
const (
	// ModeJSON asks for the `{"calls":[...]}` contract with response_format json_object.
	ModeJSON Mode = "json"
	// ModeNative sends the offered tools in the provider's `tools` format and
	// hydrates the model's tool_calls.
	ModeNative Mode = "native"
	// SearchToolName is the function native mode offers for the search round.
	SearchToolName = "search_tools"
)

// Environment variable names read by ConfigFromEnv.
const (
	// EnvPrefix starts the name of every variable the selector reads, except the
	// OPENAI_* fallbacks of the endpoint.
	EnvPrefix           = "LLM_COMMON_TOOL_SELECTION_"
	EnvModel            = "LLM_COMMON_TOOL_SELECTION_MODEL"
	EnvFallbackModel    = "LLM_COMMON_TOOL_SELECTION_FALLBACK_MODEL"
	EnvMaxCalls         = "LLM_COMMON_TOOL_SELECTION_MAX_CALLS"
	EnvTimeoutS         = "LLM_COMMON_TOOL_SELECTION_TIMEOUT_S"
	EnvFailClosed       = "LLM_COMMON_TOOL_SELECTION_FAIL_CLOSED"
	EnvTemperature      = "LLM_COMMON_TOOL_SELECTION_TEMPERATURE"
	EnvBaseURL          = "LLM_COMMON_TOOL_SELECTION_BASE_URL"
	EnvAPIKey           = "LLM_COMMON_TOOL_SELECTION_API_KEY"
	EnvMode             = "LLM_COMMON_TOOL_SELECTION_MODE"
	EnvMaxResponseBytes = "LLM_COMMON_TOOL_SELECTION_MAX_RESPONSE_BYTES"
	EnvFeedback         = "LLM_COMMON_TOOL_SELECTION_FEEDBACK"
	EnvOfferTokens      = "LLM_COMMON_TOOL_SELECTION_OFFER_TOKENS"
	EnvTopK             = "LLM_COMMON_TOOL_SELECTION_TOP_K"
	EnvMaxSearches      = "LLM_COMMON_TOOL_SELECTION_MAX_SEARCHES"
	EnvProvider         = "LLM_COMMON_TOOL_SELECTION_PROVIDER"
	EnvReasoning        = "LLM_COMMON_TOOL_SELECTION_REASONING"
	EnvMaxTokens        = "LLM_COMMON_TOOL_SELECTION_MAX_TOKENS"
	EnvOpenAIBaseURL    = "OPENAI_BASE_URL"
	EnvOpenAIAPIKey     = "OPENAI_API_KEY"
)

// Config configures a ToolSelector: a literal, or ConfigFromEnv or
// ConfigFromJSON. A nil *Config passed to New means the defaults (the Default*
// constants).
//
// New fills a zero Model, MaxCalls, Timeout, Mode, MaxResponseBytes,
// OfferTokens, TopK or MaxSearches with its default, so the zero Config means the defaults: Temperature 0 is the
// default temperature, and FailOpen false keeps the fail-closed default. (In Go
// the switch is FailOpen so that a Config literal can never be fail-open by
// omission; the environment variable and the JSON key stay "fail_closed".)
//
// The API key never appears in String, GoString, LogValue or MarshalJSON output.
type Config struct {
	// Model is the primary model (LLM_COMMON_TOOL_SELECTION_MODEL).
	Model string `json:"model" validate:"required"`
	// FallbackModel is tried once after any failure of the primary; empty means none.
	FallbackModel string `json:"fallback_model"`
	// MaxCalls caps the calls returned, keeping the model's order (1-20).
	MaxCalls int `json:"max_calls" validate:"min=1,max=20"`
	// Timeout bounds each attempt (1 s to 120 s); the caller's context
	// deadline, if sooner, wins. The environment and JSON give it in whole
	// seconds (LLM_COMMON_TOOL_SELECTION_TIMEOUT_S, "timeout_s").
	Timeout time.Duration `json:"-" validate:"min=1s,max=120s"`
	// Temperature is sent to the model as given, 0 included (0-1).
	Temperature float64 `json:"temperature" validate:"gte=0,lte=1"`
	// FailOpen drops invalid calls (reporting them) and keeps the valid ones;
	// false, the default, fails the whole attempt on any invalid call. It is
	// LLM_COMMON_TOOL_SELECTION_FAIL_CLOSED negated, and "fail_closed" in JSON.
	FailOpen bool `json:"-"`
	// BaseURL is the OpenAI-compatible endpoint; empty means the go-openai default (api.openai.com).
	BaseURL string `json:"base_url" validate:"omitempty,http_url"`
	// APIKey authenticates to the endpoint; it may be empty (e.g. Ollama).
	APIKey string `json:"api_key"`
	// Mode is ModeJSON (the `calls` contract) or ModeNative (provider tool_calls).
	Mode Mode `json:"mode" validate:"oneof=json native"`
	// MaxResponseBytes bounds a response body; a larger one is refused unread (1 KiB - 1 GiB).
	MaxResponseBytes int64 `json:"max_response_bytes" validate:"min=1024,max=1073741824"`
	// Feedback is where selections are recorded as ranking feedback
	// (LLM_COMMON_TOOL_SELECTION_FEEDBACK): a JSON Lines file path or a
	// redis:// (rediss://) URL; empty means off. The selector records through
	// Recorder (see FeedbackRecorder), which New requires when Feedback is set.
	Feedback string `json:"feedback,omitempty" validate:"omitempty,feedback"`
	// OfferTokens is the offer budget: with a Ranker, every
	// eligible tool is offered while the offered view (the tools in the
	// format the request carries them, counted with the Ranker's tokenizer)
	// is at most this many tokens; above it, the top TopK ranked tools are
	// offered (1-10,000,000; default 10,000).
	OfferTokens int `json:"offer_tokens" validate:"min=1,max=10000000"`
	// TopK is how many ranked tools are offered above the budget, and after a
	// search (1-1000; default 10).
	TopK int `json:"top_k" validate:"min=1,max=1000"`
	// MaxSearches is how many search rounds one attempt may make when the
	// offer is a ranked subset (1-10; default 1).
	MaxSearches int `json:"-" validate:"min=0,max=10"`
	// NoSearch turns the search round off. The environment and JSON say it
	// as max_searches 0 (LLM_COMMON_TOOL_SELECTION_MAX_SEARCHES=0).
	NoSearch bool `json:"-"`
	// Provider picks the provider dialect (docs/providers.md): what a request
	// carries and how a reply is read. The zero value is ProviderAuto (the
	// constructors store "auto" as ""; JSON writes "auto"), which decides from the base URL's host, then the model name; a server
	// it does not recognise gets the generic OpenAI-compatible dialect.
	Provider Provider `json:"provider" validate:"omitempty,oneof=auto generic openai deepseek zai qwen vllm ollama lmstudio llamacpp openrouter mistral moonshot gemini azure anthropic"`
	// Reasoning is how much the model may think before it selects:
	// ReasoningOff (the zero value; "off" is stored as "") maps to each dialect's lowest
	// setting; low, medium, high ask for more; ReasoningProvider sends nothing.
	Reasoning Reasoning `json:"reasoning" validate:"omitempty,oneof=off low medium high provider"`
	// MaxTokens is the reply's token limit, sent in the dialect's field
	// (max_tokens or max_completion_tokens; reasoning tokens count against
	// it); 0, the default, sends the dialect's default limit (docs/providers.md:
	// none for the generic dialect and OpenAI's chat models, so the server's
	// own limit applies; room for thinking where the model thinks) (0-1,000,000).
	MaxTokens int `json:"max_tokens" validate:"min=0,max=1000000"`

	// The fields below are Go values, not settings: no environment variable
	// or JSON key sets them, and String, LogValue and MarshalJSON leave them out.

	// Ranker turns on the offer budget and the search round: every eligible
	// tool is offered while their view fits OfferTokens, else the top TopK
	// ranked for the task; when the offer is such a ranked subset, the model
	// may ask for a search (MaxSearches rounds per attempt). A Prefilter
	// (here or in the Request) overrides the budget: it always decides the
	// offer, and serves the search rounds too. Without either, every
	// eligible tool is offered. A *rank.Offering is one.
	Ranker Ranker `json:"-" validate:"-"`
	// Prefilter narrows the eligible tools before they are offered (see Prefilter).
	Prefilter Prefilter `json:"-" validate:"-"`
	// Recorder learns from every selection that returns calls (see
	// FeedbackRecorder); rank/feedbackstore.OpenLearner opens one for the
	// Feedback setting.
	Recorder FeedbackRecorder `json:"-" validate:"-"`
	// Logger receives attempt and decision records; nil discards them, as
	// a library should be quiet unless asked (pass slog.Default() to log
	// where the program logs).
	Logger *slog.Logger `json:"-" validate:"-"`
	// OwnClient says that the caller's own client sends the requests
	// (Sessions it drives, as Python's ToolSelector(client=...) does), to
	// BaseURL when the caller could read its client's base URL. With BaseURL
	// empty the endpoint is unknown rather than api.openai.com: ProviderAuto
	// decides from the model name, then generic, and what adapt-once learns
	// is kept for this selector only, never shared with another endpoint.
	// The C ABI sets it from config_json's "own_client".
	OwnClient bool `json:"-" validate:"-"`

	now      func() time.Time // replaces time.Now in tests
	endpoint string           // the learned adaptations' key: BaseURL, or this selector's own for an unknown endpoint (New)
}

// ownClients numbers the selectors whose own client's endpoint is unknown:
// each learns for itself.
var ownClients atomic.Uint64

// learnKey is the endpoint adapt-once remembers adaptations for.
func (c *Config) learnKey() string {
	if c.endpoint != "" {
		return c.endpoint
	}
	return c.BaseURL
}

// unknownEndpoint reports a caller's own client whose base URL is unknown.
func (c *Config) unknownEndpoint() bool { return c.OwnClient && strings.TrimSpace(c.BaseURL) == "" }

// Searches returns how many search rounds an attempt may make (0: off).
func (c Config) Searches() int {
	switch {
	case c.NoSearch:
		return 0
	case c.MaxSearches == 0:
		return DefaultMaxSearches
	}
	return c.MaxSearches
}

// defaultConfig returns the documented defaults.
func defaultConfig() Config {
	return Config{
		Model:            DefaultModel,
		MaxCalls:         DefaultMaxCalls,
		Timeout:          DefaultTimeout,
		Temperature:      DefaultTemperature,
		FailOpen:         !DefaultFailClosed,
		Mode:             DefaultMode,
		MaxResponseBytes: DefaultMaxResponseBytes,
		OfferTokens:      DefaultOfferTokens,
		TopK:             DefaultTopK,
		MaxSearches:      DefaultMaxSearches,
	}
}

// normalize makes the spelled-out defaults of Provider and Reasoning
// ("auto", "off", any case) their zero values, so that a Config read from
// the environment or JSON equals one built in Go.
func (c *Config) normalize() {
	c.Provider = Provider(strings.ToLower(strings.TrimSpace(string(c.Provider))))
	c.Reasoning = Reasoning(strings.ToLower(strings.TrimSpace(string(c.Reasoning))))
	if c.Provider == ProviderAuto {
		c.Provider = ""
	}
	if c.Reasoning == ReasoningOff {
		c.Reasoning = ""
	}
}

// reasoning is Reasoning with the zero value spelled out (ReasoningOff).
func (c Config) reasoning() Reasoning {
	if c.Reasoning == "" {
		return ReasoningOff
	}
	return c.Reasoning
}

// provider is Provider with the zero value spelled out (ProviderAuto).
func (c Config) provider() Provider {
	if c.Provider == "" {
		return ProviderAuto
	}
	return c.Provider
}

// withDefaults fills the fields whose zero value is never valid.
func (c Config) withDefaults() Config {
	d := defaultConfig()
	if strings.TrimSpace(c.Model) == "" {
		c.Model = d.Model
	}
	if c.MaxCalls == 0 {
		c.MaxCalls = d.MaxCalls
	}
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	if c.Mode == "" {
		c.Mode = d.Mode
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = d.MaxResponseBytes
	}
	if c.OfferTokens == 0 {
		c.OfferTokens = d.OfferTokens
	}
	if c.TopK == 0 {
		c.TopK = d.TopK
	}
	if c.MaxSearches == 0 {
		c.MaxSearches = d.MaxSearches
	}
	c.normalize()
	return c
}

// ConfigError reports one malformed or out-of-range setting. It names the
// environment variable and the accepted values; the value itself is shown
// except for the API key and base URL, which may hold credentials.
type ConfigError struct {
	// Var is the environment variable, e.g. LLM_COMMON_TOOL_SELECTION_MAX_CALLS.
	Var string
	// Field is the Config field, e.g. MaxCalls.
	Field string
	// Value is the offending value as text ("" when withheld).
	Value string
	// Want describes the accepted values, e.g. "an integer from 1 to 20".
	Want string
	// Problem is "malformed" (does not parse) or "out of range".
	Problem string
}

// Error names the variable, the value (unless secret) and the accepted values.
func (e *ConfigError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s (%s) is %s: want %s", e.Var, e.Field, e.Problem, e.Want)
	}
	return fmt.Sprintf("%s=%q (%s) is %s: want %s", e.Var, e.Value, e.Field, e.Problem, e.Want)
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

type fieldInfo struct {
	env, want string
	secret    bool
}

var configFields = map[string]fieldInfo{
	"Model":            {EnvModel, "a non-empty model name", false},
	"FallbackModel":    {EnvFallbackModel, "a model name, or unset for none", false},
	"MaxCalls":         {EnvMaxCalls, "an integer from 1 to 20", false},
	"Timeout":          {EnvTimeoutS, "an integer number of seconds from 1 to 120", false},
	"Temperature":      {EnvTemperature, "a number from 0 to 1", false},
	"FailClosed":       {EnvFailClosed, "one of 1, true, t, yes, y, on or 0, false, f, no, n, off (any case)", false},
	"BaseURL":          {EnvBaseURL + " or " + EnvOpenAIBaseURL, "an http or https URL", true},
	"APIKey":           {EnvAPIKey + " or " + EnvOpenAIAPIKey, "any text", true},
	"Mode":             {EnvMode, "json or native", false},
	"MaxResponseBytes": {EnvMaxResponseBytes, "an integer number of bytes from 1024 to 1073741824", false},
	"Feedback":         {EnvFeedback, "a file path or a redis://[:password@]host[:port][/db] URL (rediss:// for TLS), or unset for off", false},
	"OfferTokens":      {EnvOfferTokens, "an integer number of tokens from 1 to 10000000", false},
	"TopK":             {EnvTopK, "an integer from 1 to 1000", false},
	"MaxSearches":      {EnvMaxSearches, "an integer from 0 (no search round) to 10", false},
	"Provider":         {EnvProvider, "one of auto, generic, openai, deepseek, zai, qwen, vllm, ollama, lmstudio, llamacpp, openrouter, mistral, moonshot, gemini, azure, anthropic", false},
	"Reasoning":        {EnvReasoning, "one of off, low, medium, high, provider", false},
	"MaxTokens":        {EnvMaxTokens, "an integer number of tokens from 0 (the dialect's default) to 1000000", false},
}

func configErr(field, value, problem string) *ConfigError {
	info := configFields[field]
	if info.secret {
		value = ""
	}
	if field == "Feedback" {
		value = redactURL(value)
	}
	return &ConfigError{Var: info.env, Field: field, Value: value, Want: info.want, Problem: problem}
}

var validate = func() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	if err := v.RegisterValidation("feedback", func(fl validator.FieldLevel) bool {
		return checkFeedbackSpec(fl.Field().String()) == nil
	}); err != nil {
		panic(err)
	}
	return v
}()

// checkFeedbackSpec is the one check of a Feedback setting (Config.Feedback,
// LLM_COMMON_TOOL_SELECTION_FEEDBACK): "" (off), a redis:// or rediss:// URL
// with a host and an optional numeric database, or a file path (no control
// characters, not a URL of another scheme).
func checkFeedbackSpec(spec string) error {
	if spec == "" {
		return nil
	}
	if strings.ContainsFunc(spec, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return errors.New("contains control characters")
	}
	scheme, _, isURL := strings.Cut(spec, "://")
	if !isURL {
		if strings.TrimSpace(spec) != spec {
			return errors.New("a file path with surrounding spaces")
		}
		return nil
	}
	switch strings.ToLower(scheme) {
	case "redis", "rediss":
	default:
		return fmt.Errorf("scheme %q is neither redis nor rediss", scheme)
	}
	u, err := url.Parse(spec)
	if err != nil {
		return errors.New("not a URL")
	}
	if u.Host == "" || u.Hostname() == "" {
		return errors.New("no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return errors.New("port out of range")
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if n, err := strconv.Atoi(db); err != nil || n < 0 {
			return errors.New("database is not a number")
		}
	}
	return nil
}

// redactURL hides the password of a URL-shaped setting.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	if i := strings.LastIndex(s, "@"); i >= 0 && strings.Contains(s, "://") {
		return s[:strings.Index(s, "://")+3] + "xxxxx" + s[i:]
	}
	return s
}

// Validate checks every field and returns an errors.Join of *ConfigError, or nil.
func (c Config) Validate() error {
	var errs []error
	if math.IsNaN(c.Temperature) || math.IsInf(c.Temperature, 0) {
		errs = append(errs, configErr("Temperature", fmt.Sprint(c.Temperature), "out of range"))
	}
	if err := validate.Struct(c); err != nil {
		var ves validator.ValidationErrors
		if !errors.As(err, &ves) {
			return err
		}
		for _, fe := range ves {
			if fe.StructField() == "Temperature" && len(errs) > 0 {
				continue // already reported as NaN/Inf
			}
			problem := "out of range"
			if fe.Tag() == "required" || fe.Tag() == "oneof" || fe.Tag() == "http_url" || fe.Tag() == "feedback" {
				problem = "invalid"
			}
			if fe.Tag() == "feedback" {
				problem = "invalid (" + checkFeedbackSpec(c.Feedback).Error() + ")"
			}
			value := fmt.Sprint(fe.Value())
			if fe.StructField() == "Timeout" {
				value = fmt.Sprint(c.timeoutS()) // seconds, as the environment and JSON spell it
			}
			errs = append(errs, configErr(fe.StructField(), value, problem))
		}
	}
	return errors.Join(errs...)
}

// envConfig is the environment's view: the selector's own variables plus the
// OPENAI_* fallbacks for the endpoint.
type envConfig struct {
	Model            string  `env:"LLM_COMMON_TOOL_SELECTION_MODEL" envDefault:"glm-4.5-air"`
	FallbackModel    string  `env:"LLM_COMMON_TOOL_SELECTION_FALLBACK_MODEL"`
	MaxCalls         int     `env:"LLM_COMMON_TOOL_SELECTION_MAX_CALLS" envDefault:"5"`
	Timeout          int     `env:"LLM_COMMON_TOOL_SELECTION_TIMEOUT_S" envDefault:"30"` // seconds
	FailClosed       bool    `env:"LLM_COMMON_TOOL_SELECTION_FAIL_CLOSED" envDefault:"true"`
	Temperature      float64 `env:"LLM_COMMON_TOOL_SELECTION_TEMPERATURE" envDefault:"0.0"`
	BaseURL          string  `env:"LLM_COMMON_TOOL_SELECTION_BASE_URL"`
	APIKey           string  `env:"LLM_COMMON_TOOL_SELECTION_API_KEY"`
	OpenAIBaseURL    string  `env:"OPENAI_BASE_URL"`
	OpenAIAPIKey     string  `env:"OPENAI_API_KEY"`
	Mode             string  `env:"LLM_COMMON_TOOL_SELECTION_MODE" envDefault:"json"`
	MaxResponseBytes int64   `env:"LLM_COMMON_TOOL_SELECTION_MAX_RESPONSE_BYTES" envDefault:"4194304"`
	Feedback         string  `env:"LLM_COMMON_TOOL_SELECTION_FEEDBACK"`
	OfferTokens      int     `env:"LLM_COMMON_TOOL_SELECTION_OFFER_TOKENS" envDefault:"10000"`
	TopK             int     `env:"LLM_COMMON_TOOL_SELECTION_TOP_K" envDefault:"10"`
	MaxSearches      int     `env:"LLM_COMMON_TOOL_SELECTION_MAX_SEARCHES" envDefault:"1"`
	Provider         string  `env:"LLM_COMMON_TOOL_SELECTION_PROVIDER" envDefault:"auto"`
	Reasoning        string  `env:"LLM_COMMON_TOOL_SELECTION_REASONING" envDefault:"off"`
	MaxTokens        int     `env:"LLM_COMMON_TOOL_SELECTION_MAX_TOKENS" envDefault:"0"`
}

// parseBool reads a boolean setting: 1/true/t/yes/y/on and 0/false/f/no/n/off,
// case-insensitive, surrounding spaces ignored.
func parseBool(s string) (bool, error) {
	low := strings.ToLower(strings.TrimSpace(s))
	if slices.Contains(boolTrue, low) {
		return true, nil
	}
	if slices.Contains(boolFalse, low) {
		return false, nil
	}
	return false, fmt.Errorf("not a boolean: %q", s)
}

// ConfigFromEnv reads the configuration from the process environment. An empty
// variable counts as unset. A malformed or out-of-range value is an error
// naming the variable and the accepted values; it is never replaced by the default.
func ConfigFromEnv() (Config, error) {
	return configFromEnv(nil)
}

// ConfigFromEnvMap is ConfigFromEnv reading from env instead of the process
// environment (for tests, and for callers such as the C ABI that pass their
// environment explicitly).
func ConfigFromEnvMap(env map[string]string) (Config, error) {
	if env == nil {
		env = map[string]string{}
	}
	return configFromEnv(env)
}

func configFromEnv(environ map[string]string) (Config, error) {
	if environ == nil {
		environ = map[string]string{}
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				environ[k] = v
			}
		}
	}
	// Trim values so that "5 " and " json" read as meant; the trimmed value is
	// what is parsed and reported.
	trimmed := make(map[string]string, len(environ))
	for k, v := range environ {
		trimmed[k] = strings.TrimSpace(v)
	}
	var ec envConfig
	err := env.ParseWithOptions(&ec, env.Options{
		Environment: trimmed,
		FuncMap: map[reflect.Type]env.ParserFunc{
			reflect.TypeFor[bool](): func(v string) (any, error) { return parseBool(v) },
		},
	})
	if err != nil {
		return Config{}, envError(err, trimmed)
	}
	c := Config{
		Model:            ec.Model,
		FallbackModel:    ec.FallbackModel,
		MaxCalls:         ec.MaxCalls,
		Timeout:          time.Duration(ec.Timeout) * time.Second,
		FailOpen:         !ec.FailClosed,
		Temperature:      ec.Temperature,
		BaseURL:          firstNonEmpty(ec.BaseURL, ec.OpenAIBaseURL),
		APIKey:           firstNonEmpty(ec.APIKey, ec.OpenAIAPIKey),
		Mode:             Mode(strings.ToLower(ec.Mode)),
		MaxResponseBytes: ec.MaxResponseBytes,
		Feedback:         ec.Feedback,
		OfferTokens:      ec.OfferTokens,
		TopK:             ec.TopK,
		Provider:         Provider(ec.Provider),
		Reasoning:        Reasoning(ec.Reasoning),
		MaxTokens:        ec.MaxTokens,
	}
	c.normalize()
	if c.MaxSearches, c.NoSearch, err = searchesFromWire(ec.MaxSearches); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// envError turns caarlos0/env parse errors into *ConfigError values.
func envError(err error, environ map[string]string) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return err
	}
	var errs []error
	for _, e := range agg.Errors {
		var pe env.ParseError
		if errors.As(e, &pe) {
			if _, ok := configFields[pe.Name]; ok {
				errs = append(errs, configErr(pe.Name, environ[configFields[pe.Name].env], "malformed"))
				continue
			}
		}
		errs = append(errs, fmt.Errorf("%w: %v", ErrInvalidConfig, e))
	}
	return errors.Join(errs...)
}

// searchesFromWire maps max_searches as the environment and JSON spell it
// (0-10, 0 = off) to the Go fields (MaxSearches, and NoSearch for off).
func searchesFromWire(n int) (max int, off bool, err error) {
	switch {
	case n < 0 || n > MaxMaxSearches:
		return 0, false, configErr("MaxSearches", fmt.Sprint(n), "out of range")
	case n == 0:
		return 0, true, nil
	}
	return n, false, nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// ConfigFromJSON reads a configuration given as JSON (snake_case keys, as
// written by MarshalJSON plus "api_key"), starting from the defaults: a
// missing key keeps its default. Unknown keys are an error. It is how a caller
// that reads its own environment (the Python package) passes configuration.
func ConfigFromJSON(data []byte) (Config, error) {
	c := defaultConfig()
	aux := struct {
		*Config
		APIKeySet   *bool `json:"api_key_set"` // written by MarshalJSON; ignored
		TimeoutS    *int  `json:"timeout_s"`
		FailClosed  *bool `json:"fail_closed"`
		MaxSearches *int  `json:"max_searches"`
	}{Config: &c}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&aux); err != nil {
		return Config{}, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Config{}, fmt.Errorf("%w: trailing data after the JSON object", ErrInvalidConfig)
	}
	if aux.TimeoutS != nil {
		c.Timeout = time.Duration(*aux.TimeoutS) * time.Second
	}
	if aux.FailClosed != nil {
		c.FailOpen = !*aux.FailClosed
	}
	if aux.MaxSearches != nil {
		var err error
		if c.MaxSearches, c.NoSearch, err = searchesFromWire(*aux.MaxSearches); err != nil {
			return Config{}, err
		}
	}
	c.Mode = Mode(strings.ToLower(strings.TrimSpace(string(c.Mode))))
	c.normalize()
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// MarshalJSON writes the configuration without the API key: "api_key_set"
// says whether one is configured. A password in the feedback URL is masked.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	c.Feedback = redactURL(c.Feedback)
	return json.Marshal(struct {
		plain
		TimeoutS    int    `json:"timeout_s"`
		FailClosed  bool   `json:"fail_closed"`
		MaxSearches int    `json:"max_searches"`
		APIKey      string `json:"api_key,omitempty"`
		APIKeySet   bool   `json:"api_key_set"`
	}{plain: plain(c), TimeoutS: c.timeoutS(), FailClosed: !c.FailOpen, MaxSearches: c.Searches(), APIKeySet: c.APIKey != ""})
}

// timeoutS is Timeout in whole seconds, as the environment and JSON give it
// (a fraction of a second rounds up, so a valid Go value stays valid).
func (c Config) timeoutS() int {
	if c.Timeout <= 0 {
		return int(c.Timeout / time.Second)
	}
	return int((c.Timeout + time.Second - 1) / time.Second)
}

// MarshalJSON writes the zero Provider as "auto".
func (p Provider) MarshalJSON() ([]byte, error) {
	if p == "" {
		p = ProviderAuto
	}
	return json.Marshal(string(p))
}

// MarshalJSON writes the zero Reasoning as "off".
func (r Reasoning) MarshalJSON() ([]byte, error) {
	if r == "" {
		r = ReasoningOff
	}
	return json.Marshal(string(r))
}

// String describes the configuration with the API key redacted.
func (c Config) String() string {
	b, _ := c.MarshalJSON()
	return "selector.Config" + string(b)
}

// GoString is String, so %#v cannot print the API key either.
func (c Config) GoString() string { return c.String() }

// LogValue renders the configuration for log/slog without the API key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("model", c.Model),
		slog.String("fallback_model", c.FallbackModel),
		slog.Int("max_calls", c.MaxCalls),
		slog.Int("timeout_s", c.timeoutS()),
		slog.Float64("temperature", c.Temperature),
		slog.Bool("fail_closed", !c.FailOpen),
		slog.String("base_url", c.BaseURL),
		slog.Bool("api_key_set", c.APIKey != ""),
		slog.String("mode", string(c.Mode)),
		slog.Int64("max_response_bytes", c.MaxResponseBytes),
		slog.String("feedback", redactURL(c.Feedback)),
		slog.Int("offer_tokens", c.OfferTokens),
		slog.Int("top_k", c.TopK),
		slog.Int("max_searches", c.Searches()),
		slog.String("provider", string(c.provider())),
		slog.String("reasoning", string(c.reasoning())),
		slog.Int("max_tokens", c.MaxTokens),
	)
}
