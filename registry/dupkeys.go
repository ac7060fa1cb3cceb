package registry

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/toolselect/toolselect/internal/jsonscan"
)

// reencode writes the JSON value b again, compact, in the order it was
// written, with every string as encoding/json decodes it (escapes resolved,
// invalid UTF-8 and lone surrogates replaced) and then encodes it: the bytes
// say exactly what the decoded value says, to any parser. It refuses an
// object that names one member twice, comparing names as decoded, and
// returns the JSON pointer and name of the second one.
//
// Parsers disagree on which of two equal names wins (encoding/json keeps the
// last, cJSON and RapidJSON the first), so a document that holds both could
// be validated as one value and run as another.
//
// b must be one valid JSON value nesting no deeper than the argument depth
// limit (validateArgs checks both first), so the recursion is bounded.
func reencode(b []byte) (out []byte, pointer, key string, dup bool) {
	w := canonWriter{b: b, out: make([]byte, 0, len(b))}
	w.value(jsonscan.SkipSpace(b, 0))
	if w.dup {
		return nil, jsonPointer(w.path), w.key, true
	}
	return w.out, "", "", false
}

type canonWriter struct {
	b    []byte
	out  []byte
	path []string
	dup  bool
	key  string
}

// value copies the value at b[i] and returns the index after it.
func (w *canonWriter) value(i int) int {
	b := w.b
	if i >= len(b) || w.dup {
		return len(b)
	}
	switch b[i] {
	case '{':
		return w.object(i)
	case '[':
		w.out = append(w.out, '[')
		i = jsonscan.SkipSpace(b, i+1)
		for n := 0; i < len(b) && b[i] != ']'; n++ {
			if n > 0 {
				w.out = append(w.out, ',')
			}
			w.path = append(w.path, strconv.Itoa(n))
			i = jsonscan.SkipSpace(b, w.value(i))
			if w.dup {
				return len(b)
			}
			w.path = w.path[:len(w.path)-1]
			if i < len(b) && b[i] == ',' {
				i = jsonscan.SkipSpace(b, i+1)
			}
		}
		w.out = append(w.out, ']')
		return i + 1
	case '"':
		end := scanString(b, i)
		if end < 0 {
			return len(b)
		}
		w.str(b[i:end])
		return end
	case 't', 'n':
		w.out = append(w.out, b[i:i+4]...)
		return i + 4
	case 'f':
		w.out = append(w.out, b[i:i+5]...)
		return i + 5
	}
	end := scanNumber(b, i)
	if end < 0 {
		return len(b)
	}
	w.out = append(w.out, b[i:end]...)
	return end
}

func (w *canonWriter) object(i int) int {
	b := w.b
	var seen []string           // linear search for small objects
	var seenSet map[string]bool // from the 17th member on
	w.out = append(w.out, '{')
	i = jsonscan.SkipSpace(b, i+1)
	for n := 0; i < len(b) && b[i] != '}'; n++ {
		end := scanString(b, i)
		if end < 0 {
			return len(b)
		}
		if n > 0 {
			w.out = append(w.out, ',')
		}
		name := w.str(b[i:end])
		repeated := seenSet[name]
		if seenSet != nil {
			seenSet[name] = true
		} else {
			for _, s := range seen {
				repeated = repeated || s == name
			}
			if seen = append(seen, name); len(seen) > 16 {
				seenSet = make(map[string]bool, 2*len(seen))
				for _, s := range seen {
					seenSet[s] = true
				}
			}
		}
		w.path = append(w.path, name)
		if repeated {
			w.dup, w.key = true, name
			return len(b)
		}
		i = jsonscan.SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return len(b)
		}
		w.out = append(w.out, ':')
		i = jsonscan.SkipSpace(b, w.value(jsonscan.SkipSpace(b, i+1)))
		if w.dup {
			return len(b)
		}
		w.path = w.path[:len(w.path)-1]
		if i < len(b) && b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
		}
	}
	w.out = append(w.out, '}')
	return i + 1
}

// str copies the quoted string q and returns it decoded. A string with no
// escape and valid UTF-8 is copied as it is; any other is decoded and
// encoded again.
func (w *canonWriter) str(q []byte) string {
	inner := q[1 : len(q)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		w.out = append(w.out, q...)
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(q, &s) // scanString found q valid
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	w.out = append(w.out, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	return s
}
