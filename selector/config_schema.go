package selector

import (
	"bytes"
	"encoding/json"
	"sync"
)

// ConfigSchema returns, as a JSON document, every configuration setting:
// {"env_prefix","bool_true","bool_false","fields":[{"name","go_field","type",
// "default","env","want","required","nullable","min","max","choices",
// "fold_case","format","secret"}]}. It is written from the one table of
// settings the environment and JSON readers and Validate read, so other
// languages (the Python package, through the C ABI) and the command read the
// rules and the variable names instead of writing them again. Each call
// returns a new copy.
func ConfigSchema() json.RawMessage { return bytes.Clone(schemaJSON()) }

// schemaJSON is the schema, encoded once.
var schemaJSON = sync.OnceValue(func() []byte {
	b, err := json.Marshal(schema())
	if err != nil {
		panic("selector: the configuration schema does not encode: " + err.Error())
	}
	return b
})

// configSchema is the document ConfigSchema writes.
type configSchema struct {
	// EnvPrefix is the common prefix of the variables.
	EnvPrefix string `json:"env_prefix"`
	// BoolTrue and BoolFalse are the accepted spellings of a boolean variable.
	BoolTrue  []string `json:"bool_true"`
	BoolFalse []string `json:"bool_false"`
	// Fields lists the settings in Config's order.
	Fields []configField `json:"fields"`
}

// configField describes one setting as ConfigFromJSON and ConfigFromEnv read it.
type configField struct {
	// Name is the JSON key (and the Python attribute), e.g. "max_calls".
	Name string `json:"name"`
	// GoField is the Config field, e.g. "MaxCalls" ("FailClosed" for the
	// negation of FailOpen).
	GoField string `json:"go_field"`
	// Type is "string", "int", "float" or "bool".
	Type string `json:"type"`
	// Default is the value a missing setting takes (null: none).
	Default any `json:"default"`
	// Env lists the variables read, first set wins; empty when none.
	Env []string `json:"env"`
	// Want describes the accepted values in words, as errors say them.
	Want string `json:"want"`
	// Required settings may not be empty.
	Required bool `json:"required"`
	// Nullable settings may be null (unset): optional strings (empty means
	// none) and pointer fields.
	Nullable bool `json:"nullable"`
	// Min and Max bound a number, inclusive (null: unbounded).
	Min *float64 `json:"min"`
	Max *float64 `json:"max"`
	// Choices lists the accepted values of a string; FoldCase says they are
	// matched after lower-casing (ConfigFromEnv and ConfigFromJSON do so).
	Choices  []string `json:"choices,omitempty"`
	FoldCase bool     `json:"fold_case,omitempty"`
	// Format is "http_url" for a URL; empty for free text.
	Format string `json:"format,omitempty"`
	// Secret values are never shown in an error or a log.
	Secret bool `json:"secret"`
}

// schema describes every setting (see ConfigSchema).
func schema() configSchema {
	s := configSchema{EnvPrefix: EnvPrefix, BoolTrue: boolTrue, BoolFalse: boolFalse}
	for i := range settings {
		st := &settings[i]
		f := configField{Name: st.key, GoField: st.field, Type: st.typ, Default: st.def, Env: st.envVars(),
			Want: st.wants(), Required: st.required, Secret: st.secret, Choices: st.choices, FoldCase: len(st.choices) > 0,
			Nullable: st.typ == "string" && st.def == nil && !st.required}
		if st.ranged {
			f.Min, f.Max = &st.min, &st.max
		}
		if st.format == "http_url" {
			f.Format = st.format
		}
		s.Fields = append(s.Fields, f)
	}
	return s
}
