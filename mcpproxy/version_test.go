package mcpproxy

import (
	"testing"

	"github.com/toolselect/toolselect"
)

// The MCP server info carries toolselect's one version (the VERSION file).
func TestServerInfoVersion(t *testing.T) {
	p := startProxy(t, &Config{})
	cs := connectMemory(t, p, "")
	if got := cs.InitializeResult().ServerInfo.Version; got != toolselect.Version() {
		t.Fatalf("server info version %q, want %q", got, toolselect.Version())
	}
}
