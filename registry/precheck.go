package registry

import (
	"slices"
	"strconv"

	"github.com/toolselect/toolselect/internal/jsonscan"
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

// precheck reports whether a schema (valid JSON, the root an object) is
// decided valid without the compiler, and its top-level "required". It reads
// the bytes once, without decoding them, and holds the schema to the same
// structural limits as the compiler's path (depth, enum size); anything
// over them is left to that path, which says why.
func precheck(raw []byte, lim Limits) (ok bool, required []string) {
	p := prechecker{b: raw, lim: lim}
	p.ws()
	if p.i >= len(raw) || raw[p.i] != '{' {
		return false, nil
	}
	if !p.schema(1, true) {
		return false, nil
	}
	p.ws()
	return p.i == len(raw), p.required
}

type prechecker struct {
	b        []byte
	i        int
	lim      Limits
	required []string
}

func (p *prechecker) ws() { p.i = jsonscan.SkipSpace(p.b, p.i) }

func (p *prechecker) at(c byte) bool {
	p.ws()
	return p.i < len(p.b) && p.b[p.i] == c
}

// str reads a string and returns its content; plain is false when it holds
// an escape (the content is then not the decoded string).
func (p *prechecker) str() (s []byte, plain, ok bool) {
	if !p.at('"') {
		return nil, false, false
	}
	start := p.i + 1
	plain = true
	for p.i++; p.i < len(p.b); p.i++ {
		switch p.b[p.i] {
		case '\\':
			plain = false
			p.i++
		case '"':
			p.i++
			return p.b[start : p.i-1], plain, true
		}
	}
	return nil, false, false
}

// members walks an object at depth, calling f at each member's value. An
// object naming a member twice, or with an escaped name (which may decode to
// a name given before), is not decided here.
func (p *prechecker) members(depth int, f func(key []byte) bool) bool {
	if !p.at('{') || depth > p.lim.MaxSchemaDepth {
		return false
	}
	p.i++
	if p.at('}') {
		p.i++
		return true
	}
	var seen [][]byte // a name given twice is the compiler path's to refuse (strictjson)
	for {
		key, plain, ok := p.str()
		if !ok || !p.at(':') || !plain {
			return false
		}
		for _, k := range seen {
			if string(k) == string(key) {
				return false
			}
		}
		seen = append(seen, key)
		p.i++
		p.ws()
		if !f(key) {
			return false
		}
		switch {
		case p.at(','):
			p.i++
		case p.at('}'):
			p.i++
			return true
		default:
			return false
		}
	}
}

// elements walks an array at depth, calling f at each element; it returns
// the number of elements.
func (p *prechecker) elements(depth int, f func() bool) (int, bool) {
	if !p.at('[') || depth > p.lim.MaxSchemaDepth {
		return 0, false
	}
	p.i++
	if p.at(']') {
		p.i++
		return 0, true
	}
	for n := 1; ; n++ {
		p.ws()
		if !f() {
			return 0, false
		}
		switch {
		case p.at(','):
			p.i++
		case p.at(']'):
			p.i++
			return n, true
		default:
			return 0, false
		}
	}
}

// scalar reads a number or literal.
func (p *prechecker) scalar() []byte {
	p.ws()
	start := p.i
	for p.i < len(p.b) && !jsonscan.IsSpace(p.b[p.i]) && p.b[p.i] != ',' && p.b[p.i] != '}' && p.b[p.i] != ']' {
		p.i++
	}
	return p.b[start:p.i]
}

// value skips any value at depth, within the structural limits.
func (p *prechecker) value(depth int) bool {
	p.ws()
	if p.i >= len(p.b) {
		return false
	}
	switch p.b[p.i] {
	case '{':
		return p.members(depth, func(key []byte) bool {
			if string(key) == "enum" && p.at('[') {
				n, ok := p.elements(depth+1, func() bool { return p.value(depth + 2) })
				return ok && n <= p.lim.MaxEnum
			}
			return p.value(depth + 1)
		})
	case '[':
		_, ok := p.elements(depth, func() bool { return p.value(depth + 1) })
		return ok
	case '"':
		_, _, ok := p.str()
		return ok
	}
	return len(p.scalar()) > 0
}

func (p *prechecker) boolean() bool {
	s := string(p.scalar())
	return s == "true" || s == "false"
}

// schema checks a schema (an object, or a boolean below the root) at depth.
func (p *prechecker) schema(depth int, root bool) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] != '{' {
		return !root && p.boolean()
	}
	return p.members(depth, func(key []byte) bool {
		return p.keyword(string(key), depth+1, root)
	})
}

// keyword checks the value of keyword k of a schema; depth is the value's.
func (p *prechecker) keyword(k string, depth int, root bool) bool {
	switch k {
	case "type":
		if p.at('"') {
			s, plain, ok := p.str()
			return ok && plain && simpleTypes[string(s)]
		}
		var seen []string
		n, ok := p.elements(depth, func() bool {
			s, plain, ok := p.str()
			if !ok || !plain || !simpleTypes[string(s)] || slices.Contains(seen, string(s)) {
				return false
			}
			seen = append(seen, string(s))
			return true
		})
		return ok && n > 0
	case "properties":
		return p.members(depth, func([]byte) bool { return p.schema(depth+1, false) })
	case "items", "additionalProperties", "not":
		return p.schema(depth, false)
	case "anyOf", "oneOf", "allOf":
		n, ok := p.elements(depth, func() bool { return p.schema(depth+1, false) })
		return ok && n > 0
	case "required":
		var names []string
		_, ok := p.elements(depth, func() bool {
			s, plain, ok := p.str()
			if !ok || !plain || slices.Contains(names, string(s)) {
				return false
			}
			names = append(names, string(s))
			return true
		})
		if ok && root {
			p.required = names
		}
		return ok
	case "description", "title", "$comment", "format":
		_, _, ok := p.str()
		return ok
	case "enum":
		n, ok := p.elements(depth, func() bool { return p.value(depth + 1) })
		return ok && n <= p.lim.MaxEnum
	case "examples":
		_, ok := p.elements(depth, func() bool { return p.value(depth + 1) })
		return ok
	case "const", "default":
		return p.value(depth)
	case "uniqueItems", "deprecated", "readOnly", "writeOnly":
		return p.boolean()
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
		s := p.scalar()
		if len(s) == 0 || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
			return false
		}
		f, err := strconv.ParseFloat(string(s), 64)
		return err == nil && (k != "multipleOf" || f > 0)
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		s := p.scalar()
		if len(s) == 0 || len(s) > 9 {
			return false
		}
		for _, c := range s {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	return false
}
