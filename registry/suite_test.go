package registry_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
	"github.com/toolselect/toolselect/registry"
)

// suiteCase is one case of the JSON-Schema-Test-Suite.
type suiteCase struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

// suiteCounts is what one draft's run produced, in test (not case) units.
type suiteCounts struct {
	passed, refusedBoolean, refusedRemote int
}

// TestJSONSchemaSuite runs the required tests of the official suite (draft
// 2020-12 and draft-07, testdata/jsonschema-test-suite at the repository's root) through the registry's own
// path: every case's schema is registered as a tool and every test's data is
// checked with Entry.ValidateValue. Boolean schemas and schemas referring to
// remote documents are refused by design; they are counted and asserted
// refused, everything else must match the suite's expected result.
func TestJSONSchemaSuite(t *testing.T) {
	for _, draft := range []struct {
		dir, schemaURI string
		// want are the counts this suite commit gives (see docs/registry.md).
		want suiteCounts
	}{
		{"draft2020-12", "", suiteCounts{passed: 1232, refusedBoolean: 18, refusedRemote: 49}},
		{"draft7", "http://json-schema.org/draft-07/schema#", suiteCounts{passed: 886, refusedBoolean: 18, refusedRemote: 23}},
	} {
		t.Run(draft.dir, func(t *testing.T) {
			got := runSuiteDraft(t, draft.dir, draft.schemaURI)
			t.Logf("%s: passed %d, refused-boolean %d, refused-remote %d (tests)", draft.dir, got.passed, got.refusedBoolean, got.refusedRemote)
			if got != draft.want {
				t.Errorf("counts = %+v, want %+v", got, draft.want)
			}
		})
	}
}

func runSuiteDraft(t *testing.T, dir, schemaURI string) suiteCounts {
	files, err := filepath.Glob(filepath.Join(fixtures.JSONSchemaSuite(dir), "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files in %s: %v", fixtures.JSONSchemaSuite(dir), err)
	}
	var counts suiteCounts
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var cases []suiteCase
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		base := strings.TrimSuffix(filepath.Base(file), ".json")
		for i, c := range cases {
			name := base + "/" + c.Description
			schema := c.Schema
			if schemaURI != "" {
				schema = withSchemaURI(t, schema, schemaURI)
			}
			reg := registry.New(nil)
			err := reg.Register(registry.NewTool(name, c.Description, schema))
			switch {
			case isBooleanSchema(c.Schema):
				if err == nil || !strings.Contains(err.Error(), "must be a JSON object") {
					t.Errorf("%s #%d: boolean schema: err = %v, want a \"must be a JSON object\" refusal", name, i, err)
				}
				counts.refusedBoolean += len(c.Tests)
				continue
			case needsRemote(t, schema):
				if !errors.Is(err, registry.ErrExternalRef) {
					t.Errorf("%s #%d: remote schema: err = %v, want ErrExternalRef", name, i, err)
				}
				counts.refusedRemote += len(c.Tests)
				continue
			case err != nil:
				t.Errorf("%s #%d: register: %v", name, i, err)
				continue
			}
			e, ok := reg.Get(name)
			if !ok {
				t.Fatalf("%s: registered but not found", name)
			}
			for _, tc := range c.Tests {
				v, err := registry.DecodeValue(tc.Data)
				if err != nil {
					t.Fatalf("%s / %s: decoding data: %v", name, tc.Description, err)
				}
				err = e.ValidateValue(v)
				if (err == nil) != tc.Valid {
					t.Errorf("%s / %s: valid = %v, want %v (err: %v)", name, tc.Description, err == nil, tc.Valid, err)
					continue
				}
				if err != nil && !errors.Is(err, registry.ErrInvalidArgs) {
					t.Errorf("%s / %s: error %v is not ErrInvalidArgs", name, tc.Description, err)
				}
				counts.passed++
			}
		}
	}
	return counts
}

func isBooleanSchema(s json.RawMessage) bool {
	s = bytes.TrimSpace(s)
	return string(s) == "true" || string(s) == "false"
}

// withSchemaURI adds "$schema" to an object schema that has none.
func withSchemaURI(t *testing.T, schema json.RawMessage, uri string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if json.Unmarshal(schema, &m) != nil {
		return schema // boolean schema: left as is
	}
	if _, ok := m["$schema"]; ok {
		return schema
	}
	b, _ := json.Marshal(uri)
	m["$schema"] = b
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// needsRemote is the test's own oracle for "this schema refers to a document
// outside itself": it compiles the schema with the validator directly, under a
// loader that records every URL the compiler asks for.
func needsRemote(t *testing.T, schema json.RawMessage) bool {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("suite schema is not JSON: %v", err)
	}
	rec := &recordingLoader{}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(rec)
	const url = "http://oracle.invalid/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("oracle: %v", err)
	}
	_, _ = c.Compile(url)
	return len(rec.urls) > 0
}

type recordingLoader struct{ urls []string }

func (l *recordingLoader) Load(url string) (any, error) {
	l.urls = append(l.urls, url)
	return nil, errors.New("not served")
}
