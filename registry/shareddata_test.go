package registry_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
	"github.com/toolselect/toolselect/registry"
)

// documentedRefusals are the data sets' tools the registry refuses on
// purpose (docs/registry.md, "Documented refusals"), with the message each gets.
var documentedRefusals = map[string]map[string]string{
	"bfcl.jsonl": {},
	"livemcpbench.jsonl": {
		// Draft-04 style boolean exclusiveMinimum: 2020-12 (the default draft) wants a number.
		"pdf-reader-mcp__read_pdf": `tool #56 "pdf-reader-mcp__read_pdf": invalid parameters schema: schema is not a valid JSON Schema (draft 2020-12 unless $schema says otherwise): at /properties/sources/items/properties/pages/anyOf/0/items/exclusiveMinimum: got boolean, want number (type)`,
	},
}

// TestSharedCatalogs registers every tool of the two data sets and
// round-trips each through every provider view: the view parses back with
// ParseCatalog, every name resolves with Lookup to the same tool, description
// and parameters (compacted) are equal, and provider names obey the
// provider's rule and are unique.
func TestSharedCatalogs(t *testing.T) {
	for file, refusals := range documentedRefusals {
		t.Run(file, func(t *testing.T) {
			tools, format, err := registry.LoadCatalogFile(fixtures.Tools(strings.TrimSuffix(file, ".jsonl")))
			if err != nil {
				t.Fatal(err)
			}
			if format != registry.FormatCanonical {
				t.Errorf("format = %q, want canonical", format)
			}
			r := registry.New(nil)
			refused := r.RegisterValid(tools)
			got := map[string]string{}
			for _, err := range refused {
				var re *registry.RegistrationError
				if !errors.As(err, &re) {
					t.Fatalf("refusal %v is not a *RegistrationError", err)
				}
				got[re.Tool] = err.Error()
			}
			if !reflect.DeepEqual(got, refusals) {
				t.Errorf("refusals:\n got %q\nwant %q", got, refusals)
			}
			if r.Len() != len(tools)-len(refusals) {
				t.Errorf("registered %d of %d tools", r.Len(), len(tools))
			}
			t.Logf("%s: %d tools, %d registered, %d refused", file, len(tools), r.Len(), len(refused))
			roundTripViews(t, r)
		})
	}
}

func roundTripViews(t *testing.T, r *registry.Registry) {
	entries := r.Entries()
	for _, f := range registry.Formats() {
		view, err := r.View(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		back, _, err := registry.ParseCatalog(view)
		if err != nil {
			t.Fatalf("%s view does not parse back: %v", f, err)
		}
		if len(back) != len(entries) {
			t.Fatalf("%s view has %d tools, want %d", f, len(back), len(entries))
		}
		rule := providerRule(f)
		seen := make(map[string]bool, len(back))
		mapped := 0
		for i, b := range back {
			want := entries[i].Def()
			if rule != nil && !rule.MatchString(b.Name) {
				t.Errorf("%s: %q is shown as %q, which the provider refuses", f, want.Name, b.Name)
			}
			if seen[b.Name] {
				t.Errorf("%s: name %q appears twice", f, b.Name)
			}
			seen[b.Name] = true
			if b.Name != want.Name {
				mapped++
			}
			if p := r.ProviderName(f, want.Name); p != b.Name {
				t.Errorf("%s: ProviderName(%q) = %q, view says %q", f, want.Name, p, b.Name)
			}
			e, ok := r.Lookup(b.Name)
			if !ok || e != entries[i] {
				t.Errorf("%s: Lookup(%q) does not resolve to %q", f, b.Name, want.Name)
				continue
			}
			if b.Description != want.Description {
				t.Errorf("%s: %q description changed: %q", f, want.Name, b.Description)
			}
			if compact(t, b.Parameters) != compact(t, want.Parameters) {
				t.Errorf("%s: %q parameters changed:\n got %s\nwant %s", f, want.Name, b.Parameters, want.Parameters)
			}
			if f == registry.FormatCanonical {
				if b.Name != want.Name || b.Safe != want.Safe || !reflect.DeepEqual(b.Tags, want.Tags) {
					t.Errorf("canonical: %q does not round-trip: %+v", want.Name, b)
				}
			}
		}
		if f == registry.FormatOpenAI || f == registry.FormatMCP {
			t.Logf("%s: %d of %d names mapped", f, mapped, len(back))
		}
		// A parsed view registers again as a catalog of its own (one
		// provider format is enough: compiling every schema again is slow under -race).
		if f != registry.FormatOpenAI {
			continue
		}
		if err := registry.New(nil).RegisterAll(back); err != nil {
			t.Errorf("%s view does not register: %.300s", f, strings.TrimSpace(err.Error()))
		}
	}
}

// TestSmallCatalogRoundTrip: the canonical view carries every field, and
// the MCP view carries safety and read-only through its annotations.
func TestSmallCatalogRoundTrip(t *testing.T) {
	r := smallCatalog(t)
	roundTripViews(t, r)
	view, _ := r.View(registry.FormatCanonical)
	back, _, err := registry.ParseCatalog(view)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range r.Entries() {
		want := e.Tool()
		want.Parameters = []byte(compact(t, want.Parameters))
		if !reflect.DeepEqual(back[i], want) {
			t.Errorf("canonical round trip of %q:\n got %+v\nwant %+v", want.Name, back[i], want)
		}
	}
	view, _ = r.View(registry.FormatMCP)
	back, _, _ = registry.ParseCatalog(view)
	for i, e := range r.Entries() {
		if back[i].Safe != e.Def().Safe || back[i].ReadOnly() != e.Def().ReadOnly() {
			t.Errorf("MCP round trip of %q: safe %v readOnly %v", e.Name(), back[i].Safe, back[i].ReadOnly())
		}
	}
}

// TestPDFReaderFixes checks the two fixes docs/registry.md gives for the
// documented livemcpbench refusal: declaring draft-04, or the number form.
func TestPDFReaderFixes(t *testing.T) {
	tools, _, err := registry.LoadCatalogFile(fixtures.Tools("livemcpbench"))
	if err != nil {
		t.Fatal(err)
	}
	var pdf registry.Tool
	for _, tl := range tools {
		if tl.Name == "pdf-reader-mcp__read_pdf" {
			pdf = tl
		}
	}
	schema := string(pdf.Parameters)
	const draft4 = `"exclusiveMinimum": true, "minimum": 0`
	if !strings.Contains(schema, draft4) {
		t.Fatalf("schema changed upstream: %s", schema)
	}
	fixes := map[string]string{
		"declare draft-04": `{"$schema":"http://json-schema.org/draft-04/schema#",` + strings.TrimPrefix(schema, "{"),
		"number form":      strings.Replace(schema, draft4, `"exclusiveMinimum": 0`, 1),
	}
	for desc, fixed := range fixes {
		r := registry.New(nil)
		tl := pdf
		tl.Parameters = []byte(fixed)
		if err := r.Register(tl); err != nil {
			t.Errorf("%s: %v", desc, err)
			continue
		}
		if err := r.Validate(tl.Name, []byte(`{"sources":[{"path":"a.pdf","pages":[1,2]}]}`)); err != nil {
			t.Errorf("%s: pages [1,2] refused: %v", desc, err)
		}
		if err := r.Validate(tl.Name, []byte(`{"sources":[{"path":"a.pdf","pages":[0]}]}`)); err == nil {
			t.Errorf("%s: page 0 accepted", desc)
		}
	}
}
