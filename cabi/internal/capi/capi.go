// Package capi is the logic behind the C ABI in cabi/: JSON envelopes, the
// handle table, the allocation ledger and one function per exported
// operation. It is ordinary Go (no cgo), so `go test -race` covers it; cabi/
// only converts C strings and pointers and calls in here.
//
// Every operation returns a Result: a Code and a JSON body. On success the
// body is the operation's value; on failure it is
// {"error":{"code":N,"kind":"...","message":"..."}}.
package capi

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"unicode/utf8"
)

// Code is the int every export returns. The values are part of the C ABI
// (see cabi/toolselect.h) and never change meaning.
type Code int

// The return codes.
const (
	OK          Code = 0 // success; the body is the result
	ErrArgument Code = 1 // NULL pointer, invalid UTF-8, malformed JSON, bad value or config
	ErrHandle   Code = 2 // unknown, closed or wrong-kind handle
	ErrNotFound Code = 3 // unknown tool
	ErrRejected Code = 4 // a tool definition or catalog was refused by the registry
	ErrCanceled Code = 5 // the call was cancelled through its cancel token
	ErrInternal Code = 6 // a recovered panic or an unexpected failure
	ErrPointer  Code = 7 // free of a pointer the library did not return, or already freed
)

var kinds = map[Code]string{
	OK: "ok", ErrArgument: "argument", ErrHandle: "handle", ErrNotFound: "not_found",
	ErrRejected: "rejected", ErrCanceled: "canceled", ErrInternal: "internal", ErrPointer: "pointer",
}

// Kind is the code's name as it appears in error bodies.
func (c Code) Kind() string {
	if k, ok := kinds[c]; ok {
		return k
	}
	return fmt.Sprintf("code_%d", int(c))
}

// Result is what an operation hands back to the ABI layer.
type Result struct {
	Code Code
	Body []byte
}

// Error is the body of a failed call.
type Error struct {
	Code    Code   `json:"code"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Detail carries structured data for some errors (e.g. every refused tool).
	Detail any `json:"detail,omitempty"`
}

// Fail builds an error result.
func Fail(code Code, format string, args ...any) Result {
	return failDetail(code, nil, format, args...)
}

func failDetail(code Code, detail any, format string, args ...any) Result {
	e := Error{Code: code, Kind: code.Kind(), Message: fmt.Sprintf(format, args...), Detail: detail}
	b, err := json.Marshal(struct {
		Error Error `json:"error"`
	}{e})
	if err != nil { // Detail did not marshal; keep the message.
		e.Detail = nil
		b, _ = json.Marshal(struct {
			Error Error `json:"error"`
		}{e})
	}
	return Result{Code: code, Body: b}
}

// Ok marshals v as a success result.
func Ok(v any) Result {
	if raw, ok := v.(json.RawMessage); ok {
		return Result{Code: OK, Body: raw}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Fail(ErrInternal, "encoding the result: %v", err)
	}
	return Result{Code: OK, Body: b}
}

// Recovered turns a recovered panic value into an internal-error result. The
// stack goes into the message so a bug report carries it.
func Recovered(p any) Result {
	return Fail(ErrInternal, "toolselect: internal panic: %v\n%s", p, debug.Stack())
}

// checkText is the check every string argument from C gets: present and valid UTF-8.
func checkText(name string, b []byte, present bool) *Result {
	if !present {
		r := Fail(ErrArgument, "%s is NULL", name)
		return &r
	}
	if !utf8.Valid(b) {
		r := Fail(ErrArgument, "%s is not valid UTF-8", name)
		return &r
	}
	return nil
}

// Text checks a string argument that arrived from C: present and valid UTF-8.
func Text(name string, b []byte, present bool) (string, *Result) {
	if r := checkText(name, b, present); r != nil {
		return "", r
	}
	return string(b), nil
}

// JSON checks a JSON argument that arrived from C: present, valid UTF-8 and
// well-formed JSON, and decodes it into v (nil v only checks).
func JSON(name string, b []byte, present bool, v any) *Result {
	if r := checkText(name, b, present); r != nil {
		return r
	}
	if !json.Valid(b) {
		r := Fail(ErrArgument, "%s is not valid JSON%s", name, syntaxHint(b))
		return &r
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		r := Fail(ErrArgument, "%s: %v", name, err)
		return &r
	}
	return nil
}

func syntaxHint(b []byte) string {
	var v any
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf(" (offset %d: %v)", se.Offset, se)
	}
	if err != nil {
		return ": " + err.Error()
	}
	return ""
}
