// Command cabi is toolselect's C ABI, built with
//
//	go build -buildmode=c-shared -o libtoolselect.so ./cabi
//
// It holds only //export wrappers: each converts C arguments, calls one
// function of cabi/internal/capi, and hands the JSON result back as C memory that
// the caller frees with toolselect_free. Every export starts with
// `defer guard(&rc, out)` (a test checks this), so no panic crosses into C.
// The contract for callers is cabi/toolselect.h.
package main

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/toolselect/toolselect"
	"github.com/toolselect/toolselect/cabi/internal/capi"
)

// version is toolselect's release (the VERSION file); tests build libraries
// of another version with -ldflags "-X main.versionOverride=...".
var version = func() string {
	if versionOverride != "" {
		return versionOverride
	}
	return toolselect.Version()
}()

// versionOverride, set with -ldflags -X, stands in for the VERSION file
// (the loader's version check is tested with a library of another version).
var versionOverride string

func main() {}

// The runtime's first collection, when it falls inside a caller's first large
// call (the 6.6 MB copy of a 10,000-tool catalog in `in`), held that call for
// 20-30 ms of its 100 (measured from Python: the allocating call waits in the
// cycle's mark assist). Collecting once here, while the heap is a megabyte or
// two, costs under a millisecond at load and keeps that wait out of the
// caller's first call (bench/fts5_vs_rank.py --python).
//
// Telemetry is set up here too, from the host process's OTEL_* environment
// (docs/observability.md): with none set, nothing is installed.
func init() {
	capi.StartTelemetry()
	runtime.GC()
}

// in copies a NUL-terminated C string into Go memory; present is false for NULL.
func in(p *C.char) (b []byte, present bool) {
	if p == nil {
		return nil, false
	}
	n := int(C.strlen(p))
	b = make([]byte, n)
	copy(b, unsafe.Slice((*byte)(unsafe.Pointer(p)), n))
	return b, true
}

// emit copies the result body into malloc'ed C memory, records it in the
// ledger, stores it in *out (when out is not NULL) and returns the code.
func emit(res capi.Result, out **C.char) C.int {
	if out == nil {
		return C.int(res.Code)
	}
	*out = nil
	n := len(res.Body)
	p := C.malloc(C.size_t(n + 1))
	if p == nil {
		return C.int(capi.ErrInternal)
	}
	buf := unsafe.Slice((*byte)(p), n+1)
	copy(buf, res.Body)
	buf[n] = 0
	capi.Track(uintptr(p))
	*out = (*C.char)(p)
	return C.int(res.Code)
}

// guard is deferred first in every export: it turns a panic into an
// ErrInternal result instead of letting it kill the host process.
func guard(rc *C.int, out **C.char) {
	if p := recover(); p != nil {
		*rc = emit(capi.Recovered(p), out)
	}
}

//export toolselect_version
func toolselect_version(out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.Version(version, runtime.Version()), out)
}

//export toolselect_telemetry_flush
func toolselect_telemetry_flush(out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.FlushTelemetry(), out)
}

//export toolselect_free
func toolselect_free(p *C.char) (rc C.int) {
	defer guard(&rc, nil)
	if p == nil {
		return C.int(capi.OK)
	}
	if !capi.Untrack(uintptr(unsafe.Pointer(p))) {
		return C.int(capi.ErrPointer)
	}
	C.free(unsafe.Pointer(p))
	return C.int(capi.OK)
}

//export toolselect_stats
func toolselect_stats(out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.Stats(), out)
}

//export toolselect_echo
func toolselect_echo(jsonText *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(jsonText)
	return emit(capi.Echo(b, ok), out)
}

//export toolselect_registry_new
func toolselect_registry_new(optionsJSON *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(optionsJSON)
	return emit(capi.RegistryNew(b, ok), out)
}

//export toolselect_registry_register
func toolselect_registry_register(reg C.uint64_t, toolJSON *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(toolJSON)
	return emit(capi.RegistryRegister(uint64(reg), b, ok), out)
}

//export toolselect_registry_load_catalog
func toolselect_registry_load_catalog(reg C.uint64_t, catalog *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(catalog)
	return emit(capi.RegistryLoadCatalog(uint64(reg), b, ok), out)
}

//export toolselect_registry_load_catalog_file
func toolselect_registry_load_catalog_file(reg C.uint64_t, path *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(path)
	return emit(capi.RegistryLoadCatalogFile(uint64(reg), b, ok), out)
}

//export toolselect_registry_schema
func toolselect_registry_schema(reg C.uint64_t, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.RegistrySchema(uint64(reg)), out)
}

//export toolselect_registry_view
func toolselect_registry_view(reg C.uint64_t, format *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(format)
	return emit(capi.RegistryView(uint64(reg), b, ok), out)
}

//export toolselect_registry_validate
func toolselect_registry_validate(reg C.uint64_t, tool *C.char, argsJSON *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	t, tok := in(tool)
	a, aok := in(argsJSON)
	return emit(capi.RegistryValidate(uint64(reg), t, tok, a, aok), out)
}

//export toolselect_registry_authorize
func toolselect_registry_authorize(reg C.uint64_t, callJSON *C.char, policyJSON *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	c, cok := in(callJSON)
	p, pok := in(policyJSON)
	return emit(capi.RegistryAuthorize(uint64(reg), c, cok, p, pok), out)
}

//export toolselect_registry_close
func toolselect_registry_close(reg C.uint64_t, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.RegistryClose(uint64(reg)), out)
}

//export toolselect_config_schema
func toolselect_config_schema(out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.ConfigSchema(), out)
}

//export toolselect_selector_new
func toolselect_selector_new(configJSON *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(configJSON)
	return emit(capi.SelectorNew(b, ok), out)
}

//export toolselect_selector_select
func toolselect_selector_select(sel C.uint64_t, reg C.uint64_t, requestJSON *C.char, cancel C.uint64_t, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(requestJSON)
	return emit(capi.SelectorSelect(uint64(sel), uint64(reg), b, ok, uint64(cancel)), out)
}

//export toolselect_selector_close
func toolselect_selector_close(sel C.uint64_t, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.SelectorClose(uint64(sel)), out)
}

//export toolselect_selector_add_feedback
func toolselect_selector_add_feedback(sel C.uint64_t, feedbackJSON *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(feedbackJSON)
	return emit(capi.SelectorAddFeedback(uint64(sel), b, ok), out)
}

//export toolselect_session_begin
func toolselect_session_begin(sel C.uint64_t, reg C.uint64_t, requestJSON *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(requestJSON)
	return emit(capi.SessionBegin(uint64(sel), uint64(reg), b, ok), out)
}

//export toolselect_session_feed
func toolselect_session_feed(session C.uint64_t, replyJSON *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(replyJSON)
	return emit(capi.SessionFeed(uint64(session), b, ok), out)
}

//export toolselect_session_close
func toolselect_session_close(session C.uint64_t, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.SessionClose(uint64(session)), out)
}

//export toolselect_cancel_new
func toolselect_cancel_new(out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.CancelNew(), out)
}

//export toolselect_cancel
func toolselect_cancel(token C.uint64_t, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.Cancel(uint64(token)), out)
}

//export toolselect_cancel_close
func toolselect_cancel_close(token C.uint64_t, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.CancelClose(uint64(token)), out)
}

//export toolselect_registry_rank
func toolselect_registry_rank(reg C.uint64_t, requestJSON *C.char, cancel C.uint64_t, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(requestJSON)
	return emit(capi.RegistryRank(uint64(reg), b, ok, uint64(cancel)), out)
}

//export toolselect_fake_model_new
func toolselect_fake_model_new(repliesJSON *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(repliesJSON)
	return emit(capi.FakeModelNew(b, ok), out)
}

//export toolselect_fake_model_requests
func toolselect_fake_model_requests(fake C.uint64_t, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.FakeModelRequests(uint64(fake)), out)
}

//export toolselect_fake_model_close
func toolselect_fake_model_close(fake C.uint64_t, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	return emit(capi.FakeModelClose(uint64(fake)), out)
}

//export toolselect_config_unknown_env
func toolselect_config_unknown_env(envJSON *C.char, out **C.char) (rc C.int) {
	defer guard(&rc, out)
	b, ok := in(envJSON)
	return emit(capi.ConfigUnknownEnv(b, ok), out)
}
