package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// formatAssertionDialect is the "$schema" of a tool schema whose "format" keywords
// are assertions, not annotations: a 2020-12 dialect whose meta-schema
// requires the format-assertion vocabulary. The registry knows it without
// loading anything; SchemaFor writes it into every schema with a format, so
// the formats it writes (date-time, uri, go-duration, ip-address,
// ip-prefix, ip-address-port) are checked before any handler decodes the
// arguments. A catalog schema may name it too.
const formatAssertionDialect = "https://toolselect.dev/schema/2020-12/format-assertion"

// formatAssertionMeta is that dialect's meta-schema: the 2020-12
// vocabularies, format-assertion instead of format-annotation.
const formatAssertionMeta = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"$id": "` + formatAssertionDialect + `",
	"$vocabulary": {
		"https://json-schema.org/draft/2020-12/vocab/core": true,
		"https://json-schema.org/draft/2020-12/vocab/applicator": true,
		"https://json-schema.org/draft/2020-12/vocab/unevaluated": true,
		"https://json-schema.org/draft/2020-12/vocab/validation": true,
		"https://json-schema.org/draft/2020-12/vocab/meta-data": true,
		"https://json-schema.org/draft/2020-12/vocab/format-assertion": true,
		"https://json-schema.org/draft/2020-12/vocab/content": true
	},
	"$dynamicAnchor": "meta",
	"allOf": [{"$ref": "https://json-schema.org/draft/2020-12/schema"}]
}`

// durationPattern is Go's duration string as time.ParseDuration reads it:
// "90s", "1h30m", "-1.5h", "0".
const durationPattern = `^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`

// textTypes are the Go types SchemaFor writes as formatted strings, each
// with its schema and how a string becomes the value encoding/json decodes.
var textTypes = map[reflect.Type]struct {
	schema func() *jsonschema.Schema
	// parse reads the string; the value returned is what encoding/json
	// decodes into the type (nil: the string itself).
	parse func(s string) (any, error)
}{
	reflect.TypeFor[time.Time](): {
		func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Format: "date-time"} },
		func(s string) (any, error) { _, err := time.Parse(time.RFC3339Nano, s); return nil, err },
	},
	reflect.TypeFor[time.Duration](): {
		func() *jsonschema.Schema {
			return &jsonschema.Schema{Type: "string", Format: "go-duration", Pattern: durationPattern,
				Description: `a Go duration: a number and a unit (ns, us, ms, s, m, h), as in "90s" or "1h30m"`}
		},
		func(s string) (any, error) {
			d, err := time.ParseDuration(s)
			return int64(d), err
		},
	},
	reflect.TypeFor[url.URL](): {
		func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Format: "uri"} },
		func(s string) (any, error) {
			u, err := url.Parse(s)
			if err != nil {
				return nil, err
			}
			return u, nil // decoded as url.URL's exported fields
		},
	},
	reflect.TypeFor[netip.Addr](): {
		func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Format: "ip-address"} },
		func(s string) (any, error) { _, err := netip.ParseAddr(s); return nil, err },
	},
	reflect.TypeFor[netip.Prefix](): {
		func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Format: "ip-prefix"} },
		func(s string) (any, error) { _, err := netip.ParsePrefix(s); return nil, err },
	},
	reflect.TypeFor[netip.AddrPort](): {
		func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Format: "ip-address-port"} },
		func(s string) (any, error) { _, err := netip.ParseAddrPort(s); return nil, err },
	},
}

// typeSchemas is SchemaFor's ForOptions.TypeSchemas: the text types.
func typeSchemas() map[reflect.Type]*jsonschema.Schema {
	m := make(map[reflect.Type]*jsonschema.Schema, len(textTypes))
	for t, tt := range textTypes {
		m[t] = tt.schema()
	}
	return m
}

// goFormats are the formats the registry asserts beyond the library's own
// (date-time and uri are its): each is the Go parser of the type that
// SchemaFor writes it for, so what passes the schema decodes.
var goFormats = []*sjs.Format{
	{Name: "go-duration", Validate: stringFormat(func(s string) error { _, err := time.ParseDuration(s); return err })},
	{Name: "ip-address", Validate: stringFormat(func(s string) error { _, err := netip.ParseAddr(s); return err })},
	{Name: "ip-prefix", Validate: stringFormat(func(s string) error { _, err := netip.ParsePrefix(s); return err })},
	{Name: "ip-address-port", Validate: stringFormat(func(s string) error { _, err := netip.ParseAddrPort(s); return err })},
}

// stringFormat checks strings with parse; other values pass (a format
// constrains strings only).
func stringFormat(parse func(string) error) func(any) error {
	return func(v any) error {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		return parse(s)
	}
}

// formatAssertionDoc is the dialect's meta-schema decoded, once.
var formatAssertionDoc = sync.OnceValues(func() (any, error) {
	return sjs.UnmarshalJSON(strings.NewReader(formatAssertionMeta))
})

// useFormats makes c know the format-assertion dialect and the Go formats.
func useFormats(c *sjs.Compiler) error {
	meta, err := formatAssertionDoc()
	if err != nil {
		return err
	}
	if err := c.AddResource(formatAssertionDialect, meta); err != nil {
		return err
	}
	for _, f := range goFormats {
		c.RegisterFormat(f)
	}
	return nil
}

// hasFormat reports whether s or a schema below it has a format.
func hasFormat(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	if s.Format != "" {
		return true
	}
	for _, p := range s.Properties {
		if hasFormat(p) {
			return true
		}
	}
	for _, d := range s.Defs {
		if hasFormat(d) {
			return true
		}
	}
	return hasFormat(s.Items) || hasFormat(s.AdditionalProperties)
}

// textValues rewrites the checked arguments v (decoded with UseNumber) for
// encoding/json to decode into t: each string at a text type is parsed
// (a failure is a Violation at its JSON pointer, rule "decode") and
// replaced by what encoding/json reads into that type.
func textValues(v any, t reflect.Type, ptr string) (any, *Violation) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if tt, ok := textTypes[t]; ok {
		s, isString := v.(string)
		if !isString {
			return v, nil
		}
		out, err := tt.parse(s)
		if err != nil {
			return v, &Violation{Pointer: ptr, Rule: "decode", Message: fmt.Sprintf("%q is not a %s: %v", s, t, err)}
		}
		if out == nil {
			return v, nil
		}
		return out, nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		for _, f := range reflect.VisibleFields(t) {
			name, ok := memberName(f)
			if !ok {
				continue
			}
			if fv, ok := obj[name]; ok {
				nv, viol := textValues(fv, f.Type, ptr+jsonPointer([]string{name}))
				if viol != nil {
					return v, viol
				}
				obj[name] = nv
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return v, nil
		}
		for i := range arr {
			nv, viol := textValues(arr[i], t.Elem(), fmt.Sprintf("%s/%d", ptr, i))
			if viol != nil {
				return v, viol
			}
			arr[i] = nv
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok || t.Key().Kind() != reflect.String {
			return v, nil
		}
		for k, fv := range obj {
			nv, viol := textValues(fv, t.Elem(), ptr+jsonPointer([]string{k}))
			if viol != nil {
				return v, viol
			}
			obj[k] = nv
		}
	}
	return v, nil
}

// hasText reports whether a value of t holds a text type anywhere (cached
// per type): only then are the arguments rewritten before decoding.
func hasText(t reflect.Type) bool {
	if v, ok := textCache.Load(t); ok {
		return v.(bool)
	}
	found := hasTextIn(t, map[reflect.Type]bool{})
	textCache.Store(t, found)
	return found
}

var textCache sync.Map // reflect.Type -> bool

func hasTextIn(t reflect.Type, seen map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if _, ok := textTypes[t]; ok {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			if f.IsExported() && !f.Anonymous && hasTextIn(f.Type, seen) {
				return true
			}
		}
	case reflect.Slice, reflect.Array, reflect.Map:
		return hasTextIn(t.Elem(), seen)
	}
	return false
}

// withTextValues is checked rewritten by textValues for into's type, or
// checked itself when the type holds no text type.
func withTextValues(checked json.RawMessage, into any) (json.RawMessage, *Violation) {
	t := reflect.TypeOf(into)
	if t == nil || !hasText(t) {
		return checked, nil
	}
	dec := json.NewDecoder(bytes.NewReader(checked))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return checked, nil // encoding/json reports it
	}
	v, viol := textValues(v, t, "")
	if viol != nil {
		return nil, viol
	}
	out, err := json.Marshal(v)
	if err != nil {
		return checked, nil
	}
	return out, nil
}
