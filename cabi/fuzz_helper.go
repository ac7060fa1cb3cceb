//go:build cabifuzz

package main

// Built only with -tags cabifuzz (make test and tests/fuzz.sh pass it), so the
// shipped libtoolselect.so carries no test scaffolding.

// Fuzz-only helper: cgo is not allowed in _test.go files, so the C trampolines
// that cabi_fuzz_test.go uses to call the exports through C live here. The
// library never calls them. The preamble may define functions because this
// file has no //export.

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The exports, as cgo declares them in _cgo_export.h (which vet cannot see).
extern int toolselect_free(char *p);
extern int toolselect_stats(char **out);
extern int toolselect_echo(char *jsonText, char **out);
extern int toolselect_registry_new(char *optionsJSON, char **out);
extern int toolselect_registry_register(uint64_t reg, char *toolJSON, char **out);
extern int toolselect_registry_load_catalog(uint64_t reg, char *catalog, char **out);
extern int toolselect_registry_view(uint64_t reg, char *format, char **out);
extern int toolselect_registry_validate(uint64_t reg, char *tool, char *argsJSON, char **out);
extern int toolselect_registry_close(uint64_t reg, char **out);
extern int toolselect_selector_new(char *configJSON, char **out);
extern int toolselect_selector_close(uint64_t sel, char **out);
extern int toolselect_session_begin(uint64_t sel, uint64_t reg, char *requestJSON, char **out);
extern int toolselect_session_feed(uint64_t session, char *replyJSON, char **out);
extern int toolselect_session_close(uint64_t session, char **out);

static int fz_free(char *p) { return toolselect_free(p); }
static int fz_stats(char **out) { return toolselect_stats(out); }
static int fz_echo(char *j, char **out) { return toolselect_echo(j, out); }
static int fz_registry_new(char *o, char **out) { return toolselect_registry_new(o, out); }
static int fz_registry_register(uint64_t r, char *t, char **out) { return toolselect_registry_register(r, t, out); }
static int fz_registry_load_catalog(uint64_t r, char *c, char **out) { return toolselect_registry_load_catalog(r, c, out); }
static int fz_registry_view(uint64_t r, char *f, char **out) { return toolselect_registry_view(r, f, out); }
static int fz_registry_validate(uint64_t r, char *t, char *a, char **out) { return toolselect_registry_validate(r, t, a, out); }
static int fz_registry_close(uint64_t r, char **out) { return toolselect_registry_close(r, out); }
static int fz_selector_new(char *c, char **out) { return toolselect_selector_new(c, out); }
static int fz_selector_close(uint64_t s, char **out) { return toolselect_selector_close(s, out); }
static int fz_session_begin(uint64_t s, uint64_t r, char *q, char **out) { return toolselect_session_begin(s, r, q, out); }
static int fz_session_feed(uint64_t s, char *j, char **out) { return toolselect_session_feed(s, j, out); }
static int fz_session_close(uint64_t s, char **out) { return toolselect_session_close(s, out); }
*/
import "C"

import "unsafe"

// fzResult is one call through C: the code, the body copied out, and what
// toolselect_free returned for it (and for a second, double free).
type fzResult struct {
	rc             int
	body           []byte
	freed, refreed int
	null           bool // *out was NULL
}

// fzArg is a C string argument: nil is NULL, anything else a C copy (which
// ends at the first NUL byte, as a C caller's string would).
type fzArg []byte

func (a fzArg) c() *C.char {
	if a == nil {
		return nil
	}
	return C.CString(string(a))
}

func fzRelease(ps ...*C.char) {
	for _, p := range ps {
		if p != nil {
			C.free(unsafe.Pointer(p))
		}
	}
}

// fzCall runs one export with an out pointer (or with out = NULL when
// discard is set), copies the body and frees it twice.
func fzCall(discard bool, call func(out **C.char) C.int) fzResult {
	if discard {
		return fzResult{rc: int(call(nil)), null: true}
	}
	var out *C.char
	r := fzResult{rc: int(call(&out))}
	if out == nil {
		r.null = true
		return r
	}
	r.body = C.GoBytes(unsafe.Pointer(out), C.int(C.strlen(out)))
	r.freed = int(C.fz_free(out))
	r.refreed = int(C.fz_free(out)) // the ledger refuses it: nothing is freed twice
	return r
}

// fzForeignFree hands toolselect_free a pointer the library never returned.
func fzForeignFree() int {
	p := C.malloc(16)
	defer C.free(p)
	return int(C.fz_free((*C.char)(p)))
}

func fzStats() fzResult {
	return fzCall(false, func(out **C.char) C.int { return C.fz_stats(out) })
}

func fzEcho(j fzArg) fzResult {
	p := j.c()
	defer fzRelease(p)
	return fzCall(false, func(out **C.char) C.int { return C.fz_echo(p, out) })
}

func fzRegistryNew(o fzArg) fzResult {
	p := o.c()
	defer fzRelease(p)
	return fzCall(false, func(out **C.char) C.int { return C.fz_registry_new(p, out) })
}

func fzRegistryRegister(h uint64, t fzArg, discard bool) fzResult {
	p := t.c()
	defer fzRelease(p)
	return fzCall(discard, func(out **C.char) C.int { return C.fz_registry_register(C.uint64_t(h), p, out) })
}

func fzRegistryLoadCatalog(h uint64, c fzArg) fzResult {
	p := c.c()
	defer fzRelease(p)
	return fzCall(false, func(out **C.char) C.int { return C.fz_registry_load_catalog(C.uint64_t(h), p, out) })
}

func fzRegistryView(h uint64, f fzArg) fzResult {
	p := f.c()
	defer fzRelease(p)
	return fzCall(false, func(out **C.char) C.int { return C.fz_registry_view(C.uint64_t(h), p, out) })
}

func fzRegistryValidate(h uint64, t, a fzArg) fzResult {
	pt, pa := t.c(), a.c()
	defer fzRelease(pt, pa)
	return fzCall(false, func(out **C.char) C.int { return C.fz_registry_validate(C.uint64_t(h), pt, pa, out) })
}

func fzRegistryClose(h uint64) fzResult {
	return fzCall(false, func(out **C.char) C.int { return C.fz_registry_close(C.uint64_t(h), out) })
}

func fzSelectorNew(c fzArg) fzResult {
	p := c.c()
	defer fzRelease(p)
	return fzCall(false, func(out **C.char) C.int { return C.fz_selector_new(p, out) })
}

func fzSelectorClose(h uint64) fzResult {
	return fzCall(false, func(out **C.char) C.int { return C.fz_selector_close(C.uint64_t(h), out) })
}

func fzSessionBegin(s, r uint64, q fzArg) fzResult {
	p := q.c()
	defer fzRelease(p)
	return fzCall(false, func(out **C.char) C.int { return C.fz_session_begin(C.uint64_t(s), C.uint64_t(r), p, out) })
}

func fzSessionFeed(s uint64, j fzArg) fzResult {
	p := j.c()
	defer fzRelease(p)
	return fzCall(false, func(out **C.char) C.int { return C.fz_session_feed(C.uint64_t(s), p, out) })
}

func fzSessionClose(h uint64) fzResult {
	return fzCall(false, func(out **C.char) C.int { return C.fz_session_close(C.uint64_t(h), out) })
}
