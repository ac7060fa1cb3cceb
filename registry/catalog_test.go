package registry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

const (
	searchParams = `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`
	emptyParams  = `{"type":"object","properties":{}}`
)

// TestParseCatalogFormats: every supported shape is detected and yields the
// same tools.
func TestParseCatalogFormats(t *testing.T) {
	cases := []struct {
		desc   string
		in     string
		format registry.Format
	}{
		{"canonical array", `[
			{"name":"web.search","description":"Search the web.","parameters":` + searchParams + `},
			{"name":"clock","description":"Current time.","parameters":` + emptyParams + `}
		]`, registry.FormatCanonical},
		{"canonical JSON Lines", `{"name":"web.search","description":"Search the web.","parameters":` + searchParams + `}
{"name":"clock","description":"Current time.","parameters":` + emptyParams + `}
`, registry.FormatCanonical},
		{"JSON Lines with CRLF and blank lines", "\r\n{\"name\":\"web.search\",\"description\":\"Search the web.\",\"parameters\":" + searchParams + "}\r\n\r\n{\"name\":\"clock\",\"description\":\"Current time.\",\"parameters\":" + emptyParams + "}\r\n", registry.FormatCanonical},
		{"canonical with BOM", "\xef\xbb\xbf[{\"name\":\"web.search\",\"description\":\"Search the web.\",\"parameters\":" + searchParams + "},{\"name\":\"clock\",\"description\":\"Current time.\",\"parameters\":" + emptyParams + "}]", registry.FormatCanonical},
		{"JSON Lines with BOM", "\xef\xbb\xbf{\"name\":\"web.search\",\"description\":\"Search the web.\",\"parameters\":" + searchParams + "}\n{\"name\":\"clock\",\"description\":\"Current time.\",\"parameters\":" + emptyParams + "}", registry.FormatCanonical},
		{"object with tools", `{"tools":[
			{"name":"web.search","description":"Search the web.","parameters":` + searchParams + `},
			{"name":"clock","description":"Current time.","parameters":` + emptyParams + `}]}`, registry.FormatCanonical},
		{"OpenAI chat tools", `[
			{"type":"function","function":{"name":"web.search","description":"Search the web.","parameters":` + searchParams + `}},
			{"type":"function","function":{"name":"clock","description":"Current time.","parameters":` + emptyParams + `}}]`, registry.FormatOpenAI},
		{"OpenAI request body tools", `{"tools":[
			{"type":"function","function":{"name":"web.search","description":"Search the web.","parameters":` + searchParams + `,"strict":false}},
			{"type":"function","function":{"name":"clock","description":"Current time.","parameters":` + emptyParams + `}}]}`, registry.FormatOpenAI},
		{"OpenAI Responses tools", `[
			{"type":"function","name":"web.search","description":"Search the web.","parameters":` + searchParams + `,"strict":false},
			{"type":"function","name":"clock","description":"Current time.","parameters":` + emptyParams + `,"strict":false}]`, registry.FormatOpenAIResponses},
		{"Anthropic tools", `[
			{"name":"web.search","description":"Search the web.","input_schema":` + searchParams + `},
			{"name":"clock","description":"Current time.","input_schema":` + emptyParams + `}]`, registry.FormatAnthropic},
		{"MCP tools/list result", `{"tools":[
			{"name":"web.search","description":"Search the web.","inputSchema":` + searchParams + `},
			{"name":"clock","description":"Current time.","inputSchema":` + emptyParams + `}],"nextCursor":"abc"}`, registry.FormatMCP},
		{"MCP JSON-RPC response", `{"jsonrpc":"2.0","id":7,"result":{"tools":[
			{"name":"web.search","description":"Search the web.","inputSchema":` + searchParams + `},
			{"name":"clock","description":"Current time.","inputSchema":` + emptyParams + `}]}}`, registry.FormatMCP},
	}
	for _, c := range cases {
		t.Run(c.desc, func(t *testing.T) {
			tools, format, err := registry.ParseCatalog([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if format != c.format {
				t.Errorf("format = %q, want %q", format, c.format)
			}
			if len(tools) != 2 {
				t.Fatalf("got %d tools, want 2", len(tools))
			}
			for i, want := range []struct{ name, desc, params string }{
				{"web.search", "Search the web.", searchParams},
				{"clock", "Current time.", emptyParams},
			} {
				got := tools[i]
				if got.Name != want.name || got.Description != want.desc || compact(t, got.Parameters) != want.params || got.Safe != (c.format != registry.FormatMCP) {
					// An MCP tool without annotations is destructive: MCP's defaults.
					t.Errorf("tool %d = %+v", i, got)
				}
			}
			r := registry.New(nil)
			if err := r.RegisterAll(tools); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestParseCatalogKeepsFields(t *testing.T) {
	tools, _, err := registry.ParseCatalog([]byte(`[{"type":"function","name":"rm","description":"Remove.","parameters":{"type":"object"},
		"strict":true,"safe":false,"tags":["fs"],"roles":["admin"],"capabilities":["streaming"],"metadata":{"owner":"ops","n":2}},
		{"name":"shell","description":"Run.","allowNoSchema":true,"noSchemaMode":"human-approval"}]`))
	if err != nil {
		t.Fatal(err)
	}
	rm := tools[0]
	if !rm.Strict || rm.Safe || rm.Tags[0] != "fs" || rm.Roles[0] != "admin" || rm.Capabilities[0] != "streaming" || rm.Metadata["owner"] != "ops" {
		t.Errorf("rm = %+v", rm)
	}
	if sh := tools[1]; !sh.AllowNoSchema || sh.NoSchemaMode != registry.NoSchemaHumanApproval || sh.HasSchema() || !sh.Safe {
		t.Errorf("shell = %+v", sh)
	}
	if err := registry.New(nil).RegisterAll(tools); err != nil {
		t.Error(err)
	}
}

func TestParseCatalogMCPAnnotations(t *testing.T) {
	tools, _, err := registry.ParseCatalog([]byte(`{"tools":[
		{"name":"delete_file","title":"Delete a file","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}},
		{"name":"read_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"title":"Read"}},
		{"name":"odd","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":true}},
		{"name":"plain","inputSchema":{"type":"object"},"annotations":{"destructiveHint":false}},
		{"name":"bare","inputSchema":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		safe, readOnly bool
		title          string
	}{
		{false, false, "Delete a file"},
		{true, true, "Read"},
		{true, true, ""}, // read-only wins: a tool that modifies nothing destroys nothing
		{true, false, ""},
		{false, false, ""}, // MCP's defaults: not read-only, so destructive unless it says otherwise
	}
	for i, w := range want {
		tl := tools[i]
		title, _ := tl.Metadata["title"].(string)
		if tl.Safe != w.safe || tl.ReadOnly() != w.readOnly || title != w.title {
			t.Errorf("%s: safe=%v readOnly=%v title=%q, want %v %v %q", tl.Name, tl.Safe, tl.ReadOnly(), title, w.safe, w.readOnly, w.title)
		}
	}
}

// TestRegisterRefusesSchemaKeywordTwice: a parameters schema naming a
// keyword twice is refused at registration, however the tool arrives (a
// catalog, the Go API), naming the keyword: the validator would read the
// last maxLength, a provider or a reviewer may read the first.
func TestRegisterRefusesSchemaKeywordTwice(t *testing.T) {
	tools, _, err := registry.ParseCatalog([]byte(`[{"name":"a","parameters":{"type":"object","properties":{"p":{"type":"string","maxLength":3,"maxLength":99}}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range append(tools, registry.NewTool("b", "d", []byte(`{"type":"object","properties":{"p":{"type":"string","\u0074ype":"integer"}}}`))) {
		err := registry.New(nil).Register(tl)
		if err == nil || !strings.Contains(err.Error(), "is given twice") {
			t.Errorf("%s: %v, want the keyword given twice refused", tl.Name, err)
		}
	}
}

func TestParseCatalogErrors(t *testing.T) {
	cases := []struct{ desc, in, want string }{
		{"empty", "", "catalog is empty"},
		{"blank", " \n\t ", "catalog is empty"},
		{"BOM only", "\xef\xbb\xbf", "catalog is empty"},
		{"a number", "42", "got a number"},
		{"broken array", `[{"name":"a"`, "catalog line 1, column 13: invalid JSON: unexpected end of the catalog: the object opened at line 1, column 2 is not closed"},
		{"JSON Lines: bad line", "{\"name\":\"a\",\"parameters\":{}}\n{\"name\":\"b\",\"parameters\":{}}\n{\"name\": c}\n", "catalog line 3, column 10: invalid JSON: invalid character 'c'"},
		{"JSON Lines: non-object line", "{\"name\":\"a\",\"parameters\":{}}\n\n[1,2]\n", "catalog line 3, column 1: a tool must be a JSON object"},
		{"array item not an object", `[{"name":"a","parameters":{}}, 5]`, "catalog item #1 at line 1, column 32: a tool must be a JSON object"},
		{"Anthropic server tool", `[{"name":"get_weather","description":"d","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search","max_uses":5}]`, `catalog item #1 at line 1, column 76: tool "web_search" has type "web_search_20250305": only function tools can be registered`},
		{"Anthropic bash tool", `[{"type":"bash_20250124","name":"bash"}]`, `tool "bash" has type "bash_20250124"`},
		{"OpenAI built-in tool", `{"tools":[{"type":"web_search_preview"}]}`, `tool "(no name)" has type "web_search_preview"`},
		{"tools not an array", `{"tools":{"name":"a"}}`, `"tools" must be an array of tools`},
		{"JSON-RPC error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, "JSON-RPC error response (code -32601): Method not found"},
		{"JSON-RPC without tools", `{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}`, "not a tools/list result"},
		{"OpenAI function not an object", `[{"type":"function","function":"x"}]`, `"function" is not an object`},
		// The attacker's catalogs: a key the reader trusts beside one in
		// another case or given again, which encoding/json would read instead.
		{"canonical Safe beside safe", `[{"name":"rm","description":"d","parameters":{"type":"object"},"safe":false,"Safe":true}]`, `tool "rm": the key "Safe" matches "safe" only in case`},
		{"canonical safe twice", `[{"name":"rm","description":"d","safe":false,"safe":true}]`, `the key "safe" is given twice`},
		{"MCP annotations in another case", `[{"name":"rm","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true,"DestructiveHint":false}}]`, `the key "annotations.DestructiveHint" matches "destructiveHint" only in case`},
		{"MCP annotation twice", `{"tools":[{"name":"rm","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"readOnlyHint":true}}]}`, `the key "annotations.readOnlyHint" is given twice`},
		{"OpenAI function name in another case", `[{"type":"function","function":{"name":"a","Name":"b","parameters":{"type":"object"}}}]`, `the key "function.Name" matches "name" only in case`},
		{"Anthropic schema twice", `[{"name":"a","input_schema":{"type":"object"},"input_schema":{"type":"string"}}]`, `the key "input_schema" is given twice`},
		{"metadata key twice", `[{"name":"a","metadata":{"owner":"x","owner":"y"}}]`, `the key "metadata.owner" is given twice`},
		{"tools twice", `{"tools":[{"name":"a"}],"tools":[{"name":"b"}]}`, `the key "tools" is given twice`},
	}
	for _, c := range cases {
		t.Run(c.desc, func(t *testing.T) {
			_, _, err := registry.ParseCatalog([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	// An empty list is a valid, empty catalog.
	for _, in := range []string{`[]`, `{"tools":[]}`, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`} {
		tools, f, err := registry.ParseCatalog([]byte(in))
		if err != nil || len(tools) != 0 || f != registry.FormatCanonical {
			t.Errorf("%s: %v %q %v", in, tools, f, err)
		}
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "tools.jsonl")
	if err := os.WriteFile(good, []byte(`{"name":"a","description":"A.","parameters":{"type":"object"}}`+"\n"+`{"name":"b","description":"B.","parameters":{"type":"object"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := registry.New(nil)
	if err := r.LoadFile(good); err != nil {
		t.Fatal(err)
	}
	if r.Len() != 2 {
		t.Errorf("Len = %d", r.Len())
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"name":"c","parameters":{"type":"object"}},{"name":"d","parameters":{"$ref":"https://example.com/x.json"}}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	err := r.LoadFile(bad)
	if !errors.Is(err, registry.ErrExternalRef) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `tool #1 "d"`) {
		t.Errorf("LoadFile(bad) = %v", err)
	}
	if _, ok := r.Get("c"); ok {
		t.Error("LoadFile registered part of a refused catalog")
	}
	if _, _, err := registry.LoadCatalogFile(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadCatalogSizeLimit(t *testing.T) {
	in := `[{"name":"a","parameters":{"type":"object"}}]`
	if _, _, err := registry.ReadCatalogLimited(strings.NewReader(in), int64(len(in))); err != nil {
		t.Errorf("catalog at the limit: %v", err)
	}
	if _, _, err := registry.ReadCatalogLimited(strings.NewReader(in+" "), int64(len(in))); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("larger than %d bytes", len(in))) {
		t.Errorf("catalog over the limit: %v", err)
	}
}

func compact(t testing.TB, raw []byte) string {
	t.Helper()
	var out strings.Builder
	var v json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	b, err := json.Marshal(v) // json.Marshal compacts a RawMessage without reordering keys
	if err != nil {
		t.Fatal(err)
	}
	out.Write(b)
	return out.String()
}
