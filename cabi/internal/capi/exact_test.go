package capi

import (
	"path/filepath"
	"strconv"
	"testing"
)

// TestOptionObjectsExactKeys: every option object the C ABI reads refuses a
// key that matches one it takes only in case, and a name given twice at any
// depth, as an argument error naming the key (strictjson, the decoder every
// configuration reader uses; tests/hardening walks the Go readers).
func TestOptionObjectsExactKeys(t *testing.T) {
	for opts, want := range map[string]string{
		`{"limits": {"MaxEnum": 5}, "Limits": {}}`:      `"Limits" matches "limits"`,
		`{"limits": {"MaxEnum": 5, "MaxEnum": 100000}}`: `"limits.MaxEnum" is given twice`,
		`{"limits": {"maxenum": 5}}`:                    `"limits.maxenum" matches "MaxEnum"`,
	} {
		wantErr(t, RegistryNew([]byte(opts), true), ErrArgument, want)
	}
	for cfg, want := range map[string]string{
		`{"model": "m", "Model": "n"}`:                            `"Model" matches "model"`,
		`{"model": "m", "own_client": false, "own_client": true}`: `"own_client" is given twice`,
		`{"model": "m", "model": "n"}`:                            `"model" is given twice`,
	} {
		wantErr(t, SelectorNew([]byte(cfg), true), ErrArgument, want)
	}

	store := filepath.Join(t.TempDir(), "fb.jsonl")
	sel := handleOf(t, SelectorNew([]byte(`{"model":"m","feedback":`+strconv.Quote(store)+`}`), true))
	defer SelectorClose(sel)
	reg := newRegistry(t)
	for rec, want := range map[string]string{
		`{"query": "q", "tools": ["a"], "Tools": ["rm"]}`: `"Tools" matches "tools"`,
		`{"query": "q", "tools": ["a"], "tools": ["rm"]}`: `"tools" is given twice`,
	} {
		wantErr(t, SelectorAddFeedback(sel, []byte(rec), true), ErrArgument, want)
	}
	for req, want := range map[string]string{
		`{"query": "q", "Query": "other"}`:            `"Query" matches "query"`,
		`{"query": "q", "top_k": 1, "top_k": 9}`:      `"top_k" is given twice`,
		`{"query": "q", "context": {"a": 1, "a": 2}}`: `"context.a" is given twice`,
	} {
		wantErr(t, SelectorSelect(sel, reg, []byte(req), true, 0), ErrArgument, want)
	}
	for tool, want := range map[string]string{
		`{"name": "rm", "description": "d", "safe": false, "Safe": true}`: `"Safe" matches "safe"`,
		`{"name": "rm", "description": "d", "safe": false, "safe": true}`: `"safe" is given twice`,
	} {
		wantErr(t, RegistryRegister(reg, []byte(tool), true), ErrArgument, want)
	}
}
