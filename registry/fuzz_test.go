package registry_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// FuzzParseCatalog: any input either parses or gives an error; never a panic,
// and what parses registers or is refused with a *RegistrationError.
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
	f.Fuzz(func(t *testing.T, data []byte) {
		tools, _, err := registry.ParseCatalog(data)
		if err != nil {
			return
		}
		for _, err := range registry.New(nil).RegisterValid(tools) {
			var re *registry.RegistrationError
			if !errors.As(err, &re) {
				t.Fatalf("refusal %T %v", err, err)
			}
		}
	})
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
