package registry_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
	"github.com/toolselect/toolselect/registry"
)

// corpusSchemas are the schemas of the JSON-Schema-Test-Suite and of the
// catalogs of the data sets.
func corpusSchemas(t testing.TB) [][]byte {
	var out [][]byte
	files, _ := filepath.Glob(filepath.Join(fixtures.JSONSchemaSuite("*"), "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cases []struct {
			Schema json.RawMessage `json:"schema"`
		}
		if json.Unmarshal(data, &cases) == nil {
			for _, c := range cases {
				out = append(out, c.Schema)
			}
		}
	}
	for _, set := range fixtures.Sets {
		f := fixtures.Tools(set)
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var tool struct {
				Parameters json.RawMessage `json:"parameters"`
			}
			if json.Unmarshal(sc.Bytes(), &tool) == nil && tool.Parameters != nil {
				out = append(out, tool.Parameters)
			}
		}
		fh.Close()
	}
	if len(out) < 1000 {
		t.Fatalf("only %d corpus schemas", len(out))
	}
	return out
}

// precheckRefused are schemas the meta-schema refuses, each with a keyword
// precheck knows: precheck must leave every one to the compiler.
var precheckRefused = []string{
	`{"type":"strin"}`,
	`{"type":[]}`,
	`{"type":["string","string"]}`,
	`{"type":5}`,
	`{"properties":[]}`,
	`{"properties":{"a":5}}`,
	`{"properties":{"a":{"type":"intger"}}}`,
	`{"required":["a","a"]}`,
	`{"required":[1]}`,
	`{"required":"a"}`,
	`{"items":[{"type":"string"}]}`,
	`{"items":5}`,
	`{"additionalProperties":"no"}`,
	`{"anyOf":[]}`,
	`{"oneOf":{}}`,
	`{"allOf":[5]}`,
	`{"not":[]}`,
	`{"description":5}`,
	`{"title":null}`,
	`{"format":1}`,
	`{"enum":"a"}`,
	`{"examples":{}}`,
	`{"uniqueItems":"yes"}`,
	`{"minimum":"1"}`,
	`{"exclusiveMinimum":true}`,
	`{"multipleOf":0}`,
	`{"multipleOf":-2}`,
	`{"minLength":-1}`,
	`{"maxItems":1.5}`,
	`{"minProperties":"2"}`,
	`{"properties":{"a":{"items":{"properties":{"b":{"minLength":-1}}}}}}`,
}

// TestPrecheckAgreesWithCompiler: whatever precheck decides valid, the
// library compiles; whatever the meta-schema refuses, precheck does not
// decide (so the refusal and its message come from the compiler, as before).
func TestPrecheckAgreesWithCompiler(t *testing.T) {
	decided := 0
	schemas := corpusSchemas(t)
	for _, s := range schemas {
		if len(bytes.TrimSpace(s)) == 0 || bytes.TrimSpace(s)[0] != '{' {
			continue
		}
		ok, err := registry.PrecheckThenCompile(s)
		if ok {
			decided++
			if err != nil {
				t.Errorf("precheck decided %s valid, the compiler says: %v", s, err)
			}
		}
	}
	t.Logf("precheck decided %d of %d corpus schemas", decided, len(schemas))
	if decided < len(schemas)/2 {
		t.Errorf("precheck decided only %d of %d corpus schemas", decided, len(schemas))
	}
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 40) + `{}` + strings.Repeat(`}}`, 40)
	bigEnum := `{"enum":[` + strings.TrimSuffix(strings.Repeat(`1,`, 10001), ",") + `]}`
	hiddenEnum := `{"default":{"x":{"enum":[` + strings.TrimSuffix(strings.Repeat(`1,`, 10001), ",") + `]}}}`
	for _, s := range append(precheckRefused, deep, bigEnum, hiddenEnum) {
		ok, err := registry.PrecheckThenCompile([]byte(s))
		if ok || err == nil {
			t.Errorf("%s: precheck decided %v, compiler error %v; want undecided and refused", s, ok, err)
		}
	}
}

// A schema shared by many tools (one schema text, or equal schemas written
// apart) is refused or accepted exactly as when registered alone: every tool
// gets the same refusal, and accepted ones validate alike.
func TestSharedSchemaRegistration(t *testing.T) {
	bad := []string{
		`{"type":"object","properties":{"n":{"type":"intger"}}}`,
		`{"type":"object","required":["a","a"]}`,
		`{"type":"object","properties":{"p":{"pattern":"("}}}`,
		`{"type":"object","$ref":"other.json"}`,
		`{"$ref":"#"}`,
	}
	for _, schema := range bad {
		alone := registry.New(nil).Register(registry.NewTool("alone", "", json.RawMessage(schema)))
		if alone == nil {
			t.Fatalf("%s registered alone", schema)
		}
		want := strings.TrimPrefix(alone.Error(), `tool "alone": `)
		tools := make([]registry.Tool, 300)
		for i := range tools {
			tools[i] = registry.NewTool(fmt.Sprintf("t%d", i), "", json.RawMessage(schema))
		}
		reg := registry.New(nil)
		err := reg.RegisterAll(tools)
		if reg.Len() != 0 {
			t.Errorf("%s: %d tools registered from a refused batch", schema, reg.Len())
		}
		var n int
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			var re *registry.RegistrationError
			if !errors.As(e, &re) || !strings.HasSuffix(e.Error(), want) || re.Index != n {
				t.Errorf("%s: refusal %d = %v, want #%d ending %q", schema, n, e, n, want)
			}
			n++
		}
		if n != len(tools) {
			t.Errorf("%s: %d refusals, want %d", schema, n, len(tools))
		}
		if refused := registry.New(nil).RegisterValid(tools); len(refused) != len(tools) {
			t.Errorf("%s: RegisterValid refused %d of %d", schema, len(refused), len(tools))
		}
	}

	good := []string{
		`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`,
		`{"type":"object","properties":{"n":{"$ref":"#/$defs/pos"}},"required":["n"],"$defs":{"pos":{"type":"integer","minimum":1}}}`,
	}
	for _, schema := range good {
		tools := make([]registry.Tool, 300)
		for i := range tools {
			s := schema
			if i%2 == 1 { // equal schema, other text
				s = strings.ReplaceAll(schema, ":", ": ")
			}
			tools[i] = registry.NewTool(fmt.Sprintf("t%d", i), "", json.RawMessage(s))
		}
		reg := registry.New(nil)
		if err := reg.RegisterAll(tools); err != nil {
			t.Fatalf("%s: %v", schema, err)
		}
		for i, e := range reg.Entries() {
			if string(e.Def().Parameters) != string(tools[i].Parameters) {
				t.Errorf("%s: schema of #%d not kept verbatim", schema, i)
			}
			if got := e.Required(); len(got) != 1 || got[0] != "n" {
				t.Errorf("%s: Required = %v", schema, got)
			}
			if err := e.ValidateArgs([]byte(`{"n":2}`)); err != nil {
				t.Errorf("%s: valid args refused: %v", schema, err)
			}
			if err := e.ValidateArgs([]byte(`{"n":0}`)); !errors.Is(err, registry.ErrInvalidArgs) || !strings.Contains(err.Error(), "minimum") {
				t.Errorf("%s: n=0: %v", schema, err)
			}
		}
	}
}

// FuzzPrecheck: a schema precheck decides valid compiles.
func FuzzPrecheck(f *testing.F) {
	for _, s := range precheckRefused {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":["string","null"],"enum":["x",null]},"b":{"items":{"minimum":-1.5e3}}},"required":["a"]}`))
	f.Add([]byte(`{"anyOf":[true,{"not":false}],"default":{"enum":[1]},"const":[{"a":[]}],"maxItems":3}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		decided, err := registry.PrecheckThenCompile(raw)
		if decided && err != nil {
			t.Fatalf("precheck decided %q valid; the compiler's path says %v", raw, err)
		}
	})
}
