package rank

import (
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// schemaText extracts the words a JSON Schema contributes to a tool's
// searchable text: property names and the values of "description", "title"
// and "enum". It scans the raw bytes once instead of decoding the schema into
// maps, which keeps index builds over large catalogs fast. Keys that are JSON
// Schema keywords are not property names; a key counts as a property name
// when its enclosing object is the value of "properties" (or
// "patternProperties"/"$defs"/"definitions").
//
// Malformed input yields whatever was read before the problem; registered
// schemas are always valid JSON.
//
// The callbacks receive the decoded string as bytes that are only valid during
// the call (no copy is made for strings without escapes). Strings with escapes
// are decoded into *buf, which callers analysing many schemas keep from call
// to call; raw itself is never written to.
func schemaText(raw []byte, buf *[]byte, names, texts func(s []byte)) {
	type frame struct {
		isObject   bool
		propsOwner bool    // this object is the value of "properties" and similar
		key        keyKind // last key read in this object
	}
	var stackArr [16]frame
	stack := stackArr[:0]
	expectKey := false
	pendingKey := keyOther // key whose value comes next (at the parent level)
	for i := 0; i < len(raw); {
		c := raw[i]
		switch c {
		case '{':
			owner := pendingKey == keyProps
			if len(stack) > 0 && stack[len(stack)-1].propsOwner {
				owner = false // a property's own schema
			}
			stack = append(stack, frame{isObject: true, propsOwner: owner})
			expectKey = true
			pendingKey = keyOther
			i++
		case '[':
			k := pendingKey
			stack = append(stack, frame{key: k})
			pendingKey = keyOther
			i++
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			i++
		case ',':
			if len(stack) > 0 && stack[len(stack)-1].isObject {
				expectKey = true
			}
			i++
		case ':':
			expectKey = false
			i++
		case '"':
			b, n, esc := readJSONString(raw[i:])
			if n == 0 {
				return
			}
			i += n
			if len(stack) == 0 {
				continue
			}
			top := &stack[len(stack)-1]
			if top.isObject && expectKey {
				if top.propsOwner {
					top.key = keyOther
					names(unescape(buf, b, esc))
				} else {
					top.key = classifyKey(b)
				}
				pendingKey = top.key
				continue
			}
			// A string value: in an object under key top.key, or in an array
			// that is the value of key top.key.
			if top.key == keyText {
				texts(unescape(buf, b, esc))
			}
			pendingKey = keyOther
		default:
			i++
		}
	}
}

type keyKind uint8

const (
	keyOther keyKind = iota
	keyProps         // properties, patternProperties, $defs, definitions
	keyText          // description, title, enum, examples
)

func classifyKey(b []byte) keyKind {
	switch string(b) {
	case "properties", "patternProperties", "$defs", "definitions":
		return keyProps
	case "description", "title", "enum", "examples":
		return keyText
	}
	return keyOther
}

// readJSONString reads the JSON string at the start of b and returns its raw
// content (between the quotes), the bytes consumed (0 when malformed) and
// whether it holds escapes.
func readJSONString(b []byte) ([]byte, int, bool) {
	esc := false
	for j := 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
			esc = true
		case '"':
			return b[1:j], j + 1, esc
		}
	}
	return nil, 0, false
}

// unescape decodes a raw JSON string body: raw itself when it holds no
// escapes (or does not decode), else the decoded text in *buf. It decodes
// as strconv.Unquote does, one character at a time, without allocating. *buf
// must never alias raw: raw is a slice of the tool's schema, and appending to
// it would overwrite the schema.
func unescape(buf *[]byte, raw []byte, esc bool) []byte {
	if !esc {
		return raw
	}
	out := (*buf)[:0]
	for s := unsafe.String(&raw[0], len(raw)); len(s) > 0; {
		r, multibyte, rest, err := strconv.UnquoteChar(s, '"')
		if err != nil || s[0] == '\n' {
			return raw
		}
		if r < utf8.RuneSelf || !multibyte {
			out = append(out, byte(r))
		} else {
			out = utf8.AppendRune(out, r)
		}
		s = rest
	}
	*buf = out
	if !utf8.Valid(out) {
		return raw
	}
	return out
}
