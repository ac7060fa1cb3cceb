package feedbackstore

import "unicode/utf8"

// parsePlain decodes the common shape of a stored record without
// encoding/json: one object whose keys are exactly "query", "tools" and
// "remove" (each at most once), whose strings hold no control character, only
// valid UTF-8 and no surrogate escape, and whose "remove" is a literal boolean.
// Anything else (a surrogate escape, another key, a case variant, a duplicate, a
// syntax error) returns ok=false and the caller decodes the line with
// encoding/json, which gives the same record for every line accepted here and
// the exact error for the rest. Loading a store is mostly this decoding, and
// the records the library writes are of this shape.
func parsePlain(b []byte) (r Record, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return r, false
	}
	i = skipSpace(b, i+1)
	var seen [3]bool
	if i < len(b) && b[i] == '}' {
		return r, skipSpace(b, i+1) == len(b)
	}
	for {
		key, j, good := plainString(b, i)
		if !good {
			return r, false
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return r, false
		}
		i = skipSpace(b, i+1)
		switch key {
		case "query":
			if seen[0] {
				return r, false
			}
			seen[0] = true
			if r.Query, i, good = plainString(b, i); !good {
				return r, false
			}
		case "tools":
			if seen[1] {
				return r, false
			}
			seen[1] = true
			if r.Tools, i, good = plainStrings(b, i); !good {
				return r, false
			}
		case "remove":
			if seen[2] {
				return r, false
			}
			seen[2] = true
			switch {
			case hasWord(b, i, "true"):
				r.Remove, i = true, i+4
			case hasWord(b, i, "false"):
				r.Remove, i = false, i+5
			default:
				return r, false
			}
		default:
			return r, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return r, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return r, skipSpace(b, i+1) == len(b)
		default:
			return r, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

func hasWord(b []byte, i int, w string) bool {
	return len(b)-i >= len(w) && string(b[i:i+len(w)]) == w
}

// plainString reads a JSON string at b[i] that is valid UTF-8 and whose
// escapes are the simple ones or \u outside the surrogate range (json.Marshal
// writes <, > and & as \u003c...; Python writes all non-ASCII so); it returns
// the index after the closing quote.
func plainString(b []byte, i int) (string, int, bool) {
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

// plainStrings reads a JSON array of plain strings (see plainString).
func plainStrings(b []byte, i int) ([]string, int, bool) {
	if i >= len(b) || b[i] != '[' {
		return nil, i, false
	}
	out := []string{}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, i + 1, true
	}
	for {
		s, j, good := plainString(b, i)
		if !good {
			return nil, i, false
		}
		out = append(out, s)
		i = skipSpace(b, j)
		if i >= len(b) {
			return nil, i, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return out, i + 1, true
		default:
			return nil, i, false
		}
	}
}
