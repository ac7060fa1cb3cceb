package registry_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

const objSchema = `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`

func tool(name, schema string) registry.Tool {
	var p json.RawMessage
	if schema != "" {
		p = json.RawMessage(schema)
	}
	return registry.NewTool(name, "test tool "+name, p)
}

// TestRegisterRefusals checks every refusal rule: the error is a
// *RegistrationError that names the tool and says what is wrong.
func TestRegisterRefusals(t *testing.T) {
	long := strings.Repeat("n", registry.MaxNameBytes+1)
	noSchema := func(name string, allow bool, mode registry.NoSchemaMode) registry.Tool {
		tl := tool(name, "")
		tl.AllowNoSchema, tl.NoSchemaMode = allow, mode
		return tl
	}
	cases := []struct {
		desc   string
		tool   registry.Tool
		want   []string // substrings of the message
		target error    // optional errors.Is target
	}{
		{"empty name", tool("", objSchema), []string{`tool ""`, "the name is empty"}, nil},
		{"name over 256 bytes", tool(long, objSchema), []string{long, "257 bytes, over the limit of 256"}, nil},
		{"newline in name", tool("a\nb", objSchema), []string{`"a\nb"`, "control character U+000A"}, nil},
		{"NUL in name", tool("a\x00b", objSchema), []string{`"a\x00b"`, "control character U+0000"}, nil},
		{"DEL in name", tool("a\x7fb", objSchema), []string{"control character U+007F"}, nil},
		{"invalid UTF-8 name", tool("a\xffb", objSchema), []string{"not valid UTF-8"}, nil},
		{"missing parameters", tool("nop", ""), []string{`tool "nop"`, "parameters schema is missing"}, registry.ErrNoSchema},
		{"null parameters", tool("nul", "null"), []string{`tool "nul"`, "parameters schema is missing"}, registry.ErrNoSchema},
		{"allowNoSchema without mode", noSchema("free", true, ""), []string{`tool "free"`, "allowNoSchema is set without a noSchemaMode"}, nil},
		{"allowNoSchema without mode, with schema", func() registry.Tool {
			tl := tool("free2", objSchema)
			tl.AllowNoSchema = true
			return tl
		}(), []string{`tool "free2"`, "allowNoSchema is set without a noSchemaMode"}, nil},
		{"invalid noSchemaMode", noSchema("odd", true, "sometimes"), []string{`tool "odd"`, `noSchemaMode "sometimes" is not one of`}, nil},
		{"schema is an array", tool("arr", `[{"type":"object"}]`), []string{`tool "arr"`, "must be a JSON object, got an array"}, nil},
		{"schema is a string", tool("str", `"object"`), []string{`tool "str"`, "must be a JSON object, got a string"}, nil},
		{"schema is true", tool("yes", `true`), []string{`tool "yes"`, "must be a JSON object, got a boolean"}, nil},
		{"schema is not JSON", tool("bad", `{"type":`), []string{`tool "bad"`, "not valid JSON"}, nil},
		{"schema type is a number", tool("t5", `{"type":5}`), []string{`tool "t5"`, "not a valid JSON Schema"}, nil},
		{"minimum is a string", tool("min", `{"type":"object","properties":{"n":{"minimum":"1"}}}`), []string{`tool "min"`, "/properties/n/minimum"}, nil},
		{"bad regex", tool("re", `{"type":"object","properties":{"s":{"pattern":"("}}}`), []string{`tool "re"`, "pattern"}, nil},
		{"dangling local $ref", tool("dangle", `{"$ref":"#/$defs/missing"}`), []string{`tool "dangle"`, "missing"}, nil},
		{"wrong type field", func() registry.Tool {
			tl := tool("web", objSchema)
			tl.Type = "web_search_20250305"
			return tl
		}(), []string{`tool "web"`, `type must be "function"`}, nil},
		{"$ref to file://", tool("f", `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`), []string{`tool "f"`, "file:///etc/passwd", "loads no files or URLs"}, registry.ErrExternalRef},
		{"$ref to http://", tool("h", `{"$ref":"http://example.com/schema.json"}`), []string{`tool "h"`, "http://example.com/schema.json"}, registry.ErrExternalRef},
		{"$ref to https://", tool("hs", `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json#/$defs/a"}}}`), []string{`tool "hs"`, "https://example.com/s.json"}, registry.ErrExternalRef},
		{"relative $ref", tool("rel", `{"type":"object","properties":{"a":{"$ref":"other.json"}}}`), []string{`tool "rel"`, `"other.json"`}, registry.ErrExternalRef},
		{"relative $ref under a remote $id", tool("rid", `{"$id":"https://example.com/root.json","$ref":"item.json"}`), []string{`tool "rid"`, "https://example.com/item.json"}, registry.ErrExternalRef},
		{"unknown $schema", tool("meta", `{"$schema":"https://example.com/meta","type":"object"}`), []string{`tool "meta"`}, registry.ErrExternalRef},
		{"$dynamicRef to remote", tool("dyn", `{"$dynamicRef":"https://example.com/s.json#x"}`), []string{`tool "dyn"`}, registry.ErrExternalRef},
	}
	for _, c := range cases {
		t.Run(c.desc, func(t *testing.T) {
			r := registry.New(nil)
			err := r.Register(c.tool)
			if err == nil {
				t.Fatalf("registered; want a refusal")
			}
			var re *registry.RegistrationError
			if !errors.As(err, &re) {
				t.Fatalf("error %T %v is not a *RegistrationError", err, err)
			}
			if re.Tool != c.tool.Name || re.Index != -1 {
				t.Errorf("RegistrationError{Tool: %q, Index: %d}, want {%q, -1}", re.Tool, re.Index, c.tool.Name)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if c.target != nil && !errors.Is(err, c.target) {
				t.Errorf("errors.Is(%v, %v) = false", err, c.target)
			}
			if r.Len() != 0 {
				t.Errorf("registry holds %d tools after a refusal", r.Len())
			}
		})
	}
}

func TestRegisterAccepts(t *testing.T) {
	cases := []struct{ desc, name, schema string }{
		{"dotted name", "math.factorial", objSchema},
		{"spaces and ampersand", "Search & Replace in files", objSchema},
		{"138-character name", strings.Repeat("x", 130) + ".tool.v1", objSchema},
		{"256-byte name", strings.Repeat("é", 128), objSchema},
		{"unicode name", "搜索", objSchema},
		{"local $defs ref", "defs", `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"integer"}}}`},
		{"local definitions ref", "definitions", `{"type":"object","properties":{"a":{"$ref":"#/definitions/x"}},"definitions":{"x":{"type":"integer"}}}`},
		{"root ref", "tree", `{"type":"object","properties":{"child":{"$ref":"#"}}}`},
		{"anchor ref", "anchor", `{"type":"object","properties":{"a":{"$ref":"#num"}},"$defs":{"n":{"$anchor":"num","type":"number"}}}`},
		{"embedded $id ref", "embedded", `{"$id":"https://example.com/root.json","type":"object","properties":{"a":{"$ref":"item.json"}},"$defs":{"item":{"$id":"item.json","type":"string"}}}`},
		{"draft-07 $schema", "d7", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/x"}},"definitions":{"x":{"type":"string"}}}`},
		{"ref to the 2020-12 metaschema", "meta", `{"type":"object","properties":{"schema":{"$ref":"https://json-schema.org/draft/2020-12/schema"}}}`},
		{"empty object schema", "any", `{}`},
	}
	for _, c := range cases {
		t.Run(c.desc, func(t *testing.T) {
			r := registry.New(nil)
			if err := r.Register(tool(c.name, c.schema)); err != nil {
				t.Fatalf("Register(%q): %v", c.name, err)
			}
			e, ok := r.Get(c.name)
			if !ok || e.Name() != c.name || !e.Validated() {
				t.Fatalf("Get(%q) = %v, %v", c.name, e, ok)
			}
		})
	}

	t.Run("no schema with a mode", func(t *testing.T) {
		r := registry.New(nil)
		tl := tool("shell", "")
		tl.AllowNoSchema, tl.NoSchemaMode = true, registry.NoSchemaHumanApproval
		if err := r.Register(tl); err != nil {
			t.Fatal(err)
		}
		e, _ := r.Get("shell")
		if e.Validated() {
			t.Error("a schema-less tool reports Validated() = true")
		}
		if err := e.ValidateArgs([]byte(`{"anything":[1,2]}`)); err != nil {
			t.Errorf("schema-less tool refused an object: %v", err)
		}
		if err := e.ValidateArgs([]byte(`[1]`)); !errors.Is(err, registry.ErrInvalidArgs) {
			t.Errorf("schema-less tool accepted an array: %v", err)
		}
	})
}

func TestRegisterDuplicate(t *testing.T) {
	r := registry.New(nil)
	if err := r.Register(tool("a", objSchema)); err != nil {
		t.Fatal(err)
	}
	err := r.Register(tool("a", `{"type":"object"}`))
	if !errors.Is(err, registry.ErrDuplicateName) || !strings.Contains(err.Error(), `tool "a"`) {
		t.Fatalf("duplicate Register: %v", err)
	}
	e, _ := r.Get("a")
	if string(e.Def().Parameters) != objSchema {
		t.Errorf("duplicate registration changed the first tool's schema")
	}
	if r.Len() != 1 {
		t.Errorf("Len = %d, want 1", r.Len())
	}
}

// TestRegisterAllAtomic: any refusal in a batch registers nothing, and the
// error lists every refused tool with its index.
func TestRegisterAllAtomic(t *testing.T) {
	r := registry.New(nil)
	if err := r.Register(tool("existing", objSchema)); err != nil {
		t.Fatal(err)
	}
	gen := r.Generation()
	batches := []struct {
		desc  string
		tools []registry.Tool
		want  []string
		is    error
	}{
		{"duplicate inside the batch", []registry.Tool{tool("x", objSchema), tool("y", objSchema), tool("x", objSchema)},
			[]string{`tool #2 "x"`, "used again (first at #0)"}, registry.ErrDuplicateName},
		{"duplicate of a registered tool", []registry.Tool{tool("x", objSchema), tool("existing", objSchema)},
			[]string{`tool #1 "existing"`, "already registered"}, registry.ErrDuplicateName},
		{"one bad schema", []registry.Tool{tool("x", objSchema), tool("y", `[]`), tool("z", objSchema)},
			[]string{`tool #1 "y"`, "must be a JSON object"}, nil},
		{"several problems", []registry.Tool{tool("", objSchema), tool("x", objSchema), tool("r", `{"$ref":"other.json"}`), tool("x", objSchema)},
			[]string{`tool #0 ""`, `tool #2 "r"`, `tool #3 "x"`}, registry.ErrExternalRef},
	}
	for _, b := range batches {
		t.Run(b.desc, func(t *testing.T) {
			err := r.RegisterAll(b.tools)
			if err == nil {
				t.Fatal("batch registered; want a refusal")
			}
			for _, w := range b.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if b.is != nil && !errors.Is(err, b.is) {
				t.Errorf("errors.Is(err, %v) = false: %v", b.is, err)
			}
			var re *registry.RegistrationError
			if !errors.As(err, &re) {
				t.Errorf("no *RegistrationError in %v", err)
			}
			if names := r.Names(); len(names) != 1 || names[0] != "existing" || r.Generation() != gen {
				t.Errorf("after a refused batch the registry holds %q (generation %d -> %d)", names, gen, r.Generation())
			}
		})
	}
	if err := r.RegisterAll([]registry.Tool{tool("x", objSchema), tool("y", objSchema)}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Names(), ","); got != "existing,x,y" {
		t.Errorf("names = %s, want existing,x,y (registration order)", got)
	}
}

func TestRegisterValidReportsIndex(t *testing.T) {
	r := registry.New(nil)
	refused := r.RegisterValid([]registry.Tool{tool("a", objSchema), tool("b", `true`), tool("c", objSchema), tool("a", objSchema)})
	if len(refused) != 2 {
		t.Fatalf("refused = %v, want 2", refused)
	}
	var re *registry.RegistrationError
	if !errors.As(refused[0], &re) || re.Index != 1 || re.Tool != "b" {
		t.Errorf("first refusal = %v", refused[0])
	}
	if !errors.As(refused[1], &re) || re.Index != 3 || !errors.Is(refused[1], registry.ErrDuplicateName) {
		t.Errorf("second refusal = %v", refused[1])
	}
	if got := strings.Join(r.Names(), ","); got != "a,c" {
		t.Errorf("names = %s, want a,c", got)
	}
}

func TestReplaceAndUnregister(t *testing.T) {
	r := registry.New(nil)
	if err := r.RegisterAll([]registry.Tool{tool("a", objSchema), tool("b", objSchema), tool("c", objSchema)}); err != nil {
		t.Fatal(err)
	}
	old, _ := r.Get("b")
	snap, gen := r.Snapshot()
	if err := r.Replace(tool("b", `{"type":"object","properties":{"n":{"type":"integer"}}}`)); err != nil {
		t.Fatal(err)
	}
	now, _ := r.Get("b")
	if now.Seq() <= old.Seq() || r.Generation() <= gen {
		t.Errorf("Replace did not advance Seq (%d -> %d) or Generation (%d -> %d)", old.Seq(), now.Seq(), gen, r.Generation())
	}
	if got := strings.Join(r.Names(), ","); got != "a,b,c" {
		t.Errorf("Replace moved the tool: %s", got)
	}
	if snap[1] != old {
		t.Error("an earlier snapshot changed under Replace")
	}
	if err := r.Replace(tool("b", `[]`)); err == nil {
		t.Error("Replace accepted an invalid schema")
	}
	if e, _ := r.Get("b"); e != now {
		t.Error("a refused Replace changed the tool")
	}
	if err := r.Replace(tool("d", objSchema)); err != nil {
		t.Fatal(err)
	}
	if !r.Unregister("a") || r.Unregister("a") {
		t.Error("Unregister should report true once, then false")
	}
	if got := strings.Join(r.Names(), ","); got != "b,c,d" {
		t.Errorf("names = %s, want b,c,d", got)
	}
	if len(snap) != 3 || snap[0].Name() != "a" {
		t.Error("an earlier snapshot changed under Unregister")
	}
	if _, ok := r.Lookup("a"); ok {
		t.Error("Lookup found an unregistered tool")
	}
	if err := r.Validate("a", []byte(`{}`)); !errors.Is(err, registry.ErrUnknownTool) {
		t.Errorf("Validate on an unknown tool: %v", err)
	}
}

// TestRegistrationKeepsBytes: the registry stores the schema as given and
// hands out copies that cannot reach its own.
func TestRegistrationKeepsBytes(t *testing.T) {
	schema := []byte("{\n  \"type\" : \"object\",\n\t\"properties\": {}\n}\n")
	in := registry.NewTool("keep", "d", append([]byte(nil), schema...))
	in.Tags = []string{"t"}
	r := registry.New(nil)
	if err := r.Register(in); err != nil {
		t.Fatal(err)
	}
	in.Parameters[3] = 'X' // the caller's buffer changes after registration
	in.Tags[0] = "changed"
	e, _ := r.Get("keep")
	if string(e.Def().Parameters) != string(schema) {
		t.Errorf("stored schema = %q, want %q", e.Def().Parameters, schema)
	}
	cp := e.Tool()
	cp.Parameters[3] = 'Y'
	cp.Tags[0] = "changed"
	if string(e.Def().Parameters) != string(schema) || e.Def().Tags[0] != "t" {
		t.Error("a copy from Tool() reaches the registry's own definition")
	}
}
