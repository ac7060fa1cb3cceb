package capi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Strict decodes the JSON object b, the argument called name, into v (a
// pointer to a struct) with every key exactly one of v's JSON names, at every
// level of nested structs, and no key twice in one object. encoding/json alone
// would match "Allow_Unsafe" to allow_unsafe and keep the last of two equal
// keys: a policy spelt in a way its author did not check must be refused, not
// guessed at.
func Strict(name string, b []byte, present bool, v any) *Result {
	if r := JSON(name, b, present, nil); r != nil {
		return r
	}
	if err := exactKeys(reflect.TypeOf(v), b, ""); err != nil {
		r := Fail(ErrArgument, "%s: %v", name, err)
		return &r
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		r := Fail(ErrArgument, "%s: %v", name, err)
		return &r
	}
	return nil
}

var unmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

// exactKeys checks the keys of the JSON value b against the Go type t it is
// decoded into. Values of other shapes are left to the decoder's own errors.
func exactKeys(t reflect.Type, b []byte, at string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var members map[string]json.RawMessage
		keys, ok := objectKeys(b)
		if !ok || json.Unmarshal(b, &members) != nil {
			return nil
		}
		fields := jsonFields(t)
		seen := make(map[string]bool, len(keys))
		for _, k := range keys {
			if seen[k] {
				return fmt.Errorf("the key %q is given twice", at+k)
			}
			seen[k] = true
			ft, known := fields[k]
			if !known {
				return unknownKey(at+k, k, fields)
			}
			if err := exactKeys(ft, members[k], at+k+"."); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(b, &items) != nil {
			return nil
		}
		for i, it := range items {
			if err := exactKeys(t.Elem(), it, fmt.Sprintf("%s%d.", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func unknownKey(path, key string, fields map[string]reflect.Type) error {
	names := make([]string, 0, len(fields))
	for n := range fields {
		if strings.EqualFold(n, key) {
			return fmt.Errorf("unknown key %q (keys are matched exactly: write %q)", path, n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Errorf("unknown key %q (the keys are %s)", path, strings.Join(names, ", "))
}

// jsonFields maps each JSON name a struct decodes to the field's type,
// through embedded structs as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for n, ft := range jsonFields(et) {
					if _, own := out[n]; !own {
						out[n] = ft
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// objectKeys lists the member names of the JSON object b in order, repeats
// included; ok is false when b is not an object.
func objectKeys(b []byte) (keys []string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, false
		}
	}
	return keys, true
}
