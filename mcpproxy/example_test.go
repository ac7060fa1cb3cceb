package mcpproxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
	"github.com/toolselect/toolselect/mcpproxy"
)

// A proxy over a catalog file: find_tool ranks it, call_tool validates
// arguments before anything would reach a server. With Upstreams instead of
// Catalogs the same calls are forwarded to live MCP servers.
func Example() {
	dir, _ := os.MkdirTemp("", "mcpproxy-example")
	defer os.RemoveAll(dir)
	catalog := filepath.Join(dir, "tools.json")
	_ = os.WriteFile(catalog, []byte(`{"tools":[
 {"name":"weather__forecast","description":"Weather forecast for a city","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"annotations":{"readOnlyHint":true}},
 {"name":"files__read","description":"Read a text file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"annotations":{"readOnlyHint":true}}
]}`), 0o600)

	p, err := mcpproxy.New(&mcpproxy.Config{Catalogs: []string{catalog}}, nil)
	if err != nil {
		panic(err)
	}
	defer p.Close()
	ctx := context.Background()
	if err := p.Start(ctx); err != nil {
		panic(err)
	}

	found, _ := p.FindTool(ctx, "will it rain in Paris tomorrow? weather", 1)
	fmt.Println("found:", found[0].Name)

	res := p.CallTool(ctx, "weather__forecast", json.RawMessage(`{"town":"Paris"}`))
	fmt.Println("error:", res.IsError, res.StructuredContent.(map[string]any)["outcome"])
	// Output:
	// found: weather__forecast
	// error: true invalid
}

// BenchmarkFindTool ranks the livemcpbench catalog (527 tools).
func BenchmarkFindTool(b *testing.B) {
	path := fixtures.Tools("livemcpbench")
	p, err := mcpproxy.New(&mcpproxy.Config{Catalogs: []string{path}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	if err := p.Start(ctx); err != nil {
		b.Fatal(err)
	}
	p.FindTool(ctx, "warm up", 5)
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.FindTool(ctx, "search the web for recent news about electric cars", 5); err != nil {
			b.Fatal(err)
		}
	}
}
