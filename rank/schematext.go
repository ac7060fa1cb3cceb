package rank

import (
	"strconv"
	"unicode/utf8"
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
func schemaText(raw []byte, names, texts func(s string)) {
	type frame struct {
		isObject   bool
		propsOwner bool   // this object is the value of "properties" and similar
		key        string // last key read in this object
	}
	stack := make([]frame, 0, 16)
	expectKey := false
	pendingKey := "" // key whose value comes next (at the parent level)
	for i := 0; i < len(raw); {
		c := raw[i]
		switch c {
		case '{':
			owner := pendingKey == "properties" || pendingKey == "patternProperties" || pendingKey == "$defs" || pendingKey == "definitions"
			if len(stack) > 0 && stack[len(stack)-1].propsOwner {
				owner = false // a property's own schema
			}
			stack = append(stack, frame{isObject: true, propsOwner: owner})
			expectKey = true
			pendingKey = ""
			i++
		case '[':
			k := pendingKey
			stack = append(stack, frame{key: k})
			pendingKey = ""
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
			s, n := readJSONString(raw[i:])
			if n == 0 {
				return
			}
			i += n
			if len(stack) == 0 {
				continue
			}
			top := &stack[len(stack)-1]
			if top.isObject && expectKey {
				top.key = s
				pendingKey = s
				if top.propsOwner {
					names(s)
				}
				continue
			}
			// A string value: in an object under key top.key, or in an array
			// that is the value of key top.key.
			switch top.key {
			case "description", "title", "enum", "examples":
				texts(s)
			}
			pendingKey = ""
		default:
			i++
		}
	}
}

// readJSONString reads the JSON string at the start of b and returns its
// value and the bytes consumed (0 when malformed).
func readJSONString(b []byte) (string, int) {
	escaped := false
	for j := 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
			escaped = true
		case '"':
			if !escaped {
				return string(b[1:j]), j + 1
			}
			s, err := strconv.Unquote(string(b[:j+1]))
			if err != nil || !utf8.ValidString(s) {
				return string(b[1:j]), j + 1
			}
			return s, j + 1
		}
	}
	return "", 0
}
