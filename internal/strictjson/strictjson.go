// Package strictjson decodes the JSON documents toolselect reads as
// configuration (client files, the proxy's own format, catalogs, pin files,
// feedback stores, the C ABI's option objects) with keys matched exactly and
// given once. encoding/json matches a key to a field without regard to case
// and keeps the last of two equal keys, so {"command": "x", "COMMAND":
// "/bin/sh"} decodes as /bin/sh while a reader of the file (or a check that
// compares keys exactly) sees x: a document that two readers may read as two
// different values is refused, naming the key.
//
// Go 1.26's encoding/json/v2 matches case-sensitively and refuses duplicate
// names, but only under GOEXPERIMENT=jsonv2, which a user building toolselect
// does not set; this package walks the document's tokens once beside the
// target's Go type and then leaves decoding to encoding/json.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolselect/toolselect/internal/jsonscan"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// KeyError is a key refused by [Unmarshal] or [UnmarshalKnown].
type KeyError struct {
	// Path is where the key is: the names and array indexes from the
	// document's root to it, joined with '.', the key last.
	Path string
	// Key is the key as written.
	Key string
	// Problem is ProblemDuplicate, ProblemCase or ProblemUnknown.
	Problem string
	// Want is the field's name for ProblemCase; for ProblemUnknown, the
	// names the object takes, sorted.
	Want []string
}

// The problems a [KeyError] names.
const (
	// ProblemDuplicate: an object names the key a second time (names
	// compared as decoded, so "a" and "\u0061" are one name).
	ProblemDuplicate = "duplicate"
	// ProblemCase: the key matches a field's name only in case (or in
	// Unicode simple folding, as encoding/json would match it).
	ProblemCase = "case"
	// ProblemUnknown: the key is no field's name (Unmarshal only).
	ProblemUnknown = "unknown"
)

func (e *KeyError) Error() string {
	switch e.Problem {
	case ProblemDuplicate:
		return fmt.Sprintf("the key %q is given twice: give it once", e.Path)
	case ProblemCase:
		return fmt.Sprintf("the key %q matches %q only in case: keys are matched exactly, write %q", e.Path, e.Want[0], e.Want[0])
	}
	if len(e.Want) == 0 {
		return fmt.Sprintf("unknown field %q (this object takes no keys)", e.Path)
	}
	return fmt.Sprintf("unknown field %q (the keys are %s)", e.Path, strings.Join(e.Want, ", "))
}

// Unmarshal decodes the JSON document b into v (a non-nil pointer) as
// encoding/json does, except that b must hold exactly one JSON value, no
// object anywhere in it may name a member twice, and every key of an object
// decoded into a struct must be one of the struct's JSON names exactly. A
// refused key is a *[KeyError]; anything else is encoding/json's error.
//
// A type with its own UnmarshalJSON is checked for duplicate names only:
// its method decides its keys (and uses this package to do so). A
// json.RawMessage is not looked into: what it holds is decided by its
// reader, which refuses a name given twice by its own rule (tool arguments
// by the registry's validator with a duplicateKey violation, a tool's
// parameters schema when it is compiled).
func Unmarshal(b []byte, v any) error {
	return decode(b, v, false)
}

// UnmarshalKnown is [Unmarshal] for documents that may carry keys meant for
// other programs (an MCP client's server entry, a catalog written for a
// model provider): a key that is no field's name is left alone, as
// encoding/json leaves it, but one that matches a field only in case and a
// duplicate name anywhere are still refused.
func UnmarshalKnown(b []byte, v any) error {
	return decode(b, v, true)
}

// Check runs [UnmarshalKnown]'s checks on b for a value of type t without
// decoding it: for readers that decode b in parts themselves.
func Check(b []byte, t reflect.Type) error {
	return checkType(b, t, true)
}

func decode(b []byte, v any, loose bool) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("strictjson: decoding needs a non-nil pointer")
	}
	if err := checkType(b, rv.Type(), loose); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if !loose {
		dec.DisallowUnknownFields()
	}
	return dec.Decode(v)
}

func checkType(b []byte, t reflect.Type, loose bool) error {
	if !json.Valid(b) {
		// Say what is wrong as encoding/json does; one value followed by
		// more is said in words of its own.
		dec := json.NewDecoder(bytes.NewReader(b))
		var first json.RawMessage
		if err := dec.Decode(&first); err != nil {
			if err == io.EOF {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		return fmt.Errorf("unexpected data after the JSON value (at byte %d): more than one JSON value", dec.InputOffset())
	}
	w := walker{b: b, loose: loose}
	return w.value(t, nil)
}

// walker reads a valid JSON document by hand (internal/jsonscan), beside
// the Go type it decodes into: encoding/json's token reader costs four
// times as much on a catalog.
type walker struct {
	b     []byte
	i     int
	loose bool
}

var (
	unmarshaler = reflect.TypeFor[json.Unmarshaler]()
	rawMessage  = reflect.TypeFor[json.RawMessage]()
)

// value reads the value at w.i, expected to decode into t (nil: anything,
// checked for duplicate names only), and leaves w.i after it.
func (w *walker) value(t reflect.Type, path []string) error {
	w.i = jsonscan.SkipSpace(w.b, w.i)
	if t == rawMessage {
		w.skip()
		return nil
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (reflect.PointerTo(t).Implements(unmarshaler) || t.Implements(unmarshaler)) {
		t = nil
	}
	switch w.b[w.i] {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		w.i = jsonscan.SkipSpace(w.b, w.i+1)
		for n := 0; w.b[w.i] != ']'; n++ {
			if err := w.value(elem, append(path, strconv.Itoa(n))); err != nil {
				return err
			}
			if w.i = jsonscan.SkipSpace(w.b, w.i); w.b[w.i] == ',' {
				w.i = jsonscan.SkipSpace(w.b, w.i+1)
			}
		}
		w.i++
		return nil
	case '{':
	default:
		w.skip()
		return nil
	}
	var fields map[string]reflect.Type
	var elem reflect.Type
	switch {
	case t == nil:
	case t.Kind() == reflect.Struct:
		fields = fieldsOf(t)
	case t.Kind() == reflect.Map:
		elem = t.Elem()
	}
	var seen jsonscan.Names
	w.i = jsonscan.SkipSpace(w.b, w.i+1)
	for w.b[w.i] != '}' {
		key := w.key()
		at := append(path, key)
		if seen.Add(key) {
			return &KeyError{Path: strings.Join(at, "."), Key: key, Problem: ProblemDuplicate}
		}
		next := elem
		if fields != nil {
			ft, known := fields[key]
			if !known {
				if err := w.unknown(at, key, fields); err != nil {
					return err
				}
			}
			next = ft
		}
		w.i = jsonscan.SkipSpace(w.b, w.i) + 1 // the ':'
		if err := w.value(next, at); err != nil {
			return err
		}
		if w.i = jsonscan.SkipSpace(w.b, w.i); w.b[w.i] == ',' {
			w.i = jsonscan.SkipSpace(w.b, w.i+1)
		}
	}
	w.i++
	return nil
}

// key reads the object key at w.i as encoding/json decodes it.
func (w *walker) key() string {
	if s, end, ok := jsonscan.String(w.b, w.i); ok {
		w.i = end
		return s
	}
	start := w.i
	w.skip()
	var s string
	_ = json.Unmarshal(w.b[start:w.i], &s) // a valid string: lone surrogates and bad UTF-8 become U+FFFD
	return s
}

// skip moves w.i past the value there.
func (w *walker) skip() {
	b := w.b
	depth := 0
	for {
		switch c := b[w.i]; c {
		case '"':
			for w.i++; b[w.i] != '"'; w.i++ {
				if b[w.i] == '\\' {
					w.i++
				}
			}
			w.i++
		case '{', '[':
			depth++
			w.i++
		case '}', ']':
			depth--
			w.i++
		default:
			for w.i < len(b) && !jsonscan.IsSpace(b[w.i]) && b[w.i] != ',' && b[w.i] != '}' && b[w.i] != ']' && b[w.i] != ':' {
				w.i++
			}
			if depth > 0 && w.i < len(b) && (jsonscan.IsSpace(b[w.i]) || b[w.i] == ',' || b[w.i] == ':') {
				w.i++
			}
		}
		if depth == 0 {
			return
		}
	}
}

func (w *walker) unknown(at []string, key string, fields map[string]reflect.Type) error {
	names := make([]string, 0, len(fields))
	for n := range fields {
		if strings.EqualFold(n, key) {
			return &KeyError{Path: strings.Join(at, "."), Key: key, Problem: ProblemCase, Want: []string{n}}
		}
		names = append(names, n)
	}
	if w.loose {
		return nil
	}
	sort.Strings(names)
	return &KeyError{Path: strings.Join(at, "."), Key: key, Problem: ProblemUnknown, Want: names}
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// fieldsOf maps each JSON name the struct t decodes to its field's type,
// through embedded structs as encoding/json does.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := jsonFields(t)
	fieldCache.Store(t, m)
	return m
}

func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var embedded []map[string]reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				embedded = append(embedded, jsonFields(et))
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	// A field of the struct itself hides an embedded one of the same name.
	for _, e := range embedded {
		for n, ft := range e {
			if _, own := out[n]; !own {
				out[n] = ft
			}
		}
	}
	return out
}
