package selector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolselect/toolselect/internal/strictjson"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-playground/validator/v10"
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

// Settings are what the environment and JSON carry: every field is a
// setting of [ConfigSchema] (which gives each one's variable, bounds and
// default), read by [ConfigFromEnv] and [ConfigFromJSON] and checked by
// [Settings.Validate]. A zero field means its default: New
// fills a zero Model, MaxCalls, Timeout, Mode, MaxResponseBytes,
// OfferTokens, TopK or MaxSearches, Temperature 0 is the default
// temperature, and FailOpen false keeps the fail-closed default. (In Go the
// switch is FailOpen so that a literal can never be fail-open by omission;
// the environment variable and the JSON key stay "fail_closed".)
//
// The API key never appears in String, GoString, LogValue or MarshalJSON output.
type Settings struct {
	// Model is the primary model.
	Model string
	// FallbackModel is tried once after any failure of the primary; empty means none.
	FallbackModel string
	// MaxCalls caps the calls returned, keeping the model's order.
	MaxCalls int
	// Timeout bounds each attempt; the caller's context deadline, if
	// sooner, wins. The environment and JSON give it in whole seconds
	// ("timeout_s").
	Timeout time.Duration
	// Temperature is sent to the model as given, 0 included.
	Temperature float64
	// FailOpen drops invalid calls (reporting them) and keeps the valid ones;
	// false, the default, fails the whole attempt on any invalid call. The
	// environment and JSON say it negated ("fail_closed").
	FailOpen bool
	// BaseURL is the OpenAI-compatible endpoint; empty means the go-openai default (api.openai.com).
	BaseURL string
	// APIKey authenticates to the endpoint; it may be empty (e.g. Ollama).
	APIKey string
	// Mode is ModeJSON (the `calls` contract) or ModeNative (provider tool_calls).
	Mode Mode
	// MaxResponseBytes bounds a response body; a larger one is refused unread.
	MaxResponseBytes int64
	// Feedback is where selections are recorded as ranking feedback: a JSON Lines file path or a
	// redis:// (rediss://) URL; empty means off. The selector records through
	// Recorder (see FeedbackRecorder), which New requires when Feedback is set.
	Feedback string
	// OfferTokens is the offer budget: with a Ranker, every
	// eligible tool is offered while the offered view (the tools in the
	// format the request carries them, counted with the Ranker's tokenizer)
	// is at most this many tokens; above it, the top TopK ranked tools are
	// offered.
	OfferTokens int
	// TopK is how many ranked tools are offered above the budget, and after a
	// search.
	TopK int
	// MaxSearches is how many search rounds one attempt may make when the
	// offer is a ranked subset; 0 means the default.
	MaxSearches int
	// NoSearch turns the search round off. The environment and JSON say it
	// as max_searches 0.
	NoSearch bool
	// Provider picks the provider dialect (docs/providers.md): what a request
	// carries and how a reply is read. The zero value is ProviderAuto (the
	// constructors store "auto" as ""; JSON writes "auto"), which decides from the base URL's host, then the model name; a server
	// it does not recognise gets the generic OpenAI-compatible dialect.
	Provider Provider
	// Reasoning is how much the model may think before it selects:
	// ReasoningOff (the zero value; "off" is stored as "") maps to each dialect's lowest
	// setting; low, medium, high ask for more; ReasoningProvider sends nothing.
	Reasoning Reasoning
	// MaxTokens is the reply's token limit, sent in the dialect's field
	// (max_tokens or max_completion_tokens; reasoning tokens count against
	// it); 0, the default, sends the dialect's default limit (docs/providers.md:
	// none for the generic dialect and OpenAI's chat models, so the server's
	// own limit applies; room for thinking where the model thinks).
	MaxTokens int
}

// Config configures a ToolSelector: its [Settings], and the collaborators
// it works with, Go values no environment variable or JSON key sets (String,
// LogValue and MarshalJSON leave them out). A nil *Config passed to New
// means the defaults. [ConfigFromEnv] and [ConfigFromJSON] fill the
// Settings; set the collaborators on what they return.
type Config struct {
	Settings

	// Ranker turns on the offer budget and the search round: every eligible
	// tool is offered while their view fits OfferTokens, else the top TopK
	// ranked for the task; when the offer is such a ranked subset, the model
	// may ask for a search (MaxSearches rounds per attempt). A Prefilter
	// (here or in the Request) overrides the budget: it always decides the
	// offer, and serves the search rounds too. Without either, every
	// eligible tool is offered. A *rank.Offering is one.
	Ranker Ranker
	// Prefilter narrows the eligible tools before they are offered (see Prefilter).
	Prefilter Prefilter
	// Recorder learns from every selection that returns calls (see
	// FeedbackRecorder); rank/feedbackstore.OpenLearner opens one for the
	// Feedback setting.
	Recorder FeedbackRecorder
	// Logger receives attempt and decision records; nil discards them, as
	// a library should be quiet unless asked (pass slog.Default() to log
	// where the program logs).
	Logger *slog.Logger
	// OwnClient says that the caller's own client sends the requests
	// (Sessions it drives, as Python's ToolSelector(client=...) does), to
	// BaseURL when the caller could read its client's base URL. With BaseURL
	// empty the endpoint is unknown rather than api.openai.com: ProviderAuto
	// decides from the model name, then generic, and what adapt-once learns
	// is kept for this selector only, never shared with another endpoint.
	// The C ABI sets it from config_json's "own_client".
	OwnClient bool

	now      func() time.Time // replaces time.Now in tests
	endpoint string           // the learned adaptations' key: BaseURL, or this selector's own for an unknown endpoint (New)
	// envWarnings are the EnvWarnings of the environment ConfigFromEnv
	// read; New logs them.
	envWarnings []string
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
func (c Settings) Searches() int {
	switch {
	case c.NoSearch:
		return 0
	case c.MaxSearches == 0:
		return defaultSearches
	}
	return c.MaxSearches
}

// normalize makes the spelled-out defaults of Provider and Reasoning
// ("auto", "off", any case) their zero values, so that a Config read from
// the environment or JSON equals one built in Go.
func (c *Settings) normalize() {
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
func (c Settings) reasoning() Reasoning {
	if c.Reasoning == "" {
		return ReasoningOff
	}
	return c.Reasoning
}

// provider is Provider with the zero value spelled out (ProviderAuto).
func (c Settings) provider() Provider {
	if c.Provider == "" {
		return ProviderAuto
	}
	return c.Provider
}

// withDefaults fills the fields that have a default and are left zero (a
// string of spaces counts) with it: a zero Config means the defaults.
func (c Config) withDefaults() Config {
	cv, dv := reflect.ValueOf(&c.Settings).Elem(), reflect.ValueOf(defaultConfig().Settings)
	for i := range settings {
		f := cv.FieldByName(settings[i].field) // FailClosed has none: FailOpen's zero is the default
		if !f.IsValid() || settings[i].def == nil {
			continue
		}
		if f.IsZero() || (f.Kind() == reflect.String && strings.TrimSpace(f.String()) == "") {
			f.Set(dv.FieldByName(settings[i].field))
		}
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

// configErr is the error for the setting whose Config field is field.
func configErr(field, value, problem string) *ConfigError {
	var s *setting
	for i := range settings {
		if settings[i].field == field {
			s = &settings[i]
		}
	}
	if s.secret {
		value = ""
	}
	if s.format == "feedback" {
		value = redactURL(value)
	}
	return &ConfigError{Var: strings.Join(s.envVars(), " or "), Field: field, Value: value, Want: s.wants(), Problem: problem}
}

// validate checks one setting's value against its rule ([setting.rule]).
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
func (c Settings) Validate() error {
	var errs []error
	for i := range settings {
		s := &settings[i]
		if err := s.check(s.checked(&c), fmt.Sprint(s.value(&c))); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// check holds one value of the setting to its rule ([setting.rule]); shown
// is the value as the caller wrote it, for the error.
func (s *setting) check(v any, shown string) error {
	rule := s.rule()
	if rule == "" {
		return nil
	}
	err := validate.Var(v, rule)
	var ves validator.ValidationErrors
	if err == nil || !errors.As(err, &ves) {
		return err
	}
	problem := "out of range"
	switch ves[0].Tag() {
	case "required", "oneof", "http_url":
		problem = "invalid"
	case "feedback":
		problem = "invalid (" + checkFeedbackSpec(fmt.Sprint(v)).Error() + ")"
	}
	return configErr(s.field, shown, problem)
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
	values, err := readEnv(environ)
	if err != nil {
		return Config{}, err
	}
	c := defaultConfig()
	var errs []error
	for i := range settings {
		s := &settings[i]
		for _, raw := range values[i] {
			// Trimmed, so that "5 " and " json" read as meant; the trimmed
			// value is what is parsed and reported. Empty counts as unset.
			text := strings.TrimSpace(raw)
			if text == "" {
				continue
			}
			if v, err := s.parse(text); err != nil {
				errs = append(errs, configErr(s.field, text, "malformed"))
			} else if err := s.check(v, text); err != nil {
				errs = append(errs, err)
			} else {
				s.assign(&c.Settings, v)
			}
			break
		}
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	c.normalize()
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	c.envWarnings = unknownEnv(environ)
	return c, nil
}

// ConfigFromJSON reads a configuration given as JSON (snake_case keys, as
// written by MarshalJSON plus "api_key"), starting from the defaults: a
// missing key keeps its default. Unknown keys are an error. It is how a caller
// that reads its own environment (the Python package) passes configuration.
func ConfigFromJSON(data []byte) (Config, error) {
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return Config{}, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Config{}, fmt.Errorf("%w: trailing data after the JSON object", ErrInvalidConfig)
	}
	if err := strictjson.Check(data, nil); err != nil { // a name given twice, at any depth
		return Config{}, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	c := defaultConfig()
	keys := slices.Sorted(maps.Keys(doc))
	var errs []error
	for _, key := range keys {
		raw := doc[key]
		if key == "api_key_set" { // written by MarshalJSON; ignored
			continue
		}
		i := slices.IndexFunc(settings, func(s setting) bool { return s.key == key })
		if i < 0 {
			// Keys match exactly, as everywhere else (strictjson): "Allow_X"
			// is not read as allow_x.
			if j := slices.IndexFunc(settings, func(s setting) bool { return strings.EqualFold(s.key, key) }); j >= 0 {
				return Config{}, fmt.Errorf("%w: %w", ErrInvalidConfig, &strictjson.KeyError{Path: key, Key: key, Problem: strictjson.ProblemCase, Want: []string{settings[j].key}})
			}
			return Config{}, fmt.Errorf("%w: json: unknown field %q", ErrInvalidConfig, key)
		}
		s := &settings[i]
		v, err := s.decode(raw)
		if err != nil {
			errs = append(errs, configErr(s.field, string(raw), "malformed"))
			continue
		}
		if v == nil {
			continue
		}
		if err := s.check(v, fmt.Sprint(v)); err != nil {
			errs = append(errs, err)
		} else {
			s.assign(&c.Settings, v)
		}
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	c.normalize()
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// MarshalJSON writes every setting under its JSON key, without the API key:
// "api_key_set" says whether one is configured. A password in the feedback
// URL is masked, and an empty feedback setting is left out.
func (c Settings) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for _, kv := range c.wire() {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.Key)
		v, err := json.Marshal(kv.Value.Any())
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// wire lists the settings as MarshalJSON and LogValue write them.
func (c Settings) wire() []slog.Attr {
	out := make([]slog.Attr, 0, len(settings))
	for i := range settings {
		s := &settings[i]
		key, v := s.key, s.value(&c)
		switch {
		case s.key == "api_key":
			key, v = "api_key_set", c.APIKey != ""
		case s.format == "feedback":
			if v == "" {
				continue
			}
			v = redactURL(v.(string))
		}
		out = append(out, slog.Any(key, v))
	}
	return out
}

// timeoutS is Timeout in whole seconds, as the environment and JSON give it
// (a fraction of a second rounds up, so a valid Go value stays valid).
func (c Settings) timeoutS() int {
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

// String describes the settings with the API key redacted.
func (c Settings) String() string {
	b, _ := c.MarshalJSON()
	return "selector.Settings" + string(b)
}

// GoString is String, so %#v cannot print the API key either.
func (c Settings) GoString() string { return c.String() }

// String describes the configuration's settings with the API key redacted.
func (c Config) String() string {
	b, _ := c.MarshalJSON()
	return "selector.Config" + string(b)
}

// GoString is String, so %#v cannot print the API key either.
func (c Config) GoString() string { return c.String() }

// LogValue renders the configuration for log/slog without the API key.
func (c Settings) LogValue() slog.Value { return slog.GroupValue(c.wire()...) }
