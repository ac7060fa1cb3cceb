package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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
//
// A number with a fraction or an exponent is written as the 64-bit float a
// receiver reads it as (Go's float64, the C ABI's double, Python's float,
// the JSON readers behind an MCP upstream) whenever that float is another
// number than the text says: 0.99999999999999999999 is 1 and 1e-400 is 0
// to every one of them, so that is what is validated and passed on, and
// exclusiveMaximum: 1 refuses it as every receiver would see it. rounded
// reports such a change; a number beyond a float's range (1e400) is
// refused, its pointer in pointer and its text in key, with tooBig set.
// Integers are written as given: a receiver may read them as int64.
func reencode(b []byte) (out []byte, pointer, key string, dup, rounded, tooBig bool) {
	w := canonWriter{b: b, out: make([]byte, 0, len(b))}
	w.value(jsonscan.SkipSpace(b, 0))
	if w.dup || w.tooBig {
		return nil, jsonPointer(w.path), w.key, w.dup, false, w.tooBig
	}
	return w.out, "", "", false, w.rounded, false
}

type canonWriter struct {
	b       []byte
	out     []byte
	path    []string
	dup     bool
	key     string
	rounded bool
	tooBig  bool
}

// value copies the value at b[i] and returns the index after it.
func (w *canonWriter) value(i int) int {
	b := w.b
	if i >= len(b) || w.dup || w.tooBig {
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
			if w.dup || w.tooBig {
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
	text := b[i:end]
	if bytes.IndexAny(text, ".eE") < 0 {
		w.out = append(w.out, text...)
		return end
	}
	short, tooBig := asReceived(text)
	switch {
	case tooBig:
		w.tooBig, w.key = true, string(text)
		return len(b)
	case short == nil:
		w.out = append(w.out, text...)
	default:
		w.out, w.rounded = append(w.out, short...), true
	}
	return end
}

// asReceived is the one rule for a number with a fraction or an exponent:
// the text of the 64-bit float a receiver reads it as when that is another
// number than text says (nil when it is the same), or tooBig when the float
// is beyond its range (±Inf).
func asReceived(text []byte) (short []byte, tooBig bool) {
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return nil, true
	}
	short = strconv.AppendFloat(nil, f, 'g', -1, 64)
	if sameDecimal(text, short) {
		return nil, false
	}
	return short, false
}

// receivedValue applies asReceived to every json.Number with a fraction or
// an exponent in a decoded value, so that a value handed to
// [Entry.ValidateValue] is checked as the same document given to
// [Entry.ValidateArgs] would be. It returns v itself when nothing changes
// (changed false), and a copy otherwise. A json.Number whose text is not a
// JSON number (json.Number("abc"), which no document decodes to but a Go
// caller can build), or one beyond a float's range, is refused: problem
// says why, at pointer.
func receivedValue(v any, path []string) (out any, changed bool, pointer, problem string) {
	switch x := v.(type) {
	case json.Number:
		t := []byte(x)
		if len(t) == 0 || scanNumber(t, 0) != len(t) {
			return nil, false, jsonPointer(path), fmt.Sprintf("json.Number %q is not a JSON number", string(x))
		}
		if bytes.IndexAny(t, ".eE") < 0 {
			return v, false, "", ""
		}
		short, big := asReceived(t)
		switch {
		case big:
			return nil, false, jsonPointer(path), tooBigMessage(string(x))
		case short != nil:
			return json.Number(short), true, "", ""
		}
	case map[string]any:
		var cp map[string]any
		for k, e := range x {
			ne, ch, p, why := receivedValue(e, append(path, k))
			if why != "" {
				return nil, false, p, why
			}
			if ch {
				if cp == nil {
					cp = make(map[string]any, len(x))
					for k2, e2 := range x {
						cp[k2] = e2
					}
				}
				cp[k] = ne
			}
		}
		if cp != nil {
			return cp, true, "", ""
		}
	case []any:
		var cp []any
		for i, e := range x {
			ne, ch, p, why := receivedValue(e, append(path, strconv.Itoa(i)))
			if why != "" {
				return nil, false, p, why
			}
			if ch {
				if cp == nil {
					cp = append([]any(nil), x...)
				}
				cp[i] = ne
			}
		}
		if cp != nil {
			return cp, true, "", ""
		}
	}
	return v, false, "", ""
}

// sameDecimal reports whether the JSON numbers a and b are one decimal
// value (1.50 and 15e-1 are; 0.99999999999999999999 and 1 are not).
func sameDecimal(a, b []byte) bool {
	na, da, ea, okA := decimalParts(a)
	nb, db, eb, okB := decimalParts(b)
	if !okA || !okB {
		return false
	}
	if da == "" || db == "" { // zero, whatever its sign
		return da == db
	}
	return na == nb && da == db && ea == eb
}

// decimalParts splits a JSON number into its sign, its significant digits
// (no leading or trailing zeros; "" for zero) and the power of ten of the
// last one. ok is false for an exponent beyond an int.
func decimalParts(t []byte) (neg bool, digits string, exp int, ok bool) {
	s := string(t)
	if neg = strings.HasPrefix(s, "-"); neg {
		s = s[1:]
	}
	if k := strings.IndexAny(s, "eE"); k >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[k+1:], "+"))
		if err != nil {
			return false, "", 0, false
		}
		exp, s = e, s[:k]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	exp -= len(frac)
	d := strings.TrimLeft(intPart+frac, "0")
	for strings.HasSuffix(d, "0") {
		d = d[:len(d)-1]
		exp++
	}
	return neg, d, exp, true
}

func (w *canonWriter) object(i int) int {
	b := w.b
	var seen jsonscan.Names
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
		repeated := seen.Add(name)
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
		if w.dup || w.tooBig {
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
