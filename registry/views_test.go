package registry_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/views")

var (
	openAINameRule = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	mcpNameRule    = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,128}$`)
)

// providerRule is the name rule a provider enforces, nil for none.
func providerRule(f registry.Format) *regexp.Regexp {
	switch f {
	case registry.FormatOpenAI, registry.FormatOpenAIResponses, registry.FormatAnthropic:
		return openAINameRule
	case registry.FormatMCP:
		return mcpNameRule
	}
	return nil
}

// oddSchema is pretty-printed with tabs, CRLF and trailing space, so that a
// view that rewrote the stored bytes would be caught.
const oddSchema = "{\r\n\t\"type\" :  \"object\",\n  \"properties\": {\n\t\t\"path\": { \"type\": \"string\", \"description\": \"File to read.\" } ,\n\t\t\"lines\":{\"type\":\"integer\",\"minimum\":1}\n  },\n  \"required\" : [ \"path\" ]\n}  \n"

// smallCatalog is the 3-tool catalog of the golden files.
func smallCatalog(t testing.TB) *registry.Registry {
	t.Helper()
	read := registry.NewTool("fs.read_file", "Read a text file.", json.RawMessage(oddSchema))
	read.Capabilities = []string{registry.CapabilityReadOnly}
	read.Tags = []string{"fs"}
	read.Metadata = map[string]any{"title": "Read file"}
	replace := registry.NewTool("Search & Replace in files", "Replace text in every matching file.",
		json.RawMessage(`{"type":"object","properties":{"find":{"type":"string"},"with":{"type":"string"}},"required":["find","with"]}`))
	replace.Safe = false
	replace.Strict = true
	replace.Roles = []string{"editor"}
	weather := registry.NewTool("get_weather", "Current weather for a city.",
		json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city"]}`))
	r := registry.New(nil)
	if err := r.RegisterAll([]registry.Tool{read, replace, weather}); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestViewsGolden compares every view of the small catalog with
// testdata/views/<format>.json (indented for review). Run with -update to
// rewrite them after an intended change.
func TestViewsGolden(t *testing.T) {
	r := smallCatalog(t)
	for _, f := range registry.Formats() {
		t.Run(string(f), func(t *testing.T) {
			view, err := r.View(f)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := json.Indent(&got, view, "", "  "); err != nil {
				t.Fatalf("view is not JSON: %v\n%s", err, view)
			}
			got.WriteByte('\n')
			path := filepath.Join("testdata", "views", string(f)+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./registry -run TestViewsGolden -update)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("view %s differs from %s:\n got: %s\nwant: %s", f, path, got.Bytes(), want)
			}
		})
	}
}

// TestViewsNeverMutate produces every view, item list, name and copy of a
// catalog whose schema has odd whitespace, and checks the stored bytes did not
// change by a single byte.
func TestViewsNeverMutate(t *testing.T) {
	r := smallCatalog(t)
	before := map[string][]byte{}
	for _, e := range r.Entries() {
		before[e.Name()] = append([]byte(nil), e.Def().Parameters...)
	}
	if e, _ := r.Get("fs.read_file"); string(e.Def().Parameters) != oddSchema {
		t.Fatalf("stored schema is not the given bytes: %q", e.Def().Parameters)
	}
	for _, f := range registry.Formats() {
		if _, err := r.View(f); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ViewItems(r.Entries(), f); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ViewOf(r.Entries()[1:], f); err != nil {
			t.Fatal(err)
		}
		for _, e := range r.Entries() {
			r.ProviderName(f, e.Name())
		}
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Entries() {
		_ = e.Tool()
		if err := e.ValidateArgs([]byte(`{"path":"x"}`)); err != nil && e.Name() == "fs.read_file" {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Def().Parameters, before[e.Name()]) {
			t.Errorf("%s: schema changed:\nbefore %q\nafter  %q", e.Name(), before[e.Name()], e.Def().Parameters)
		}
	}
}

func TestProviderNameMapping(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 6) + "end.v2" // 126 bytes, over OpenAI's 64
	names := []string{"get_weather", "math.factorial", "Search & Replace in files", "搜索", long, strings.Repeat("x", 138), "a b", "a_b", "a.b"}
	r := registry.New(nil)
	for _, n := range names {
		if err := r.Register(tool(n, objSchema)); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range registry.Formats() {
		seen := map[string]string{}
		for _, n := range names {
			p := r.ProviderName(f, n)
			if rule := providerRule(f); rule != nil && !rule.MatchString(p) {
				t.Errorf("%s: %q maps to %q, which the provider refuses", f, n, p)
			}
			if rule := providerRule(f); (rule == nil || rule.MatchString(n)) && p != n {
				t.Errorf("%s: the valid name %q was changed to %q", f, n, p)
			}
			if other, dup := seen[p]; dup {
				t.Errorf("%s: %q and %q both map to %q", f, other, n, p)
			}
			seen[p] = n
			e, ok := r.Lookup(p)
			if !ok || e.Name() != n {
				t.Errorf("%s: Lookup(%q) = %v, %v; want %q", f, p, e, ok, n)
			}
			if err := r.Validate(p, []byte(`{"q":"x"}`)); err != nil {
				t.Errorf("%s: Validate under the mapped name %q: %v", f, p, err)
			}
		}
	}
	// Mapped names are the plain sanitised name unless that is taken, and are
	// stable for the same catalog.
	if p := r.ProviderName(registry.FormatOpenAI, "math.factorial"); p != "math_factorial" {
		t.Errorf("math.factorial -> %q", p)
	}
	if p := r.ProviderName(registry.FormatMCP, "math.factorial"); p != "math.factorial" {
		t.Errorf("MCP allows dots, got %q", p)
	}
	again := registry.New(nil)
	for _, n := range names {
		_ = again.Register(tool(n, objSchema))
	}
	for _, n := range names {
		if a, b := r.ProviderName(registry.FormatAnthropic, n), again.ProviderName(registry.FormatAnthropic, n); a != b {
			t.Errorf("%q maps to %q and %q in two registries of the same catalog", n, a, b)
		}
	}
	if _, ok := r.Lookup("math_factorial_00000000"); ok {
		t.Error("Lookup resolved a made-up mapped name")
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range registry.Formats() {
		got, err := registry.ParseFormat(" " + strings.ToUpper(string(f)) + " ")
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	if _, err := registry.ParseFormat("gemini"); err == nil || !strings.Contains(err.Error(), "openai-responses") {
		t.Errorf("ParseFormat(gemini) = %v", err)
	}
}

// A sanitised name that collides with a registered name, or with another
// tool's mapped name, gets a hash suffix; every mapped name still resolves.
func TestProviderNameCollision(t *testing.T) {
	r := registry.New(nil)
	for _, n := range []string{"a.b", "a b", "a_b"} {
		if err := r.Register(registry.NewTool(n, "d", json.RawMessage(`{"type":"object"}`))); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]string{}
	for _, n := range []string{"a.b", "a b", "a_b"} {
		p := r.ProviderName(registry.FormatOpenAI, n)
		if other, dup := seen[p]; dup {
			t.Fatalf("%q and %q both map to %q", other, n, p)
		}
		seen[p] = n
		e, ok := r.Lookup(p)
		if !ok {
			t.Fatalf("%q (mapped from %q) does not resolve", p, n)
		}
		if e.Name() != n {
			t.Errorf("%q resolves to %q, want %q", p, e.Name(), n)
		}
	}
	if got := r.ProviderName(registry.FormatOpenAI, "a_b"); got != "a_b" {
		t.Errorf("a valid name is never changed: a_b became %q", got)
	}
	if got := r.ProviderName(registry.FormatOpenAI, "a.b"); !strings.HasPrefix(got, "a_b_") {
		t.Errorf("the taken stem gets a hash suffix: a.b became %q", got)
	}
}
