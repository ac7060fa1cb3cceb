package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaFor infers the JSON Schema of a tool's arguments from the Go type T,
// a struct, with github.com/google/jsonschema-go: each exported field is a
// property named as encoding/json names it; a field is required unless its
// json tag says omitempty or omitzero; a `jsonschema:"..."` tag is the
// property's description; an `enum:"a,b"` tag lists the values it may take
// (strings, numbers or booleans, as the field's type reads them; for a
// slice, its items); properties not declared are refused
// (additionalProperties false). Cyclic types, and maps without string keys,
// functions, channels and complex numbers, are errors.
//
// time.Time, time.Duration, netip.Addr, netip.Prefix, netip.AddrPort and
// url.URL are strings with a format (date-time, go-duration with a
// pattern, ip-address, ip-prefix, ip-address-port, uri), and a schema with
// a format names a 2020-12 dialect that asserts formats: the registry
// checks each before [Entry.DecodeArgs] decodes, and a duration or URL is
// decoded from its string. A value refused is refused at its own pointer.
func SchemaFor[T any]() (json.RawMessage, error) {
	t := reflect.TypeFor[T]()
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct {
		return nil, fmt.Errorf("inferring a schema from %s: tool arguments are a JSON object, so the type must be a struct", t)
	}
	s, err := jsonschema.ForType(base, &jsonschema.ForOptions{TypeSchemas: typeSchemas()})
	if err != nil {
		return nil, fmt.Errorf("inferring a schema from %s: %w", t, err)
	}
	if err := applyEnums(base, s); err != nil {
		return nil, fmt.Errorf("inferring a schema from %s: %w", t, err)
	}
	if hasFormat(s) {
		s.Schema = formatAssertionDialect
	}
	return json.Marshal(s)
}

// applyEnums copies the `enum` tags of t's fields (t as For read it) into s.
func applyEnums(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return applyEnums(t.Elem(), s.Items)
	case reflect.Map:
		return applyEnums(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
	default:
		return nil
	}
	for _, f := range reflect.VisibleFields(t) {
		name, ok := memberName(f)
		if !ok {
			continue
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		if tag, ok := f.Tag.Lookup("enum"); ok {
			if err := setEnum(f, tag, ps); err != nil {
				return err
			}
		}
		if err := applyEnums(f.Type, ps); err != nil {
			return err
		}
	}
	return nil
}

// memberName is the JSON member name encoding/json reads field f from,
// or false for a field it leaves out (embedded, unexported, json:"-"):
// the one reading of a struct's members that SchemaFor's enums and the
// decoding of text types share.
func memberName(f reflect.StructField) (string, bool) {
	if f.Anonymous || !f.IsExported() {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return "", false
	case "":
		return f.Name, true
	}
	return name, true
}

// setEnum sets the enum of field f's schema ps (of its items for a slice)
// from the tag's comma-separated values, read as f's type reads them.
func setEnum(f reflect.StructField, tag string, ps *jsonschema.Schema) error {
	ft, nullable := f.Type, false
	for ft.Kind() == reflect.Pointer {
		ft, nullable = ft.Elem(), true
	}
	if (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) && ps.Items != nil {
		ft, ps, nullable = ft.Elem(), ps.Items, false
		for ft.Kind() == reflect.Pointer {
			ft, nullable = ft.Elem(), true
		}
	}
	if strings.TrimSpace(tag) == "" {
		return fmt.Errorf("field %s: empty enum tag", f.Name)
	}
	var values []any
	for _, raw := range strings.Split(tag, ",") {
		v, err := enumValue(ft, strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("field %s: enum value %q: %w", f.Name, raw, err)
		}
		values = append(values, v)
	}
	if nullable {
		values = append(values, nil)
	}
	ps.Enum = values
	return nil
}

// enumValue reads one enum value as a field of kind t holds it.
func enumValue(t reflect.Type, s string) (any, error) {
	switch t.Kind() {
	case reflect.String:
		return s, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.ParseInt(s, 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.ParseUint(s, 10, t.Bits())
	case reflect.Float32, reflect.Float64:
		return strconv.ParseFloat(s, t.Bits())
	case reflect.Bool:
		return strconv.ParseBool(s)
	}
	return nil, fmt.Errorf("an enum tag needs a string, number or boolean field, not %s", t)
}

// decodeInto decodes the checked document into the value into points to:
// the text types' strings are read first (withTextValues), so a value
// that does not parse is refused at its own pointer.
func decodeInto(tool string, checked json.RawMessage, into any) error {
	checked, bad := withTextValues(checked, into)
	if bad != nil {
		return &ValidationError{Tool: tool, Violations: []Violation{*bad}}
	}
	err := json.Unmarshal(checked, into)
	if err == nil {
		return nil
	}
	viol := Violation{Rule: "decode", Message: err.Error()}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			viol.Pointer = "/" + strings.ReplaceAll(te.Field, ".", "/")
		}
		viol.Message = fmt.Sprintf("a JSON %s does not fit the handler's Go type %s", te.Value, te.Type)
	}
	return &ValidationError{Tool: tool, Violations: []Violation{viol}}
}
