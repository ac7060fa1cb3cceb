package registry

import "github.com/toolselect/toolselect/internal/jsonscan"

// validJSON reports whether b is one valid JSON value, exactly as
// encoding/json.Valid decides (the same grammar, whitespace and nesting limit
// of 10,000; like it, bytes inside strings are not checked as UTF-8). It
// reads each byte once with no per-byte call, several times faster than
// json.Valid's state machine; a catalog's schemas are most of its bytes and
// each is checked when it is read and again at registration.
// FuzzValidJSON holds it to json.Valid.
func validJSON(b []byte) bool {
	const maxDepth = 10000
	var stack []byte // '{' or '[' per open container
	i := jsonscan.SkipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{':
			if len(stack) == maxDepth {
				return false
			}
			stack = append(stack, '{')
			i = jsonscan.SkipSpace(b, i+1)
			if i < len(b) && b[i] == '}' {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			// A member: key, colon, then its value.
			if i = scanString(b, i); i < 0 {
				return false
			}
			if i = jsonscan.SkipSpace(b, i); i >= len(b) || b[i] != ':' {
				return false
			}
			i = jsonscan.SkipSpace(b, i+1)
			continue
		case c == '[':
			if len(stack) == maxDepth {
				return false
			}
			stack = append(stack, '[')
			i = jsonscan.SkipSpace(b, i+1)
			if i < len(b) && b[i] == ']' {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			continue
		case c == '"':
			if i = scanString(b, i); i < 0 {
				return false
			}
		case c == '-' || (c >= '0' && c <= '9'):
			if i = scanNumber(b, i); i < 0 {
				return false
			}
		case c == 't':
			if !hasLiteral(b, i, "true") {
				return false
			}
			i += 4
		case c == 'f':
			if !hasLiteral(b, i, "false") {
				return false
			}
			i += 5
		case c == 'n':
			if !hasLiteral(b, i, "null") {
				return false
			}
			i += 4
		default:
			return false
		}
		// A value ended at i: close containers, or go on to the next element.
		for {
			i = jsonscan.SkipSpace(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := stack[len(stack)-1]
			if (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return false
			}
			i = jsonscan.SkipSpace(b, i+1)
			if top == '{' {
				if i = scanString(b, i); i < 0 {
					return false
				}
				if i = jsonscan.SkipSpace(b, i); i >= len(b) || b[i] != ':' {
					return false
				}
				i = jsonscan.SkipSpace(b, i+1)
			}
			break
		}
	}
}

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// scanString returns the offset just past the string starting at b[i], or -1
// when there is none there or it is not valid.
func scanString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i <= 4 {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// scanNumber returns the offset just past the number starting at b[i], or -1.
func scanNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return -1
		}
	}
	return i
}
