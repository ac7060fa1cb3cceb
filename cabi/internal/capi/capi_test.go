package capi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func decode(t *testing.T, r Result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

func wantErr(t *testing.T, r Result, code Code, substr string) {
	t.Helper()
	if r.Code != code {
		t.Fatalf("code = %d (%s), want %d; body %s", r.Code, r.Code.Kind(), code, r.Body)
	}
	m := decode(t, r)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %s", r.Body)
	}
	if e["kind"] != code.Kind() || int(e["code"].(float64)) != int(code) {
		t.Errorf("error %v does not carry code %d/%s", e, code, code.Kind())
	}
	if msg, _ := e["message"].(string); !strings.Contains(msg, substr) {
		t.Errorf("message %q does not contain %q", msg, substr)
	}
}

func newRegistry(t *testing.T) uint64 {
	t.Helper()
	r := RegistryNew(nil, false)
	if r.Code != OK {
		t.Fatalf("RegistryNew: %s", r.Body)
	}
	h := uint64(decode(t, r)["handle"].(float64))
	t.Cleanup(func() { RegistryClose(h) })
	return h
}

const addTool = `{"name":"add","description":"Add two integers","parameters":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}}`

func TestRegistryLifecycle(t *testing.T) {
	h := newRegistry(t)
	if r := RegistryRegister(h, []byte(addTool), true); r.Code != OK {
		t.Fatalf("register: %s", r.Body)
	}
	r := RegistrySchema(h)
	if r.Code != OK || !strings.Contains(string(r.Body), `"required":["a","b"]`) {
		t.Fatalf("schema: %s", r.Body)
	}
	r = RegistryView(h, []byte("anthropic"), true)
	if r.Code != OK || !strings.Contains(string(r.Body), `"input_schema"`) {
		t.Fatalf("view: %s", r.Body)
	}
	wantErr(t, RegistryView(h, []byte("nope"), true), ErrArgument, "unknown format")

	r = RegistryValidate(h, []byte("add"), true, []byte(`{"a":1,"b":2}`), true)
	if m := decode(t, r); r.Code != OK || m["valid"] != true {
		t.Fatalf("valid args: %s", r.Body)
	}
	r = RegistryValidate(h, []byte("add"), true, []byte(`{"a":"x"}`), true)
	m := decode(t, r)
	if r.Code != OK || m["valid"] != false || len(m["violations"].([]any)) != 2 {
		t.Fatalf("invalid args: %s", r.Body)
	}
	r = RegistryValidate(h, []byte("add"), true, []byte(`{"a":`), true)
	if m := decode(t, r); r.Code != OK || m["valid"] != false {
		t.Fatalf("malformed args must be a violation: %s", r.Body)
	}
	wantErr(t, RegistryValidate(h, []byte("sub"), true, []byte(`{}`), true), ErrNotFound, `unknown tool "sub"`)
}

func TestRegistryRefusals(t *testing.T) {
	h := newRegistry(t)
	wantErr(t, RegistryRegister(h, []byte(`{"name":"x","description":"no schema"}`), true), ErrRejected, `tool "x"`)
	r := RegistryRegister(h, []byte(`[`+addTool+`,{"name":"","parameters":{}},`+addTool+`]`), true)
	wantErr(t, r, ErrRejected, "")
	refused := decode(t, r)["error"].(map[string]any)["detail"].(map[string]any)["refused"].([]any)
	if len(refused) != 2 {
		t.Errorf("want 2 refusals (empty name, duplicate), got %v", refused)
	}
	if RegistrySchema(h).Body[1] != ']' {
		t.Errorf("a refused batch must register nothing")
	}
	wantErr(t, RegistryRegister(h, []byte(`"add"`), true), ErrArgument, "object")
	wantErr(t, RegistryLoadCatalog(h, []byte(`nonsense`), true), ErrArgument, "catalog")
	r = RegistryLoadCatalog(h, []byte(`{"tools":[{"name":"t1","description":"d","inputSchema":{"type":"object"}}]}`), true)
	if m := decode(t, r); r.Code != OK || m["format"] != "mcp" || m["registered"].(float64) != 1 {
		t.Fatalf("mcp catalog: %s", r.Body)
	}
}

// The file export reads what the text export reads, names the file and the
// line of a bad tool, and registers nothing when one tool is refused.
func TestRegistryLoadCatalogFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "tools.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	line := `{"name":"%s","description":"d","parameters":{"type":"object"}}` + "\n"
	os.WriteFile(good, []byte(fmt.Sprintf(line, "t1")+fmt.Sprintf(line, "t2")), 0o600)
	os.WriteFile(bad, []byte(fmt.Sprintf(line, "b1")+`{"name":"b2","parameters":{"type":"object"},}`+"\n"), 0o600)
	h := newRegistry(t)
	r := RegistryLoadCatalogFile(h, []byte(good), true)
	if m := decode(t, r); r.Code != OK || m["format"] != "canonical" || m["registered"].(float64) != 2 {
		t.Fatalf("file catalog: %s", r.Body)
	}
	h2 := newRegistry(t)
	wantErr(t, RegistryLoadCatalogFile(h2, []byte(bad), true), ErrArgument, "bad.jsonl")
	wantErr(t, RegistryLoadCatalogFile(h2, []byte(bad), true), ErrArgument, "line 2")
	wantErr(t, RegistryLoadCatalogFile(h2, []byte(filepath.Join(dir, "missing.jsonl")), true), ErrArgument, "missing.jsonl")
	wantErr(t, RegistryLoadCatalogFile(h2, nil, false), ErrArgument, "path is NULL")
	wantErr(t, RegistryLoadCatalogFile(h2, []byte{}, true), ErrArgument, "path is empty")
	wantErr(t, RegistryLoadCatalogFile(h2, []byte(good+"\xff"), true), ErrArgument, "catalog")
	if string(RegistrySchema(h2).Body) != "[]" {
		t.Errorf("a refused file must register nothing: %s", RegistrySchema(h2).Body)
	}
	wantErr(t, RegistryLoadCatalogFile(h, []byte(good), true), ErrRejected, "t1") // already registered: all or none
}

func TestBadInputs(t *testing.T) {
	h := newRegistry(t)
	wantErr(t, RegistryRegister(h, nil, false), ErrArgument, "tool_json is NULL")
	wantErr(t, RegistryRegister(h, []byte("{\"name\":\"\xff\"}"), true), ErrArgument, "not valid UTF-8")
	wantErr(t, RegistryRegister(h, []byte(`{"name":`), true), ErrArgument, "not valid JSON")
	wantErr(t, RegistryValidate(h, nil, false, []byte(`{}`), true), ErrArgument, "tool is NULL")
	wantErr(t, RegistryValidate(h, []byte("add"), true, nil, false), ErrArgument, "args_json is NULL")
	wantErr(t, RegistryView(h, nil, false), ErrArgument, "format is NULL")
	wantErr(t, RegistryNew([]byte(`{"limits":`), true), ErrArgument, "options_json")
	wantErr(t, Echo([]byte(`{`), true), ErrArgument, "not valid JSON")
	if r := Echo([]byte(` { "a" : [1, 2] } `), true); r.Code != OK || string(r.Body) != `{"a":[1,2]}` {
		t.Errorf("echo: %s", r.Body)
	}
}

func TestHandles(t *testing.T) {
	wantErr(t, RegistrySchema(0), ErrHandle, "0 (no object)")
	wantErr(t, RegistrySchema(1<<60), ErrHandle, "unknown registry handle")
	h := newRegistry(t)
	if r := RegistryClose(h); r.Code != OK {
		t.Fatal(string(r.Body))
	}
	wantErr(t, RegistryClose(h), ErrHandle, "is closed")
	wantErr(t, RegistrySchema(h), ErrHandle, "is closed")
	h2 := newRegistry(t)
	if h2 == h {
		t.Fatal("a handle was reused")
	}
	wantErr(t, SelectorClose(h2), ErrHandle, "is a registry, not a selector")
	wantErr(t, SessionFeed(h2, []byte(`{}`), true), ErrHandle, "not a session")
}

func TestLedger(t *testing.T) {
	before := Outstanding()
	Track(0xdead0)
	if Outstanding() != before+1 {
		t.Fatal("Track did not record")
	}
	if !Untrack(0xdead0) {
		t.Fatal("first Untrack must succeed")
	}
	if Untrack(0xdead0) {
		t.Fatal("a second Untrack (double free) must fail")
	}
	if Untrack(0xbeef0) {
		t.Fatal("a foreign pointer must fail")
	}
}

func TestRecovered(t *testing.T) {
	r := func() (r Result) {
		defer func() { r = Recovered(recover()) }()
		var m map[string]int
		m["x"] = 1
		return Ok(nil)
	}()
	wantErr(t, r, ErrInternal, "internal panic")
}

func TestConcurrentUse(t *testing.T) {
	h := newRegistry(t)
	if r := RegistryRegister(h, []byte(addTool), true); r.Code != OK {
		t.Fatal(string(r.Body))
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if r := RegistryValidate(h, []byte("add"), true, []byte(`{"a":1,"b":2}`), true); r.Code != OK {
					t.Errorf("validate: %s", r.Body)
					return
				}
				own := RegistryNew(nil, false)
				RegistryClose(uint64(decode(t, own)["handle"].(float64)))
			}
		}(i)
	}
	wg.Wait()
}
