package selector

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/caarlos0/env/v11"
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
