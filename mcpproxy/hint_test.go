package mcpproxy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// A destructive tool the proxy refuses is refused in the proxy's own words:
// its flag and its configuration key, not the Go executor's option names.
func TestRefusalNamesTheProxyFlag(t *testing.T) {
	p, err := New(&Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	wipe := registry.NewTool("wipe", "Wipe everything.", json.RawMessage(`{"type":"object"}`))
	wipe.Safe = false
	if err := p.ex.Register(wipe, func(context.Context, json.RawMessage) (any, error) { return "wiped", nil }); err != nil {
		t.Fatal(err)
	}
	res := p.CallTool(context.Background(), "wipe", json.RawMessage(`{}`))
	got := text(res)
	if !res.IsError || !strings.Contains(got, "--destructive ask") || !strings.Contains(got, "--destructive allow") ||
		!strings.Contains(got, `\"destructive\": \"ask\"`) || !strings.Contains(got, "--allow-destructive") {
		t.Errorf("the refusal does not name the proxy's flag and key: %s", got)
	}
	if strings.Contains(got, "Options.") {
		t.Errorf("the refusal names Go options an MCP client cannot set: %s", got)
	}
}
