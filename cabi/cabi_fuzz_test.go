//go:build cabifuzz

package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/toolselect/toolselect/cabi/internal/capi"
)

// checkC asserts the C contract for one call: a code from TS_OK to
// TS_ERR_POINTER (never TS_ERR_INTERNAL: no input reaches a panic); a JSON
// body whose error object, on failure, carries the same code; the body freed
// once with TS_OK and refused with TS_ERR_POINTER the second time.
func checkC(t *testing.T, op string, r fzResult) map[string]any {
	t.Helper()
	if r.rc < int(capi.OK) || r.rc > int(capi.ErrPointer) || r.rc == int(capi.ErrInternal) {
		t.Fatalf("%s: code %d: %s", op, r.rc, r.body)
	}
	if r.null {
		t.Fatalf("%s: *out is NULL", op)
	}
	if r.freed != int(capi.OK) || r.refreed != int(capi.ErrPointer) {
		t.Fatalf("%s: free gave %d, a second free %d", op, r.freed, r.refreed)
	}
	var m map[string]any
	if !json.Valid(r.body) {
		t.Fatalf("%s: body is not JSON: %q", op, r.body)
	}
	_ = json.Unmarshal(r.body, &m)
	if r.rc != int(capi.OK) {
		e, _ := m["error"].(map[string]any)
		if code, _ := e["code"].(float64); int(code) != r.rc || e["message"] == "" {
			t.Fatalf("%s: code %d with body %s", op, r.rc, r.body)
		}
	}
	return m
}

func handleIn(t *testing.T, op string, r fzResult) uint64 {
	t.Helper()
	m := checkC(t, op, r)
	h, _ := m["handle"].(float64)
	if r.rc != int(capi.OK) || h < 1 {
		t.Fatalf("%s: no handle: %s", op, r.body)
	}
	return uint64(h)
}

// cPrefix is what a C caller's string holds: the bytes before the first NUL.
func cPrefix(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

func stats(t *testing.T) (handles map[string]float64, strings float64) {
	t.Helper()
	m := checkC(t, "stats", fzStats())
	handles = map[string]float64{}
	hs, _ := m["handles"].(map[string]any)
	for k, v := range hs {
		handles[k], _ = v.(float64)
	}
	strings, _ = m["strings"].(float64)
	return handles, strings
}

// FuzzCExports calls the exports through C (Go -> C trampoline -> exported
// Go function), with fuzzed C strings: echo, registry new/register/
// load_catalog/validate/view, selector new, session begin/feed, plus NULL
// arguments and out = NULL. Beyond checkC: echo and validate agree with the
// Go functions they wrap on the same bytes (a C string ends at NUL), NULL is
// TS_ERR_ARGUMENT, out = NULL allocates nothing, a foreign pointer is
// refused, and after closing what it opened no handle or string is left.
func FuzzCExports(f *testing.F) {
	for _, seed := range []struct{ doc, name, args string }{
		{`{"name":"add","description":"Add","parameters":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}`, "add", `{"a":1}`},
		{`[{"name":"a.b","parameters":{"type":"object"}}]`, "a_b", `{"a":"x"}`},
		{`{"model":"m1","fallback_model":"m2"}`, "openai", `{"content":"{\"calls\":[]}"}`},
		{`{"task":{"description":"x"}}`, "mcp", `{"error":{"kind":"timeout","message":"slow"}}`},
		{"{\"name\":\"a\x00b\"}", "a\x00", "{}\x00}"},
		{"\xff\xfe", "\xc3", "\xed\xa0\x80"},
		{`{"tools":[{"name":"x","input_schema":{}}]}`, "x", `{}}`},
		{``, ``, ``},
		{`null`, "canonical", `[]`},
	} {
		f.Add([]byte(seed.doc), []byte(seed.name), []byte(seed.args))
	}
	f.Fuzz(func(t *testing.T, doc, name, args []byte) {
		h0, s0 := stats(t)
		cdoc, cname, cargs := cPrefix(doc), cPrefix(name), cPrefix(args)

		er := fzEcho(doc)
		checkC(t, "echo", er)
		if want := capi.Echo(cdoc, true); int(want.Code) != er.rc || string(want.Body) != string(er.body) {
			t.Fatalf("echo through C %d %s, in Go %d %s", er.rc, er.body, want.Code, want.Body)
		}
		if r := fzEcho(nil); r.rc != int(capi.ErrArgument) {
			t.Fatalf("echo(NULL): %d", r.rc)
		}

		r := fzRegistryNew(doc)
		checkC(t, "registry_new", r)
		if r.rc != int(capi.OK) {
			r = fzRegistryNew(nil)
		}
		reg := handleIn(t, "registry_new", r)
		checkC(t, "registry_register", fzRegistryRegister(reg, doc, false))
		if r := fzRegistryRegister(reg, doc, true); !r.null || r.rc == int(capi.ErrInternal) {
			t.Fatalf("register with out = NULL: %+v", r)
		}
		if r := fzRegistryRegister(reg, nil, false); r.rc != int(capi.ErrArgument) {
			t.Fatalf("register(NULL): %d", r.rc)
		}
		checkC(t, "registry_load_catalog", fzRegistryLoadCatalog(reg, args))
		v := fzRegistryValidate(reg, name, args)
		checkC(t, "registry_validate", v)
		if want := capi.RegistryValidate(reg, cname, true, cargs, true); int(want.Code) != v.rc || string(want.Body) != string(v.body) {
			t.Fatalf("validate through C %d %s, in Go %d %s", v.rc, v.body, want.Code, want.Body)
		}
		if r := fzRegistryValidate(reg, name, nil); r.rc != int(capi.ErrArgument) {
			t.Fatalf("validate(args NULL): %d", r.rc)
		}
		view := fzRegistryView(reg, name)
		checkC(t, "registry_view", view)
		if view.rc == int(capi.OK) && !utf8.Valid(view.body) {
			t.Fatalf("view is not UTF-8: %q", view.body)
		}

		r = fzSelectorNew(doc)
		checkC(t, "selector_new", r)
		if r.rc != int(capi.OK) {
			r = fzSelectorNew(fzArg(`{"model":"m1","fallback_model":"m2"}`))
		}
		sel := handleIn(t, "selector_new", r)
		b := fzSessionBegin(sel, reg, name)
		m := checkC(t, "session_begin", b)
		if b.rc != int(capi.OK) {
			b = fzSessionBegin(sel, reg, fzArg(`{"task":{"description":"fuzz"}}`))
			m = checkC(t, "session_begin", b)
		}
		sess, _ := m["session"].(float64)
		if b.rc != int(capi.OK) || sess < 1 {
			t.Fatalf("session_begin: %s", b.body)
		}
		for i := 0; i < 3; i++ {
			checkC(t, "session_feed", fzSessionFeed(uint64(sess), args))
		}
		if r := fzSessionFeed(uint64(sess), nil); r.rc != int(capi.ErrArgument) {
			t.Fatalf("session_feed(NULL): %d", r.rc)
		}
		checkC(t, "session_close", fzSessionClose(uint64(sess)))
		checkC(t, "selector_close", fzSelectorClose(sel))
		checkC(t, "registry_close", fzRegistryClose(reg))
		if r := fzRegistryClose(reg); r.rc != int(capi.ErrHandle) {
			t.Fatalf("second registry_close: %d", r.rc)
		}
		if rc := fzForeignFree(); rc != int(capi.ErrPointer) {
			t.Fatalf("free of a foreign pointer: %d", rc)
		}

		h1, s1 := stats(t)
		if s1 != s0 {
			t.Fatalf("%v strings outstanding, %v before", s1, s0)
		}
		for k, n := range h1 {
			if n != h0[k] {
				t.Fatalf("%v %s handles open, %v before", n, k, h0[k])
			}
		}
	})
}
