package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/toolselect/toolselect/internal/jsonscan"
)

// span is where one JSON value lies in a catalog: data[start:end].
type span struct{ start, end int }

// The catalog scanner finds where values start and end in one pass, without
// decoding them: strings (with their escapes) are skipped, brackets counted.
// It does not check what lies inside a value; decoding each tool does, and a
// syntax error found there is placed by its offset. Errors name the line and
// column, counted only when there is an error to report.

// position returns the 1-based line and column (in characters) of data[off].
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	lineStart := bytes.LastIndexByte(data[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(data[lineStart:off])
}

// syntaxAt is a catalog error placed at data[off].
func syntaxAt(data []byte, off int, msg string) error {
	line, col := position(data, off)
	return fmt.Errorf("catalog line %d, column %d: %s", line, col, msg)
}

// valueEnd returns the end of the JSON value starting at data[i] (i is not
// white space and is inside data).
func valueEnd(data []byte, i int) (int, error) {
	switch c := data[i]; c {
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				k, err := stringEnd(data, j)
				if err != nil {
					return 0, err
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, syntaxAt(data, len(data), fmt.Sprintf("invalid JSON: unexpected end of the catalog: the %s opened at %s is not closed", map[byte]string{'{': "object", '[': "array"}[c], lineCol(data, i)))
	case '"':
		return stringEnd(data, i)
	case '}', ']', ',', ':':
		return 0, syntaxAt(data, i, fmt.Sprintf("invalid JSON: unexpected %q", c))
	}
	j := i
	for j < len(data) && !jsonscan.IsSpace(data[j]) && bytes.IndexByte([]byte(`{}[],:"`), data[j]) < 0 {
		j++
	}
	return j, nil
}

func lineCol(data []byte, off int) string {
	line, col := position(data, off)
	return fmt.Sprintf("line %d, column %d", line, col)
}

// stringEnd returns the end of the JSON string starting at data[i] == '"'.
func stringEnd(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		case '\n':
			return 0, syntaxAt(data, j, fmt.Sprintf("invalid JSON: the string opened at %s is not closed on its line", lineCol(data, i)))
		}
	}
	return 0, syntaxAt(data, len(data), fmt.Sprintf("invalid JSON: unexpected end of the catalog: the string opened at %s is not closed", lineCol(data, i)))
}

// splitArray returns the items of the JSON array starting at data[start] ==
// '[' and the offset just after its ']'.
func splitArray(data []byte, start int) ([]span, int, error) {
	var items []span
	i := jsonscan.SkipSpace(data, start+1)
	if i < len(data) && data[i] == ']' {
		return items, i + 1, nil
	}
	for {
		if i == len(data) {
			return nil, 0, syntaxAt(data, i, fmt.Sprintf("invalid JSON: unexpected end of the catalog: the array opened at %s is not closed", lineCol(data, start)))
		}
		end, err := valueEnd(data, i)
		if err != nil {
			return nil, 0, err
		}
		items = append(items, span{i, end})
		i = jsonscan.SkipSpace(data, end)
		if i == len(data) {
			continue
		}
		switch data[i] {
		case ',':
			i = jsonscan.SkipSpace(data, i+1)
		case ']':
			return items, i + 1, nil
		default:
			return nil, 0, syntaxAt(data, i, fmt.Sprintf("invalid JSON: want ',' or ']' after array item #%d, got %q", len(items)-1, data[i]))
		}
	}
}

// splitValues returns the values of a stream of JSON values (JSON Lines or
// concatenated objects) starting at data[start].
func splitValues(data []byte, start int) ([]span, error) {
	var out []span
	for i := start; i < len(data); i = jsonscan.SkipSpace(data, i) {
		end, err := valueEnd(data, i)
		if err != nil {
			return nil, err
		}
		out = append(out, span{i, end})
		i = end
	}
	return out, nil
}

// objectMembers returns where each member's value of the object at obj lies
// (the last one of a repeated name: see repeatedMember). It reads only the
// top level; a malformed object is an error.
func objectMembers(data []byte, obj span) (map[string]span, error) {
	out := make(map[string]span, 8)
	if data[obj.start] != '{' {
		return nil, fmt.Errorf("not an object")
	}
	i := jsonscan.SkipSpace(data, obj.start+1)
	if i < obj.end && data[i] == '}' {
		return out, nil
	}
	for i < obj.end {
		if data[i] != '"' {
			return nil, fmt.Errorf("not an object")
		}
		kend, err := stringEnd(data, i)
		if err != nil {
			return nil, err
		}
		key, plain := plainString(data[i:kend])
		if !plain {
			if err := json.Unmarshal(data[i:kend], &key); err != nil {
				return nil, err
			}
		}
		i = jsonscan.SkipSpace(data, kend)
		if i >= obj.end || data[i] != ':' {
			return nil, fmt.Errorf("not an object")
		}
		i = jsonscan.SkipSpace(data, i+1)
		if i >= obj.end {
			return nil, fmt.Errorf("not an object")
		}
		vend, err := valueEnd(data, i)
		if err != nil {
			return nil, err
		}
		if _, again := out[key]; again {
			out[repeatedMember] = span{}
		}
		out[key] = span{i, vend}
		i = jsonscan.SkipSpace(data, vend)
		if i < obj.end && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
			continue
		}
		if i < obj.end && data[i] == '}' {
			return out, nil
		}
		return nil, fmt.Errorf("not an object")
	}
	return nil, fmt.Errorf("not an object")
}

// repeatedMember is the key objectMembers adds when a name occurs twice
// (not a possible JSON key: it holds a byte JSON strings cannot).
const repeatedMember = "\x00repeated"

// compactValid returns valid JSON without its insignificant white space, or
// nil when there is none to remove. It does not check the JSON.
func compactValid(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case jsonscan.IsSpace(c):
			if out == nil {
				out = make([]byte, 0, len(b))
			}
			out = append(out, b[last:i]...)
			last = i + 1
		}
	}
	if out == nil {
		return nil
	}
	return append(out, b[last:]...)
}

// plainString returns the content of the JSON string v (a whole span) when
// jsonscan decodes it exactly as json.Unmarshal would.
func plainString(v []byte) (string, bool) {
	s, end, ok := jsonscan.String(v, 0)
	return s, ok && end == len(v)
}

// plainStrings returns the strings of the JSON array v (a whole span) of
// such strings, non-nil when empty, as json.Unmarshal would; ok is false
// for anything else, which is then left to json.Unmarshal.
func plainStrings(v []byte) ([]string, bool) {
	list, end, ok := jsonscan.Strings(v, 0)
	return list, ok && end == len(v)
}

// fastCanonical decodes a canonical tool from its members when each one is
// a Tool field's JSON name spelled exactly, given once, holding a plain
// value of the field's type. ok is false otherwise, and json.Unmarshal then
// decides (matching names in any case, ignoring unknown ones, with its own
// errors). The parameters are checked as JSON and copied, not decoded: they
// are most of a catalog's bytes.
func fastCanonical(raw []byte, members map[string]span) (t Tool, ok bool) {
	t.Safe = true
	for k, m := range members {
		v := raw[m.start:m.end]
		switch k {
		case "type", "name", "description", "noSchemaMode":
			s, ok := plainString(v)
			if !ok && (v[0] != '"' || json.Unmarshal(v, &s) != nil) {
				return Tool{}, false // an escape is decoded by encoding/json, anything else declined
			}
			switch k {
			case "type":
				t.Type = s
			case "name":
				t.Name = s
			case "description":
				t.Description = s
			default:
				t.NoSchemaMode = NoSchemaMode(s)
			}
		case "parameters":
			if !validJSON(v) {
				return Tool{}, false
			}
			t.Parameters = append(json.RawMessage(nil), v...)
		case "strict", "allowNoSchema", "safe", "requiresApproval":
			var b bool
			switch string(v) {
			case "true":
				b = true
			case "false":
			default:
				return Tool{}, false
			}
			switch k {
			case "strict":
				t.Strict = b
			case "allowNoSchema":
				t.AllowNoSchema = b
			case "requiresApproval":
				t.RequiresApproval = b
			default:
				t.Safe = b
			}
		case "tags", "roles", "capabilities":
			list, plain := plainStrings(v)
			if !plain && (v[0] != '[' || json.Unmarshal(v, &list) != nil) {
				return Tool{}, false
			}
			switch k {
			case "tags":
				t.Tags = list
			case "roles":
				t.Roles = list
			default:
				t.Capabilities = list
			}
		case "metadata":
			if v[0] != '{' || json.Unmarshal(v, &t.Metadata) != nil {
				return Tool{}, false
			}
		default:
			return Tool{}, false
		}
	}
	return t, true
}
