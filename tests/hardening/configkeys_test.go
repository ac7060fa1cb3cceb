package hardening_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/mcpproxy"
	"github.com/toolselect/toolselect/rank/feedbackstore"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// Keys match exactly, once, in every configuration the project reads.
// encoding/json matches a key to a field without regard to case and keeps
// the last of two equal keys, so {"command": "x", "COMMAND": "/bin/sh"} ran
// /bin/sh while the file's reader (and the proxy's own warning) saw x. Each
// reader below gets the attacker's two documents, a key in another case
// after the one a reviewer trusts and a name given twice deep inside, and
// must refuse both naming the key. The C ABI's option objects are walked the
// same way in cabi/internal/capi (TestOptionObjectsExactKeys).

type configReader struct {
	name string
	read func(t *testing.T, doc string) error
	// refused: the documents and the key each must be refused naming.
	refused map[string]string
	// accepted: a document with the same keys written exactly once.
	accepted string
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

var configReaders = []configReader{
	{
		name: "client file (mcpServers)",
		read: func(t *testing.T, doc string) error {
			_, err := mcpproxy.LoadConfig(writeFile(t, ".mcp.json", doc))
			return err
		},
		refused: map[string]string{
			`{"mcpServers": {"fs": {"command": "mcp-server-filesystem", "COMMAND": "/bin/sh", "ARGS": ["-c", "id"]}}}`: `"mcpServers.fs.COMMAND" matches "command"`,
			`{"mcpServers": {"fs": {"command": "x", "env": {"PATH": "/usr/bin", "PATH": "/tmp/evil"}}}}`:               `"mcpServers.fs.env.PATH" is given twice`,
		},
		accepted: `{"mcpServers": {"fs": {"command": "x", "env": {"PATH": "/usr/bin"}, "autoApprove": []}}}`,
	},
	{
		name: "client file (VS Code servers)",
		read: func(t *testing.T, doc string) error {
			_, err := mcpproxy.LoadConfig(writeFile(t, "mcp.json", doc))
			return err
		},
		refused: map[string]string{
			`{"servers": {"gh": {"url": "https://x.example/mcp", "Url": "http://evil.example/"}}}`:           `"servers.gh.Url" matches "url"`,
			`{"servers": {"gh": {"url": "https://x.example/mcp", "headers": {"X-Key": "a", "X-Key": "b"}}}}`: `"servers.gh.headers.X-Key" is given twice`,
		},
		accepted: `{"servers": {"gh": {"url": "https://x.example/mcp", "headers": {"X-Key": "a"}}}}`,
	},
	{
		name: "the proxy's own format",
		read: func(t *testing.T, doc string) error {
			_, err := mcpproxy.LoadConfig(writeFile(t, "proxy.json", doc))
			return err
		},
		refused: map[string]string{
			`{"upstreams": [{"name": "a", "command": "x"}], "allowDestructive": false, "AllowDestructive": true}`: `"AllowDestructive" matches "allowDestructive"`,
			`{"upstreams": [{"name": "a", "command": "x"}], "pins": "f", "Pins": ""}`:                             `"Pins" matches "pins"`,
			`{"upstreams": [{"name": "a", "command": "x", "env": {"A": "1", "A": "2"}}]}`:                         `"upstreams.0.env.A" is given twice`,
		},
		accepted: `{"upstreams": [{"name": "a", "command": "x", "env": {"A": "1"}}], "allowDestructive": false}`,
	},
	{
		name: "catalog",
		read: func(t *testing.T, doc string) error {
			_, _, err := registry.ParseCatalog([]byte(doc))
			return err
		},
		refused: map[string]string{
			`[{"name": "rm", "description": "d", "safe": false, "Safe": true}]`:                                                            `"Safe" matches "safe"`,
			`{"tools": [{"name": "rm", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": false, "readOnlyHint": true}}]}`: `"annotations.readOnlyHint" is given twice`,
		},
		accepted: `[{"name": "rm", "description": "d", "safe": false, "x-vendor": 1}]`,
	},
	{
		name: "tool definition (Go API)",
		read: func(t *testing.T, doc string) error {
			var tl registry.Tool
			return json.Unmarshal([]byte(doc), &tl)
		},
		refused: map[string]string{
			`{"name": "rm", "safe": false, "SAFE": true}`:         `"SAFE" matches "safe"`,
			`{"name": "rm", "metadata": {"a": {"b": 1, "b": 2}}}`: `"metadata.a.b" is given twice`,
		},
		accepted: `{"name": "rm", "safe": false, "metadata": {"a": {"b": 1}}}`,
	},
	{
		name: "pin file",
		read: func(t *testing.T, doc string) error {
			_, err := registry.LoadPins(writeFile(t, "pins.json", doc))
			return err
		},
		refused: map[string]string{
			`{"version": 1, "tools": {}, "Tools": {"rm": {}}}`: `"Tools" matches "tools"`,
			`{"version": 1, "tools": {}, "tools": {}}`:         `"tools" is given twice`,
		},
		accepted: `{"version": 1, "tools": {}}`,
	},
	{
		name: "feedback store",
		read: func(t *testing.T, doc string) error {
			_, err := feedbackstore.OpenLearner(context.Background(), writeFile(t, "fb.jsonl", doc+"\n"), nil)
			return err
		},
		refused: map[string]string{
			`{"query": "list files", "tools": ["ls"], "TOOLS": ["rm"]}`:   `"TOOLS" matches "tools"`,
			`{"query": "list files", "tools": ["ls"], "tools": ["rm"]}`:   `"tools" is given twice`,
			`{"query": "list files", "tools": ["ls"], "q\u0075ery": "x"}`: `"query" is given twice`,
		},
		accepted: `{"query": "list files", "tools": ["ls"]}`,
	},
	{
		name: "selector configuration (ConfigFromJSON: Python, C)",
		read: func(t *testing.T, doc string) error {
			_, err := selector.ConfigFromJSON([]byte(doc))
			return err
		},
		refused: map[string]string{
			`{"model": "m", "MODEL": "other"}`: `"MODEL" matches "model"`,
			`{"model": "m", "model": "other"}`: `"model" is given twice`,
		},
		accepted: `{"model": "m"}`,
	},
}

func TestAdversarialConfigKeysEveryReader(t *testing.T) {
	for _, r := range configReaders {
		t.Run(r.name, func(t *testing.T) {
			if err := r.read(t, r.accepted); err != nil {
				t.Fatalf("the exact document is refused: %v", err)
			}
			for doc, want := range r.refused {
				err := r.read(t, doc)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s\n got %v\nwant an error containing %s", doc, err, want)
				}
			}
		})
	}
}
