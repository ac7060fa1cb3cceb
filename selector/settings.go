package selector

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// The environment's prefix, and the defaults and bounds other packages
// check against. Every other default and bound is in [ConfigSchema].
const (
	// EnvPrefix starts the name of every environment variable the selector
	// reads: the prefix and a setting's JSON key in upper case
	// (LLM_COMMON_TOOL_SELECTION_MAX_CALLS for "max_calls"). The base URL and
	// the API key fall back to OPENAI_BASE_URL and OPENAI_API_KEY.
	EnvPrefix = "LLM_COMMON_TOOL_SELECTION_"
	// DefaultModel is the model a zero [Config] asks.
	DefaultModel = "glm-4.5-air"
	// DefaultTopK is how many ranked tools a zero [Config] offers above the
	// budget ([Settings.TopK]).
	DefaultTopK = 10
	// MaxTopK bounds [Settings.TopK] and every per-request top K (select --k, the C
	// ABI's top_k): a model offered more tools than this gains nothing from ranking.
	MaxTopK = 1000
)

// defaultSearches is how many search rounds a zero Config makes.
const defaultSearches = 1

// Boolean spellings of the environment (any case, surrounding spaces ignored).
var (
	boolTrue  = []string{"1", "true", "t", "yes", "y", "on"}
	boolFalse = []string{"0", "false", "f", "no", "n", "off"}
)

// setting is one configuration setting, declared once: the environment
// reader, the JSON reader and writer, validation, the log record,
// [ConfigSchema] and [ConfigError] all read it from here, and the Python
// package reads it through ConfigSchema.
type setting struct {
	// key is the JSON key and the Python attribute; in upper case after
	// EnvPrefix, the environment variable.
	key string
	// field is the Config field errors name ("FailClosed" for FailOpen negated).
	field string
	// typ is the wire type: "string", "int", "float" or "bool".
	typ string
	// def is the default as the wire says it (nil: none).
	def any
	// min and max bound a number, inclusive, when ranged.
	min, max float64
	ranged   bool
	// choices lists the accepted values of a string (matched lower-cased).
	choices []string
	// required settings may not be empty; secret ones are never shown;
	// openAI ones fall back to the OPENAI_ variable of the same suffix.
	required, secret, openAI bool
	// format is "http_url" or "feedback" (checkFeedbackSpec) for a string.
	format string
	// unit and zero word a range ("an integer number of seconds from 1
	// (...) to 120"); want words what is neither a range nor a list.
	unit, zero, want string
	// get reads the wire value from a Config; set writes one parsed value
	// (int64, float64, bool or string). Nil: the Config field of that name.
	get func(c *Settings) any
	set func(c *Settings, v any)
	// exact is the Go value the bounds are checked on, where the wire
	// value is rounded or folded (nil: get).
	exact func(c *Settings) any
}

// settings is the table, in the order ConfigSchema, MarshalJSON and
// LogValue list the settings.
var settings = []setting{
	{key: "model", field: "Model", typ: "string", def: DefaultModel, required: true, want: "a non-empty model name"},
	{key: "fallback_model", field: "FallbackModel", typ: "string", want: "a model name, or unset for none"},
	{key: "max_calls", field: "MaxCalls", typ: "int", def: 5, ranged: true, min: 1, max: 20},
	// Timeout is a time.Duration in Go and whole seconds on the wire.
	{key: "timeout_s", field: "Timeout", typ: "int", def: 30, ranged: true, min: 1, max: 120, unit: " number of seconds",
		get:   func(c *Settings) any { return c.timeoutS() },
		set:   func(c *Settings, v any) { c.Timeout = time.Duration(v.(int64)) * time.Second },
		exact: func(c *Settings) any { return c.Timeout.Seconds() }},
	{key: "temperature", field: "Temperature", typ: "float", def: 0.0, ranged: true, min: 0, max: 1},
	// FailOpen is the Go switch, so that a literal is never fail-open by
	// omission; the wire says it negated.
	{key: "fail_closed", field: "FailClosed", typ: "bool", def: true,
		get: func(c *Settings) any { return !c.FailOpen },
		set: func(c *Settings, v any) { c.FailOpen = !v.(bool) }},
	{key: "base_url", field: "BaseURL", typ: "string", openAI: true, secret: true, format: "http_url", want: "an http or https URL"},
	{key: "api_key", field: "APIKey", typ: "string", openAI: true, secret: true, want: "any text"},
	{key: "mode", field: "Mode", typ: "string", def: string(ModeJSON), choices: []string{string(ModeJSON), string(ModeNative)}},
	{key: "max_response_bytes", field: "MaxResponseBytes", typ: "int", def: 4 << 20, ranged: true, min: 1024, max: 1 << 30, unit: " number of bytes"},
	{key: "feedback", field: "Feedback", typ: "string", format: "feedback",
		want: "a file path or a redis://[:password@]host[:port][/db] URL (rediss:// for TLS), or unset for off"},
	{key: "offer_tokens", field: "OfferTokens", typ: "int", def: 10000, ranged: true, min: 1, max: 10_000_000, unit: " number of tokens"},
	{key: "top_k", field: "TopK", typ: "int", def: DefaultTopK, ranged: true, min: 1, max: MaxTopK},
	// max_searches 0 is NoSearch in Go.
	{key: "max_searches", field: "MaxSearches", typ: "int", def: defaultSearches, ranged: true, min: 0, max: 10, zero: " (no search round)",
		get:   func(c *Settings) any { return c.Searches() },
		set:   func(c *Settings, v any) { c.MaxSearches, c.NoSearch = int(v.(int64)), v.(int64) == 0 },
		exact: func(c *Settings) any { return c.MaxSearches }},
	{key: "provider", field: "Provider", typ: "string", def: string(ProviderAuto), choices: names(providers),
		get: func(c *Settings) any { return string(c.provider()) }},
	{key: "reasoning", field: "Reasoning", typ: "string", def: string(ReasoningOff), choices: names(reasoningLevels),
		get: func(c *Settings) any { return string(c.reasoning()) }},
	{key: "max_tokens", field: "MaxTokens", typ: "int", def: 0, ranged: true, min: 0, max: 1_000_000, unit: " number of tokens", zero: " (the dialect's default)"},
}

// names spells a list of string-typed values, as the settings take them.
func names[S ~string](vs []S) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// settingByKey finds a setting by its JSON key.
func settingByKey(key string) (*setting, bool) {
	for i := range settings {
		if settings[i].key == key {
			return &settings[i], true
		}
	}
	return nil, false
}

// envOf is the environment variable of the setting with this JSON key.
func envOf(key string) string {
	s, ok := settingByKey(key)
	if !ok {
		panic("selector: no setting " + key)
	}
	return s.envVars()[0]
}

// envVars lists the variables read for the setting, first set wins.
func (s *setting) envVars() []string {
	suffix := strings.ToUpper(s.key)
	if s.openAI {
		return []string{EnvPrefix + suffix, "OPENAI_" + suffix}
	}
	return []string{EnvPrefix + suffix}
}

// wants words the accepted values, as errors and the schema say them.
func (s *setting) wants() string {
	switch {
	case s.want != "":
		return s.want
	case s.typ == "bool":
		return "one of " + strings.Join(boolTrue, ", ") + " or " + strings.Join(boolFalse, ", ") + " (any case)"
	case len(s.choices) == 2:
		return s.choices[0] + " or " + s.choices[1]
	case len(s.choices) > 0:
		return "one of " + strings.Join(s.choices, ", ")
	case s.typ == "float":
		return "a number from " + num(s.min) + " to " + num(s.max)
	}
	return "an integer" + s.unit + " from " + num(s.min) + s.zero + " to " + num(s.max)
}

// num spells a bound in full (10000000, not 1e+07).
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// rule is the setting's check in validator/v10's syntax.
func (s *setting) rule() string {
	var r []string
	if s.required {
		r = append(r, "required")
	}
	if s.ranged {
		r = append(r, "min="+num(s.min), "max="+num(s.max))
	}
	if len(s.choices) > 0 {
		r = append(r, "oneof="+strings.Join(s.choices, " "))
	}
	if s.format != "" {
		r = append(r, "omitempty", s.format)
	}
	return strings.Join(r, ",")
}

// value reads the setting's wire value from c.
func (s *setting) value(c *Settings) any {
	if s.get != nil {
		return s.get(c)
	}
	f := reflect.ValueOf(c).Elem().FieldByName(s.field)
	switch s.typ {
	case "string":
		return f.String()
	case "int":
		return int(f.Int())
	}
	return f.Interface()
}

// checked is the value the rule is checked on.
func (s *setting) checked(c *Settings) any {
	if s.exact != nil {
		return s.exact(c)
	}
	return s.value(c)
}

// assign writes a parsed value (int64, float64, bool or string) to c.
func (s *setting) assign(c *Settings, v any) {
	if s.set != nil {
		s.set(c, v)
		return
	}
	f := reflect.ValueOf(c).Elem().FieldByName(s.field)
	switch v := v.(type) {
	case int64:
		f.SetInt(v)
	case float64:
		f.SetFloat(v)
	case bool:
		f.SetBool(v)
	case string:
		f.SetString(v)
	}
}

// parse reads the setting from environment text (trimmed).
func (s *setting) parse(text string) (any, error) {
	switch s.typ {
	case "int":
		return strconv.ParseInt(text, 10, 64)
	case "float":
		return strconv.ParseFloat(text, 64)
	case "bool":
		return parseBool(text)
	}
	if len(s.choices) > 0 {
		return strings.ToLower(text), nil
	}
	return text, nil
}

// defaultConfig returns the documented defaults: every setting's default.
func defaultConfig() Config {
	var c Settings
	for i := range settings {
		s := &settings[i]
		switch d := s.def.(type) {
		case int:
			s.assign(&c, int64(d))
		case nil:
		default:
			s.assign(&c, d)
		}
	}
	c.normalize()
	return Config{Settings: c}
}

// decode reads the setting from its JSON value: int64, float64, bool or
// string, or nil for null (the default stays).
func (s *setting) decode(raw json.RawMessage) (any, error) {
	var v any
	var err error
	switch s.typ {
	case "int":
		var n *int64
		err = json.Unmarshal(raw, &n)
		if n != nil {
			v = *n
		}
	case "float":
		var f *float64
		err = json.Unmarshal(raw, &f)
		if f != nil {
			v = *f
		}
	case "bool":
		var b *bool
		err = json.Unmarshal(raw, &b)
		if b != nil {
			v = *b
		}
	default:
		var t *string
		err = json.Unmarshal(raw, &t)
		if t != nil {
			v = *t
			if len(s.choices) > 0 {
				v = strings.ToLower(strings.TrimSpace(*t))
			}
		}
	}
	return v, err
}

// defaults is defaultConfig, for the code that reads one default.
var defaults = defaultConfig()
