package registry_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// The provider name rules, written out independently of the registry's own.
var fuzzNameRule = map[registry.Format]*regexp.Regexp{
	registry.FormatOpenAI:          regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`),
	registry.FormatOpenAIResponses: regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`),
	registry.FormatAnthropic:       regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`),
	registry.FormatMCP:             regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,128}$`),
}

// The format ParseCatalog detects when it reads each view back.
var readBackAs = map[registry.Format]registry.Format{
	registry.FormatCanonical:       registry.FormatCanonical,
	registry.FormatSchema:          registry.FormatCanonical,
	registry.FormatOpenAI:          registry.FormatOpenAI,
	registry.FormatOpenAIResponses: registry.FormatOpenAIResponses,
	registry.FormatAnthropic:       registry.FormatAnthropic,
	registry.FormatOllama:          registry.FormatOpenAI,
	registry.FormatMCP:             registry.FormatMCP,
}

// hashCollisionSeed is a catalog whose names occupy every hashed candidate
// mapName tries for "é" (whose plain sanitised stem is empty), so the mapping
// must fall back past the candidate list.
func hashCollisionSeed() string {
	sum := sha256.Sum256([]byte("é"))
	h := hex.EncodeToString(sum[:])
	names := []string{"é"}
	for n := 8; n <= len(h); n += 4 {
		names = append(names, "t_"+h[:n])
	}
	names = append(names, "t_"+h[:62])
	return strings.Join(names, "\n")
}

// FuzzProviderViews registers one tool per input line (the name; a leading
// '!' marks it unsafe, a leading '^' read-only) and checks every provider
// view: it parses back as a catalog of the same length in the expected
// format; names in formats with a name rule match the provider's rule, are
// unique, agree with ProviderName and resolve through Lookup to the tool
// they came from; other formats keep the canonical names; descriptions and
// safety survive (and the read-only hint, except on an unsafe tool in MCP);
// and every view registers again.
func FuzzProviderViews(f *testing.F) {
	for _, seed := range []string{
		"get_weather\nsearch",
		"math.factorial\nmath_factorial\nmath factorial\nmath-factorial",
		"a.b\na b\na_b\na&b\na/b\na:b",
		"é\nü\n日本語\n🙂\n___\n-\n.",
		"!delete files\n^read.only tool\nplain",
		strings.Repeat("x", 64) + "\n" + strings.Repeat("x", 65) + "\n" + strings.Repeat("y.", 100) + "\n" + strings.Repeat("z", 256),
		strings.Repeat("ab.", 30) + "\n" + strings.Repeat("ab_", 30),
		"t_deadbeef\nt\nT\n_t_",
		"a\na\n a\n\n\x00\x7f",
		hashCollisionSeed(),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		r := registry.New(nil)
		lines := strings.Split(spec, "\n")
		if len(lines) > 64 {
			lines = lines[:64]
		}
		for i, line := range lines {
			name, safe, readOnly := line, true, false
			for len(name) > 1 && (name[0] == '!' || name[0] == '^') {
				safe = safe && name[0] != '!'
				readOnly = readOnly || name[0] == '^'
				name = name[1:]
			}
			// Schema-less (no schema compile per tool): this target is about
			// names and views, and runs ten times faster this way.
			tool := registry.NewTool(name, fmt.Sprintf("Tool %d: %s", i, name), nil)
			tool.AllowNoSchema, tool.NoSchemaMode = true, registry.NoSchemaFull
			tool.Safe = safe
			if readOnly {
				tool.Capabilities = []string{registry.CapabilityReadOnly}
			}
			if err := r.Register(tool); err != nil {
				var re *registry.RegistrationError
				if !errors.As(err, &re) || re.Tool != name || re.Reason == "" {
					t.Fatalf("refusal of %q: %T %v", name, err, err)
				}
				if registry.CheckName(name) == nil && !errors.Is(err, registry.ErrDuplicateName) {
					t.Fatalf("a valid name %q was refused: %v", name, err)
				}
			}
		}
		entries := r.Entries()
		for _, f := range registry.Formats() {
			view, err := r.View(f)
			if err != nil {
				t.Fatalf("%s view: %v", f, err)
			}
			items, err := r.ViewItems(entries, f)
			if err != nil || len(items) != len(entries) {
				t.Fatalf("%s items: %v (%d of %d)", f, err, len(items), len(entries))
			}
			var raw []json.RawMessage
			if err := json.Unmarshal(view, &raw); err != nil || len(raw) != len(entries) {
				t.Fatalf("%s view is not an array of %d: %v\n%s", f, len(entries), err, view)
			}
			for i := range raw {
				if !json.Valid(items[i]) || string(items[i]) != string(raw[i]) {
					t.Fatalf("%s: ViewItems[%d] %s differs from View's %s", f, i, items[i], raw[i])
				}
			}
			tools, format, err := registry.ParseCatalog(view)
			if err != nil {
				t.Fatalf("%s view does not parse back: %v\n%s", f, err, view)
			}
			if len(tools) != len(entries) {
				t.Fatalf("%s view reads back as %d tools, want %d", f, len(tools), len(entries))
			}
			if len(tools) > 0 && format != readBackAs[f] {
				t.Fatalf("%s view reads back as format %s, want %s", f, format, readBackAs[f])
			}
			rule := fuzzNameRule[f]
			seen := map[string]string{}
			for i, got := range tools {
				e := entries[i]
				want := e.Def()
				if got.Description != want.Description {
					t.Fatalf("%s: description %q became %q", f, want.Description, got.Description)
				}
				if rule == nil {
					if got.Name != want.Name {
						t.Fatalf("%s keeps names, but %q became %q", f, want.Name, got.Name)
					}
				} else {
					if !rule.MatchString(got.Name) {
						t.Fatalf("%s name %q (for %q) breaks the provider rule", f, got.Name, want.Name)
					}
					if other, dup := seen[got.Name]; dup {
						t.Fatalf("%s name %q is given to both %q and %q", f, got.Name, other, want.Name)
					}
					seen[got.Name] = want.Name
					if pn := r.ProviderName(f, want.Name); pn != got.Name {
						t.Fatalf("%s: ProviderName(%q) = %q, the view says %q", f, want.Name, pn, got.Name)
					}
					back, ok := r.Lookup(got.Name)
					if !ok || back != e {
						name := "(none)"
						if ok {
							name = back.Name()
						}
						t.Fatalf("%s name %q of %q resolves to %s", f, got.Name, want.Name, name)
					}
				}
				if f == registry.FormatCanonical || f == registry.FormatMCP {
					// Safety always survives. MCP has no way to say "read-only
					// but unsafe" (readOnlyHint overrides destructiveHint), so
					// there an unsafe tool gives up the read-only hint instead.
					readOnly := want.ReadOnly() && (want.Safe || f == registry.FormatCanonical)
					if got.Safe != want.Safe || got.ReadOnly() != readOnly {
						t.Fatalf("%s: %q safe/readOnly %v/%v became %v/%v", f, want.Name, want.Safe, want.ReadOnly(), got.Safe, got.ReadOnly())
					}
				}
			}
			for i := range tools {
				// Provider views show a schema-less tool with an open object
				// schema; register it back the way it was.
				tools[i].Parameters, tools[i].AllowNoSchema, tools[i].NoSchemaMode = nil, true, registry.NoSchemaFull
			}
			if err := registry.New(nil).RegisterAll(tools); err != nil {
				t.Fatalf("%s view does not register again: %v", f, err)
			}
		}
	})
}

// TestMapNameFallbackPastHashedCandidates is the crasher FuzzProviderViews
// keeps as a corpus entry: a catalog naming its tools after every hashed
// candidate of "é" made the MCP mapping slice a 64-character hash to 126
// (a panic in View, ProviderName and Lookup) and the OpenAI fallback reuse a
// registered name. Now the mapping counts on to a free, valid name.
func TestMapNameFallbackPastHashedCandidates(t *testing.T) {
	r := registry.New(nil)
	for _, name := range strings.Split(hashCollisionSeed(), "\n") {
		if err := r.Register(registry.NewTool(name, "", json.RawMessage(`{"type":"object"}`))); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []registry.Format{registry.FormatOpenAI, registry.FormatMCP} {
		mapped := r.ProviderName(f, "é")
		if !fuzzNameRule[f].MatchString(mapped) {
			t.Fatalf("%s: %q breaks the rule", f, mapped)
		}
		if _, taken := r.Get(mapped); taken {
			t.Fatalf("%s: %q is a registered name", f, mapped)
		}
		if e, ok := r.Lookup(mapped); !ok || e.Name() != "é" {
			t.Fatalf("%s: %q does not resolve to é", f, mapped)
		}
	}
}

// TestMCPViewKeepsUnsafeReadOnlyToolUnsafe is the failure FuzzProviderViews
// found (corpus entry 3aaf2dbfde6aa830, "^!0"): an unsafe read-only tool was
// written as {"readOnlyHint":true,"destructiveHint":true}, which MCP readers
// (MCPAnnotations.Apply included) read as safe, so a re-imported catalog
// offered it without AllowUnsafe.
func TestMCPViewKeepsUnsafeReadOnlyToolUnsafe(t *testing.T) {
	r := registry.New(nil)
	tool := registry.NewTool("wipe_cache", "", json.RawMessage(`{"type":"object"}`))
	tool.Safe, tool.Capabilities = false, []string{registry.CapabilityReadOnly}
	if err := r.Register(tool); err != nil {
		t.Fatal(err)
	}
	view, err := r.View(registry.FormatMCP)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(view), `"annotations":{"readOnlyHint":false,"destructiveHint":true}`) {
		t.Fatalf("annotations: %s", view)
	}
	back, _, err := registry.ParseCatalog(view)
	if err != nil || len(back) != 1 || back[0].Safe {
		t.Fatalf("read back as %+v (%v)", back, err)
	}
}
