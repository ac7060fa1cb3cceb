package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
	"github.com/toolselect/toolselect/mcpproxy"
)

// mcpPeer finds an installed MCP peer ($TOOLSELECT_MCP_PEERS first, then
// PATH) and returns an --upstream spec that runs it with its Node on PATH.
func mcpPeer(t *testing.T, name string, args ...string) string {
	t.Helper()
	bin := fixtures.MCPPeer(t, name)
	spec := "'PATH=" + filepath.Dir(bin) + ":" + os.Getenv("PATH") + "' '" + bin + "'"
	for _, a := range args {
		spec += " '" + a + "'"
	}
	return spec
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestMCPUsage(t *testing.T) {
	r := execCLI(t, nil, "", "mcp")
	if r.code != exitUsage || !strings.Contains(r.stderr, "nothing to serve") {
		t.Fatalf("no upstreams: %d %q", r.code, r.stderr)
	}
	oneLine(t, r.stderr)
	r = execCLI(t, nil, "", "mcp", "--help")
	if r.code != exitOK || !strings.Contains(r.stdout, "--upstream") {
		t.Fatalf("--help: %d %q", r.code, r.stdout)
	}
	r = execCLI(t, nil, "", "mcp", "--upstream", "a=x", "--upstream", "a=y")
	if r.code != exitUsage || !strings.Contains(r.stderr, "used twice") {
		t.Fatalf("duplicate names: %d %q", r.code, r.stderr)
	}
	cfg := writeTemp(t, "c.json", `{"upstreams":[{"name":"a","command":"x"}],"tiemout":"1s"}`)
	r = execCLI(t, nil, "", "mcp", "--config", cfg)
	if r.code != exitUsage || !strings.Contains(r.stderr, "tiemout") {
		t.Fatalf("misspelt config field: %d %q", r.code, r.stderr)
	}
	cfg = writeTemp(t, "two.json", `{"upstreams":[{"name":"a","command":"x"}]}{"keep":["a__b"]}`)
	r = execCLI(t, nil, "", "mcp", "--config", cfg)
	if r.code != exitUsage || !strings.Contains(r.stderr, "unexpected data after the JSON value") {
		t.Fatalf("data after the config object: %d %q", r.code, r.stderr)
	}
	oneLine(t, r.stderr)
	// A separator outside the tool-name characters breaks names and URIs.
	r = execCLI(t, nil, "", "mcp", "--catalog", "x.json", "--separator", ":")
	if r.code != exitUsage || !strings.Contains(r.stderr, `separator ":"`) || !strings.Contains(r.stderr, "letters, digits") {
		t.Fatalf("--separator ':': %d %q", r.code, r.stderr)
	}
	oneLine(t, r.stderr)
	cfg = writeTemp(t, "sep.json", `{"upstreams":[{"name":"a","command":"x"}],"separator":"/"}`)
	r = execCLI(t, nil, "", "mcp", "--config", cfg)
	if r.code != exitUsage || !strings.Contains(r.stderr, `separator "/"`) {
		t.Fatalf("separator \"/\" in the config file: %d %q", r.code, r.stderr)
	}
	// A stray word stops flag parsing; what follows is not dropped in silence.
	r = execCLI(t, nil, "", "mcp", "stats", "extra", "--catalog", exampleCatalog(t))
	if r.code != exitUsage || !strings.Contains(r.stderr, `unexpected argument "extra"`) || r.stdout != "" {
		t.Fatalf("mcp stats with a stray argument: %d %q %q", r.code, r.stderr, r.stdout)
	}
	oneLine(t, r.stderr)
	r = execCLI(t, nil, "", "mcp", "--catalog", "x.json", "--expose-top", "3")
	if r.code != exitUsage || !strings.Contains(r.stderr, "query") {
		t.Fatalf("--expose-top without --for-query: %d %q", r.code, r.stderr)
	}
}

// TestMCPStdioDrain writes requests and closes stdin at once, as
// `printf ... | toolselect mcp` does: every reply must still be written.
func TestMCPStdioDrain(t *testing.T) {
	every := mcpPeer(t, "mcp-server-everything")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"everything__get-sum","arguments":{"a":20,"b":22}}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"everything__trigger-long-running-operation","arguments":{"duration":1,"steps":2}}}}`,
	}, "\n") + "\n"
	r := execCLI(t, nil, in, "mcp", "--upstream", every)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := map[float64]string{}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var msg struct {
			ID     *float64        `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.ID != nil {
			got[*msg.ID] = string(msg.Result)
		}
	}
	for id := 1.0; id <= 4; id++ {
		if got[id] == "" {
			t.Errorf("no reply to request %v; stdout:\n%s\nstderr:\n%s", id, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(got[3], "42") {
		t.Errorf("get-sum reply: %s", got[3])
	}
	if !strings.Contains(got[4], "completed") && !strings.Contains(got[4], "Long running") {
		t.Errorf("long-running reply: %s", got[4])
	}
}

// TestMCPStatsCatalog measures the livemcpbench catalog offline.
func TestMCPStatsCatalog(t *testing.T) {
	path := fixtures.Tools("livemcpbench")
	r := execCLI(t, nil, "", "mcp", "stats", "--catalog", path)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var st struct {
		Catalogs struct{ Imported int }
		Tools    struct{ Catalog, Exposed int }
		Tokens   struct {
			FullCatalog, Exposed int
			SavedPercent         float64
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if st.Tools.Catalog < 500 || st.Tools.Exposed != 2 || st.Tokens.SavedPercent < 95 {
		t.Fatalf("stats: %+v", st)
	}
	t.Logf("livemcpbench: %d tools, %d tokens in full, %d exposed (%.1f%% saved)", st.Tools.Catalog, st.Tokens.FullCatalog, st.Tokens.Exposed, st.Tokens.SavedPercent)
}

// docs/mcp.md's flag tables document every flag of "toolselect mcp", and
// its configuration example shows every field of the file.
func TestMCPDocsListEveryFlagAndConfigField(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "mcp.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	table := doc[strings.Index(doc, "## Command line"):strings.Index(doc, "### Configuration file")]
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	var f mcpFlags
	f.bind(fs)
	f.bindHTTP(fs)
	fs.VisitAll(func(fl *flag.Flag) {
		if !regexp.MustCompile("--" + regexp.QuoteMeta(fl.Name) + "[ `=,]").MatchString(table) {
			t.Errorf("the flag tables of docs/mcp.md lack --%s", fl.Name)
		}
	})
	example := doc[strings.Index(doc, "### Configuration file"):]
	example = example[:strings.Index(example, "\n```\n")]
	typ := reflect.TypeOf(mcpproxy.Config{})
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && !strings.Contains(example, `"`+name+`":`) {
			t.Errorf("the configuration example in docs/mcp.md lacks %q", name)
		}
	}
}
