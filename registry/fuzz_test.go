package registry_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// FuzzParseCatalog: any input either parses or gives an error that starts
// with "catalog"; never a panic. What parses has a supported format, and
// registers or is refused with a *RegistrationError that names the tool and
// its catalog index. The registered tools round-trip: the canonical view, as
// an array and as JSON Lines, reads back as the same tools.
func FuzzParseCatalog(f *testing.F) {
	for _, seed := range []string{
		`[{"name":"a","description":"A.","parameters":{"type":"object"}}]`,
		"{\"name\":\"a\",\"parameters\":{}}\n{\"name\":\"b\",\"parameters\":{}}\n",
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"x","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}`,
		`[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`,
		`[{"name":"a","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}]`,
		`{"tools":5}`, "\xef\xbb\xbf[]", ``, `[1]`, `{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}`,
	} {
		f.Add([]byte(seed))
	}
	formats := map[registry.Format]bool{registry.FormatCanonical: true, registry.FormatOpenAI: true,
		registry.FormatOpenAIResponses: true, registry.FormatAnthropic: true, registry.FormatMCP: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		tools, format, err := registry.ParseCatalog(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "catalog") {
				t.Fatalf("error does not say it is about the catalog: %v", err)
			}
			return
		}
		if !formats[format] {
			t.Fatalf("unknown format %q", format)
		}
		r := registry.New(nil)
		for _, err := range r.RegisterValid(tools) {
			var re *registry.RegistrationError
			if !errors.As(err, &re) {
				t.Fatalf("refusal %T %v", err, err)
			}
			if re.Index < 0 || re.Index >= len(tools) || re.Tool != tools[re.Index].Name || re.Reason == "" {
				t.Fatalf("refusal does not locate the tool: %+v", re)
			}
		}
		want := normalized(t, r.Tools())
		view, err := r.View(registry.FormatCanonical)
		if err != nil {
			t.Fatal(err)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(view, &items); err != nil {
			t.Fatal(err)
		}
		var lines bytes.Buffer
		for _, it := range items {
			lines.Write(it)
			lines.WriteByte('\n')
		}
		for _, doc := range [][]byte{view, lines.Bytes()} {
			if len(items) == 0 {
				break
			}
			back, _, err := registry.ParseCatalog(doc)
			if err != nil {
				t.Fatalf("canonical view does not parse back: %v\n%s", err, doc)
			}
			r2 := registry.New(nil)
			if err := r2.RegisterAll(back); err != nil {
				t.Fatalf("canonical view does not register again: %v", err)
			}
			if got := normalized(t, r2.Tools()); !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip changed the tools:\n%+v\n%+v", want, got)
			}
		}
	})
}

// normalized makes tools comparable after a JSON round trip: schemas
// compacted (views compact them), empty metadata as nil.
func normalized(t *testing.T, tools []registry.Tool) []registry.Tool {
	t.Helper()
	for i := range tools {
		if len(tools[i].Parameters) > 0 {
			var c bytes.Buffer
			if err := json.Compact(&c, tools[i].Parameters); err != nil {
				t.Fatalf("registered schema is not JSON: %v", err)
			}
			tools[i].Parameters = c.Bytes()
		}
		if len(tools[i].Metadata) == 0 {
			tools[i].Metadata = nil
		}
	}
	return tools
}

// FuzzValidateArgs: any argument document is accepted or refused with a
// *ValidationError; never a panic.
func FuzzValidateArgs(f *testing.F) {
	r := registry.New(nil)
	if err := r.Register(registry.NewTool("t", "T.", json.RawMessage(weatherSchema))); err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{``, `{}`, `{"city":"x","days":2}`, `[]`, `{"t~x":{"deep":[1,"a"]}}`, `{"a/b":null,"extra":[[[]]]}`, `{"days":1e400}`, `{"days":-0}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		err := r.Validate("t", args)
		if err == nil {
			return
		}
		var ve *registry.ValidationError
		if !errors.As(err, &ve) || len(ve.Violations) == 0 {
			t.Fatalf("error %T %v", err, err)
		}
	})
}
