package registry

import (
	"encoding/json"
	"strconv"
)

// Registration checks every schema against the JSON Schema meta-schema and
// compiles it; with the jsonschema library that costs about 100 µs a schema,
// most of it the meta-schema check. precheck is an exact shortcut for the
// schemas most catalogs hold: it decides that a decoded schema is valid and
// compiles, keyword by keyword, as the draft 2020-12 meta-schema says, but
// only for a closed set of keywords whose meta-schema rules are simple
// (types, properties, items, required, enum, bounds, annotations). A schema
// using anything else ($ref, $defs, $id, $schema, patterns, content keywords,
// an unknown keyword) or failing a rule is not decided here: it goes through
// the library's compiler at registration, which accepts it or refuses it
// with its own message. So refusals are exactly those of the compiler, and a
// schema precheck accepts is compiled on its first validation.
// TestPrecheckAgreesWithCompiler and FuzzPrecheck hold it to that.

var simpleTypes = map[string]bool{"array": true, "boolean": true, "integer": true, "null": true, "number": true, "object": true, "string": true}

// precheck reports whether a decoded schema (the root must be an object) is
// decided valid without the compiler.
func precheck(v any) bool {
	switch x := v.(type) {
	case bool:
		return true
	case map[string]any:
		for k, val := range x {
			if !precheckKeyword(k, val) {
				return false
			}
		}
		return true
	}
	return false
}

func precheckKeyword(k string, v any) bool {
	switch k {
	case "type":
		switch t := v.(type) {
		case string:
			return simpleTypes[t]
		case []any:
			if len(t) == 0 {
				return false
			}
			seen := map[string]bool{}
			for _, e := range t {
				s, ok := e.(string)
				if !ok || !simpleTypes[s] || seen[s] {
					return false
				}
				seen[s] = true
			}
			return true
		}
		return false
	case "properties":
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, s := range m {
			if !precheck(s) {
				return false
			}
		}
		return true
	case "items", "additionalProperties", "not":
		return precheck(v)
	case "anyOf", "oneOf", "allOf":
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			return false
		}
		for _, s := range a {
			if !precheck(s) {
				return false
			}
		}
		return true
	case "required":
		a, ok := v.([]any)
		if !ok {
			return false
		}
		seen := make(map[string]bool, len(a))
		for _, e := range a {
			s, ok := e.(string)
			if !ok || seen[s] {
				return false
			}
			seen[s] = true
		}
		return true
	case "description", "title", "$comment", "format":
		_, ok := v.(string)
		return ok
	case "enum", "examples":
		_, ok := v.([]any)
		return ok
	case "const", "default":
		return true
	case "uniqueItems", "deprecated", "readOnly", "writeOnly":
		_, ok := v.(bool)
		return ok
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		_, ok := finiteNumber(v)
		return ok
	case "multipleOf":
		f, ok := finiteNumber(v)
		return ok && f > 0
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		n, ok := v.(json.Number)
		if !ok || len(n) == 0 || len(n) > 9 {
			return false
		}
		for _, c := range []byte(n) {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	return false
}

// finiteNumber reads a decoded JSON number that is a finite float64.
func finiteNumber(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return f, err == nil
}

// topRequired reads the root "required" of a schema precheck accepted.
func topRequired(doc any) []string {
	m, _ := doc.(map[string]any)
	a, _ := m["required"].([]any)
	if len(a) == 0 {
		return nil
	}
	out := make([]string, len(a))
	for i, e := range a {
		out[i], _ = e.(string)
	}
	return out
}
