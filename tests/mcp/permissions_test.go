package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The built binary with a configuration file whose permissions ask about
// server-filesystem's write_file and deny its read tools, driven by the Go
// SDK client over stdio: with the elicitation capability the write runs
// after accept; without it the write is refused saying why; a denied read
// tool is refused and never findable. A pattern path.Match cannot read is
// exit 2, naming it.
func TestPermissionsThroughTheBinary(t *testing.T) {
	bin := build(t)
	fsBin := peer(t, "mcp-server-filesystem")
	dir := t.TempDir()
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(files, "secret.txt"), []byte("top secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeConfig := func(permissions string) string {
		cfg, _ := json.Marshal(map[string]any{
			"upstreams":   []any{map[string]any{"name": "fs", "command": fsBin, "args": []string{files}}},
			"permissions": json.RawMessage(permissions),
		})
		path := filepath.Join(dir, "proxy.json")
		if err := os.WriteFile(path, cfg, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfg := writeConfig(`{"ask": ["fs__write_file"], "deny": ["fs__read_*"]}`)

	connect := func(opts *mcp.ClientOptions) (*mcp.ClientSession, context.Context) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		t.Cleanup(cancel)
		cmd := exec.Command(bin, "mcp", "--config", cfg)
		cmd.Env = peerPath(fsBin)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "permissions-test", Version: "1"}, opts).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs, ctx
	}
	callTool := func(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res.IsError
	}
	target := filepath.Join(files, "out.txt")
	write := map[string]any{"name": "fs__write_file", "arguments": map[string]any{"path": target, "content": "accepted"}}

	var asked atomic.Int32
	cs, ctx := connect(&mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		if !strings.Contains(req.Params.Message, "fs__write_file") {
			return nil, errors.New("the request does not name the tool")
		}
		return &mcp.ElicitResult{Action: "accept"}, nil
	}})
	if out, isErr := callTool(ctx, cs, "call_tool", write); isErr || asked.Load() != 1 {
		t.Fatalf("write under an ask rule, accepted: asked %d: %s", asked.Load(), out)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "accepted" {
		t.Fatalf("the file: %q %v", b, err)
	}
	out, isErr := callTool(ctx, cs, "call_tool", map[string]any{"name": "fs__read_text_file", "arguments": map[string]any{"path": filepath.Join(files, "secret.txt")}})
	if !isErr || strings.Contains(out, "top secret") || !strings.Contains(out, "denied") {
		t.Fatalf("a denied read tool: %s", out)
	}
	out, _ = callTool(ctx, cs, "find_tool", map[string]any{"query": "read the contents of a file", "limit": 10})
	if strings.Contains(out, "fs__read_") || !strings.Contains(out, "denied by rule") {
		t.Fatalf("find_tool with denied read tools: %s", out)
	}

	plain, ctx := connect(nil)
	write["arguments"] = map[string]any{"path": target, "content": "unasked"}
	if out, isErr := callTool(ctx, plain, "call_tool", write); !isErr || !strings.Contains(out, "elicitation") {
		t.Fatalf("a client without elicitation: %s", out)
	}
	if b, _ := os.ReadFile(target); string(b) != "accepted" {
		t.Fatalf("written without asking: %q", b)
	}

	bad := writeConfig(`{"deny": ["fs__[read"]}`)
	cmd := exec.Command(bin, "mcp", "--config", bad)
	outb, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(outb), `permissions.deny[0] "fs__[read"`) {
		t.Fatalf("a bad pattern: %v\n%s", err, outb)
	}
}
