package selector

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/caarlos0/env/v11"

	"github.com/toolselect/toolselect/internal/toolname"
)

// envForm is the struct caarlos0/env fills from the environment: built once
// from the table of settings, one string field per variable a setting reads
// (tag env:"NAME"), so the variables are named in one place, the table, and
// every value is parsed, checked and worded by the table's own rules.
var envForm = func() reflect.Type {
	var fields []reflect.StructField
	for i := range settings {
		for j, name := range settings[i].envVars() {
			fields = append(fields, reflect.StructField{
				Name: "S" + strconv.Itoa(i) + "V" + strconv.Itoa(j),
				Type: reflect.TypeFor[string](),
				Tag:  reflect.StructTag(`env:"` + name + `"`),
			})
		}
	}
	return reflect.StructOf(fields)
}()

// readEnv returns, for each setting in table order, the text of each
// variable it reads (in envVars order; "" when unset), from environ or,
// when environ is nil, from the process environment.
func readEnv(environ map[string]string) ([][]string, error) {
	v := reflect.New(envForm)
	if err := env.ParseWithOptions(v.Interface(), env.Options{Environment: environ}); err != nil {
		return nil, fmt.Errorf("%w: reading the environment: %w", ErrInvalidConfig, err)
	}
	out := make([][]string, len(settings))
	f := 0
	for i := range settings {
		for range settings[i].envVars() {
			out[i] = append(out[i], v.Elem().Field(f).String())
			f++
		}
	}
	return out, nil
}

// EnvWarnings returns a warning for each variable of the environment
// [ConfigFromEnv] or [ConfigFromEnvMap] read that starts with [EnvPrefix] but
// names no setting, in name order, naming the setting's variable it most
// likely meant: "LLM_COMMON_TOOL_SELECTION_MAX_CALS names no setting and is
// ignored (did you mean LLM_COMMON_TOOL_SELECTION_MAX_CALLS?)"; nil when
// there is none, and for a Config built otherwise. An empty variable is
// unset, as for the settings; values are never shown. [New] logs each at
// WARN through [Config.Logger]; the CLI prints them, and the C ABI gives
// them to bindings (Python warns with them).
func (c Config) EnvWarnings() []string { return c.envWarnings }

// unknownEnv is EnvWarnings for environ (nil: the process environment).
func unknownEnv(environ map[string]string) []string {
	if environ == nil {
		environ = map[string]string{}
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, EnvPrefix) {
				environ[k] = v
			}
		}
	}
	known := map[string]bool{}
	keys := make([]string, len(settings))
	for i := range settings {
		keys[i] = settings[i].key
		for _, v := range settings[i].envVars() {
			known[v] = true
		}
	}
	var names []string
	for k, v := range environ {
		if strings.HasPrefix(k, EnvPrefix) && !known[k] && strings.TrimSpace(v) != "" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		msg := n + " names no setting and is ignored" // not its value: a misspelt API key is still a key
		if near := toolname.Near(strings.ToLower(strings.TrimPrefix(n, EnvPrefix)), keys); len(near) > 0 {
			msg += " (did you mean " + EnvPrefix + strings.ToUpper(near[0]) + "?)"
		}
		out = append(out, msg)
	}
	return out
}
