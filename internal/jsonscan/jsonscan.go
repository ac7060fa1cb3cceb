// Package jsonscan reads the plain parts of JSON by hand where decoding with
// encoding/json costs more than the work around it (catalogs, feedback
// stores): white space, strings and arrays of strings. Every reader returns
// ok=false for anything it does not decode exactly as encoding/json would,
// and the caller then leaves that value to encoding/json.
package jsonscan

import (
	"bytes"
	"unicode/utf8"
)

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// String reads the JSON string at b[i] that is valid UTF-8 and whose
// escapes are the simple ones or \u outside the surrogate range (json.Marshal
// writes <, > and & as \u003c...; Python writes all non-ASCII so); it returns
// the index after the closing quote.
func String(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	start := i + 1
	var buf []byte // nil until the first escape
	for j := start; j < len(b); j++ {
		c := b[j]
		switch {
		case c == '"':
			if buf == nil {
				s := b[start:j]
				if !utf8.Valid(s) {
					return "", i, false
				}
				return string(s), j + 1, true
			}
			buf = append(buf, b[start:j]...)
			if !utf8.Valid(buf) {
				return "", i, false
			}
			return string(buf), j + 1, true
		case c < 0x20:
			return "", i, false
		case c == '\\':
			buf = append(buf, b[start:j]...)
			if j+1 >= len(b) {
				return "", i, false
			}
			switch e := b[j+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				if j+6 > len(b) {
					return "", i, false
				}
				r, good := hex4(b[j+2 : j+6])
				if !good || (r >= 0xD800 && r <= 0xDFFF) {
					return "", i, false
				}
				buf = utf8.AppendRune(buf, r)
				j += 4
			default:
				return "", i, false
			}
			j++
			start = j + 1
		}
	}
	return "", i, false
}

func hex4(h []byte) (rune, bool) {
	var r rune
	for _, c := range h {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Strings reads the JSON array of strings (see String) at b[i], non-nil when
// empty as encoding/json gives it; it returns the index after the closing
// bracket.
func Strings(b []byte, i int) ([]string, int, bool) {
	if i >= len(b) || b[i] != '[' {
		return nil, i, false
	}
	out := []string{}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, i + 1, true
	}
	for {
		s, j, good := String(b, i)
		if !good {
			return nil, i, false
		}
		out = append(out, s)
		i = SkipSpace(b, j)
		if i >= len(b) {
			return nil, i, false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case ']':
			return out, i + 1, true
		default:
			return nil, i, false
		}
	}
}

// Kind names the JSON type of a document ("an object", "an array", "a
// string", "a number", "a boolean", "null", "nothing" or "invalid JSON") for
// error messages. It looks only at the first non-space byte.
func Kind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if b[0] == '-' || (b[0] >= '0' && b[0] <= '9') {
		return "a number"
	}
	return "invalid JSON"
}
