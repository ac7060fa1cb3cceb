package mcpproxy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/rank"
)

// elicitingClient answers every elicitation request with action, counting
// them and keeping the last message.
func elicitingClient(action string, asked *atomic.Int32, msg *atomic.Value) *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		msg.Store(req.Params.Message)
		return &mcp.ElicitResult{Action: action}, nil
	}}
}

// "--destructive ask" against the real server-filesystem: write_file is
// findable, and writes the file only after the client's user accepts; a
// decline or a cancel is a refusal the model reads, a declined call retried
// is not asked again, and a client without the elicitation capability is
// told so, with the operator's alternative.
func TestDestructiveAskElicitsThroughTheClient(t *testing.T) {
	ups, fsDir := realPeers(t)
	p := startProxy(t, &Config{Upstreams: ups[1:2], Destructive: destructiveAsk})
	target := filepath.Join(fsDir, "note.txt")
	write := func(cs *mcp.ClientSession, content string) *mcp.CallToolResult {
		return call(t, cs, rank.CallToolName, map[string]any{"name": "filesystem__write_file",
			"arguments": map[string]any{"path": target, "content": content}})
	}

	var asked atomic.Int32
	var msg atomic.Value
	accept := connectSession(t, p, elicitingClient("accept", &asked, &msg), "2025-11-25")
	found := text(call(t, accept, rank.FindToolName, map[string]any{"query": "write a file", "limit": 10}))
	if !strings.Contains(found, "filesystem__write_file") {
		t.Fatalf("write_file is not findable under ask: %s", found)
	}
	res := write(accept, "approved")
	if res.IsError || asked.Load() != 1 {
		t.Fatalf("accepted call: isError %v, asked %d: %s", res.IsError, asked.Load(), text(res))
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "approved" {
		t.Fatalf("the file after accept: %q %v", b, err)
	}
	m, _ := msg.Load().(string)
	for _, want := range []string{"filesystem__write_file", "Upstream server: filesystem", `"content":"approved"`, "destructive", "SHA-256"} {
		if !strings.Contains(m, want) {
			t.Errorf("the elicitation message lacks %q:\n%s", want, m)
		}
	}

	for _, action := range []string{"decline", "cancel"} {
		var n atomic.Int32
		cs := connectSession(t, p, elicitingClient(action, &n, &msg), "2025-11-25")
		res := write(cs, "by "+action)
		if !res.IsError || !strings.Contains(text(res), "approval denied") || n.Load() != 1 {
			t.Fatalf("%s: isError %v, asked %d: %s", action, res.IsError, n.Load(), text(res))
		}
		if b, _ := os.ReadFile(target); string(b) != "approved" {
			t.Fatalf("%s wrote the file: %q", action, b)
		}
		if action == "decline" {
			// A model retrying the declined call: refused, counted, not asked again.
			for range 3 {
				res = write(cs, "by "+action)
			}
			if n.Load() != 1 || !strings.Contains(text(res), "not asked about again (declined or retried 4 times)") {
				t.Fatalf("retries: asked %d: %s", n.Load(), text(res))
			}
		}
	}

	plain := connectSession(t, p, nil, "2025-11-25")
	res = write(plain, "unasked")
	if !res.IsError || !strings.Contains(text(res), "did not declare the elicitation capability") || !strings.Contains(text(res), "--destructive allow") {
		t.Fatalf("a client without elicitation: %s", text(res))
	}
	if b, _ := os.ReadFile(target); string(b) != "approved" {
		t.Fatalf("a client without elicitation wrote the file: %q", b)
	}
}

func TestDestructiveModeConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Destructive: "sometimes"}, `destructive "sometimes" is not`},
		{Config{Destructive: destructiveAsk, AllowDestructive: true}, "disagree"},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, destructiveDeny}, {Config{AllowDestructive: true}, destructiveAllow},
		{Config{AllowDestructive: true, Destructive: destructiveAllow}, destructiveAllow}, {Config{Destructive: destructiveAsk}, destructiveAsk},
	} {
		if err := c.cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := c.cfg.destructive(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.cfg, got, c.want)
		}
	}
}

// The stateless 2026-07-28 protocol: the go-sdk refuses a server request in
// the middle of a call there (it offers input requests instead, which this
// proxy does not answer with yet), so the call is refused saying so, even
// for a client that declares elicitation, and nothing runs.
func TestDestructiveAskOnTheStatelessProtocolRefuses(t *testing.T) {
	ups, fsDir := realPeers(t)
	p := startProxy(t, &Config{Upstreams: ups[1:2], Destructive: destructiveAsk})
	var asked atomic.Int32
	var msg atomic.Value
	cs := connectSession(t, p, elicitingClient("accept", &asked, &msg), "2026-07-28")
	target := filepath.Join(fsDir, "stateless.txt")
	res := call(t, cs, rank.CallToolName, map[string]any{"name": "filesystem__write_file",
		"arguments": map[string]any{"path": target, "content": "x"}})
	if !res.IsError || asked.Load() != 0 || !strings.Contains(text(res), "2026-07-28") || !strings.Contains(text(res), "--destructive allow") {
		t.Fatalf("stateless: isError %v, asked %d: %s", res.IsError, asked.Load(), text(res))
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the file was written: %v", err)
	}
}
