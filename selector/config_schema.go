package selector

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Boolean spellings read by parseBool (any case, surrounding spaces ignored).
var (
	boolTrue  = []string{"1", "true", "t", "yes", "y", "on"}
	boolFalse = []string{"0", "false", "f", "no", "n", "off"}
)

// ConfigSchema returns, as a JSON document, every configuration setting:
// {"env_prefix","bool_true","bool_false","fields":[{"name","go_field","type",
// "default","env","want","required","nullable","min","max","choices",
// "fold_case","format","secret"}]}, in Config's order. It is derived from
// Config itself (JSON names, validate tags, defaults) and the table of
// environment variables, so other languages (the Python package, through the
// C ABI) read the rules instead of writing them again, and a field added to
// Config reaches them unchanged. Each call returns a new copy.
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
	def := reflect.ValueOf(defaultConfig())
	t := def.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() {
			continue
		}
		if name == "-" {
			if w, ok := wireForms[sf.Name]; ok {
				f := schemaField(w.name, w.goField, w.typ, w.def, w.validate)
				s.Fields = append(s.Fields, f)
			}
			continue
		}
		ft, nullable := sf.Type, false
		if ft.Kind() == reflect.Pointer { // optional: nil means "not set"
			ft, nullable = ft.Elem(), true
		}
		typ := "string"
		switch ft.Kind() {
		case reflect.Bool:
			typ = "bool"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			typ = "int"
		case reflect.Float32, reflect.Float64:
			typ = "float"
		}
		var dv any
		if fv := def.Field(i); !nullable {
			dv = fv.Interface()
		} else if !fv.IsNil() {
			dv = fv.Elem().Interface()
		}
		if m, ok := dv.(json.Marshaler); ok && typ == "string" { // Provider, Reasoning: "" is written "auto", "off"
			if b, err := m.MarshalJSON(); err == nil {
				var str string
				if json.Unmarshal(b, &str) == nil {
					dv = str
				}
			}
		}
		if typ == "string" && dv != nil {
			dv = reflect.ValueOf(dv).String()
		}
		if typ == "string" && dv == "" {
			dv = nil
		}
		f := schemaField(name, sf.Name, typ, dv, sf.Tag.Get("validate"))
		f.Nullable = nullable || (typ == "string" && dv == nil && !f.Required)
		s.Fields = append(s.Fields, f)
	}
	return s
}

// wireForms publishes the settings whose Go field is not their JSON and
// environment form (json:"-"): the schema describes what ConfigFromJSON and
// ConfigFromEnv read, in the validate tag's syntax.
var wireForms = map[string]struct {
	name, goField, typ string
	def                any
	validate           string
}{
	// Timeout is whole seconds on the wire.
	"Timeout": {"timeout_s", "Timeout", "int", int(DefaultTimeout / time.Second), "min=1,max=120"},
	// FailOpen is published negated, as the variable and the JSON key are.
	"FailOpen": {"fail_closed", "FailClosed", "bool", DefaultFailClosed, ""},
	// MaxSearches is 0-10 on the wire (0: off); in Go off is NoSearch.
	"MaxSearches": {"max_searches", "MaxSearches", "int", DefaultMaxSearches, "min=0,max=" + strconv.Itoa(MaxMaxSearches)},
}

func schemaField(name, goField, typ string, def any, tag string) configField {
	info := configFields[goField]
	f := configField{Name: name, GoField: goField, Type: typ, Default: def, Want: info.want, Secret: info.secret}
	if info.env != "" {
		f.Env = strings.Split(info.env, " or ")
	}
	for _, rule := range strings.Split(tag, ",") {
		key, val, _ := strings.Cut(rule, "=")
		switch key {
		case "required":
			f.Required = true
		case "min", "gte":
			if v, err := strconv.ParseFloat(val, 64); err == nil {
				f.Min = &v
			}
		case "max", "lte":
			if v, err := strconv.ParseFloat(val, 64); err == nil {
				f.Max = &v
			}
		case "oneof":
			f.Choices, f.FoldCase = strings.Fields(val), true
		case "http_url":
			f.Format = "http_url"
		}
	}
	return f
}
