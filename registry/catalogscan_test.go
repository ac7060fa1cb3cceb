package registry_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
	"github.com/toolselect/toolselect/registry"
)

// Every format the registry reads names the line and column where a
// malformed catalog goes wrong (columns count characters, not bytes).
func TestParseCatalogErrorPositions(t *testing.T) {
	good := `{"name":"a","description":"A.","parameters":{"type":"object"}}`
	cases := []struct{ desc, in, want string }{
		{"multi-line array, bad value",
			"[\n  " + good + ",\n  {\"name\": \"b\",\n   \"parameters\": {\"type\": objec}}\n]",
			"catalog line 4, column 27: invalid JSON: invalid character 'o'"},
		{"multi-line array, missing comma",
			"[\n  " + good + "\n  " + good + "\n]",
			"catalog line 3, column 3: invalid JSON: want ',' or ']' after array item #0"},
		{"multi-line array, trailing comma",
			"[\n  " + good + ",\n]",
			"catalog line 3, column 1: invalid JSON: unexpected ']'"},
		{"array not closed",
			"[\n  " + good + ",\n  " + good + "\n",
			"catalog line 4, column 1: invalid JSON: unexpected end of the catalog: the array opened at line 1, column 1 is not closed"},
		{"data after the array",
			"[" + good + "]\nx",
			"catalog line 2, column 1: invalid JSON: unexpected data after the catalog's JSON array"},
		{"JSON Lines, bad line after a multi-byte description",
			`{"name":"é","description":"日本語","parameters":{"type":"object"}}` + "\n" + `{"name":"b", "description":"日本", x}`,
			"catalog line 2, column 34: invalid JSON: invalid character 'x'"},
		{"JSON Lines, string not closed",
			good + "\n" + `{"name":"b` + "\n" + good,
			`catalog line 2, column 11: invalid JSON: the string opened at line 2, column 9 is not closed on its line`},
		{"JSON Lines, item not an object",
			good + "\n\n  42\n",
			"catalog line 3, column 3: a tool must be a JSON object"},
		{"tools object, multi-line, bad item",
			"{\"tools\": [\n  " + good + ",\n  {\"name\": \"b\", \"parameters\": {\"type\": \"object\",}}\n]}",
			"catalog line 3, column 49: invalid JSON: invalid character '}'"},
		{"JSON-RPC result, item refused",
			"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[\n" + `{"name":"x","inputSchema":{"type":"object"}},` + "\n" + `  {"type":"web_search_preview"}` + "\n]}}",
			`catalog item #1 at line 3, column 3: tool "(no name)" has type "web_search_preview"`},
		{"OpenAI array, function not an object",
			"[\n" + `{"type":"function","function":{"name":"a","parameters":{"type":"object"}}},` + "\n" + `  {"type":"function","function":"x"}` + "\n]",
			`catalog item #1 at line 3, column 3: openai tool: "function" is not an object`},
		{"Anthropic array, bad value in a schema",
			"[\n" + `{"name":"a","input_schema":{"type":"object"}},` + "\n" + `{"name":"b","input_schema":{"type":"object","properties":{"x":{"type":tru}}}}` + "\n]",
			"catalog line 3, column 74: invalid JSON: invalid character '}' in literal true"},
		{"object not closed",
			"{\"tools\": [" + good,
			"catalog line 1, column 74: invalid JSON: unexpected end of the catalog: the object opened at line 1, column 1 is not closed"},
	}
	for _, c := range cases {
		t.Run(c.desc, func(t *testing.T) {
			_, _, err := registry.ParseCatalog([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// The fast canonical decoding gives what encoding/json gives, or declines.
func TestFastCanonicalMatchesDecoder(t *testing.T) {
	items := []string{
		`{"name":"a","description":"d","parameters":{"type":"object"},"tags":["x"],"safe":false,"roles":["r"],"capabilities":["readOnly"],"metadata":{"k":[1,"v"]},"strict":true,"allowNoSchema":true,"noSchemaMode":"full","type":"function"}`,
		`{"name":"a\u00e9","description":"line\nbreak"}`,
		`{"Name":"a","parameters":{}}`,
		`{"name":"a","name":"b"}`,
		`{"name":"a","tags":null,"safe":null}`,
		`{"name":"a","extra":{"x":1}}`,
		`{"name":"a","parameters":{"type":"object",}}`,
		`{"name":"a","safe":"yes"}`,
		`{"name":5}`,
		"{\"name\":\"\xff\"}",
		`{"name":"é日本","description":"说明","parameters":  { "type" : "object" } }`,
	}
	for _, set := range fixtures.Sets {
		data, err := os.ReadFile(fixtures.Tools(set))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) != "" {
				items = append(items, line)
			}
		}
	}
	fastDecided := 0
	for _, item := range items {
		fast, ok, slow, err := registry.DecodeCanonicalBoth([]byte(item))
		if !ok {
			continue
		}
		fastDecided++
		if err != nil {
			t.Errorf("%s: fast path decoded it, encoding/json says %v", item, err)
			continue
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s:\nfast %+v\nslow %+v", item, fast, slow)
		}
	}
	if fastDecided < len(items)-10 {
		t.Errorf("fast path decided only %d of %d items", fastDecided, len(items))
	}
}
