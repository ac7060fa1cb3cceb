package capi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// doc1KB is a ~1 KB argument document for the add-like tool below; the
// Python benchmark (bench/python_overhead.py) sends the same shape.
func doc1KB() []byte {
	items := make([]string, 0, 16)
	for i := 0; len(strings.Join(items, ",")) < 940; i++ {
		items = append(items, fmt.Sprintf(`"item number %03d with some padding text"`, i))
	}
	return []byte(`{"query":"find the weather in Paris","limit":10,"tags":[` + strings.Join(items, ",") + `]}`)
}

const benchTool = `{"name":"search","description":"Search","parameters":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer","minimum":1},"tags":{"type":"array","items":{"type":"string"}}},"required":["query"]}}`

// BenchmarkEcho1KB is the Go side of the round-trip benchmark: parse and
// compact a 1 KB JSON document, as toolselect_echo does after the C copy.
func BenchmarkEcho1KB(b *testing.B) {
	doc := doc1KB()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if r := Echo(doc, true); r.Code != OK {
			b.Fatal(string(r.Body))
		}
	}
}

// BenchmarkValidate1KB is capi.RegistryValidate (handle lookup, UTF-8 check,
// validation, JSON result) on 1 KB of arguments, called from Go.
func BenchmarkValidate1KB(b *testing.B) {
	r := RegistryNew(nil, false)
	var m map[string]uint64
	json.Unmarshal(r.Body, &m)
	h := m["handle"]
	defer RegistryClose(h)
	RegistryRegister(h, []byte(benchTool), true)
	doc := doc1KB()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if r := RegistryValidate(h, []byte("search"), true, doc, true); r.Code != OK {
			b.Fatal(string(r.Body))
		}
	}
}

// BenchmarkRegistryValidate1KB is the registry call alone, no envelope.
func BenchmarkRegistryValidate1KB(b *testing.B) {
	var t registry.Tool
	json.Unmarshal([]byte(benchTool), &t)
	reg := registry.New(nil)
	if err := reg.Register(t); err != nil {
		b.Fatal(err)
	}
	doc := doc1KB()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if err := reg.Validate("search", doc); err != nil {
			b.Fatal(err)
		}
	}
}
