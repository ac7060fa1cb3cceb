package hardening_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/toolselect/toolselect/executor/metatool"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/internal/testing/fixtures"
	"github.com/toolselect/toolselect/mcpproxy"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// Duplicate keys through every Go front door. A parser that keeps the first
// of two equal keys (cJSON, RapidJSON) and one that keeps the last
// (encoding/json) read {"path":"/safe/x","path":"/etc/shadow"} as two
// different calls, so the document is refused wherever it arrives, naming
// the key, and what runs is always the validated value written again. The
// C ABI's door is checked from C (cabi/testdata/abi_smoke.c) and in
// cabi/internal/capi; the MCP proxy's against its own test upstream in
// mcpproxy (adversarial_test.go) and against a real server below.

// dupDocs hold "path" twice, however spelt; each would pass the schema if
// only one of its values were read.
var dupDocs = []string{
	`{"path":"/safe/x","path":"/etc/shadow"}`,
	`{"path":"/etc/shadow","path":"/safe/x"}`,
	`{"path":"/safe/x","p\u0061th":"/etc/shadow"}`,
	`{"path":"/safe/x","opts":{"mode":"r","mode":"w"}}`,
}

const safePathSchema = `{"type":"object","properties":{"path":{"type":"string","pattern":"^/safe/"},"opts":{"type":"object"}},"required":["path"]}`

func TestAdversarialDuplicateKeysExecutor(t *testing.T) {
	reg := registry.New(nil)
	require.NoError(t, reg.Register(registry.NewTool("read_file", "Read a file.", json.RawMessage(safePathSchema))))
	var mu sync.Mutex
	var ran []string
	var audited []executor.Record
	ex := executor.New(reg, &executor.Options{Audit: func(_ context.Context, r executor.Record) {
		mu.Lock()
		audited = append(audited, r)
		mu.Unlock()
	}})
	require.NoError(t, ex.Handle("read_file", func(_ context.Context, args json.RawMessage) (any, error) {
		mu.Lock()
		ran = append(ran, string(args))
		mu.Unlock()
		return "ok", nil
	}))
	ctx := context.Background()
	for _, doc := range dupDocs {
		for _, args := range []json.RawMessage{json.RawMessage(doc), mustQuote(t, doc)} { // an object, or OpenAI's string form
			_, err := ex.Call(ctx, executor.Call{Tool: "read_file", Args: args})
			var ve *registry.ValidationError
			if assert.ErrorAs(t, err, &ve, doc) && assert.Len(t, ve.Violations, 1, doc) {
				assert.Equal(t, "duplicateKey", ve.Violations[0].Rule, doc)
				assert.Contains(t, ve.Violations[0].Message, `"`, doc)
			}
			assert.True(t, errors.Is(err, registry.ErrInvalidArgs), doc)
		}
		// Through the call_tool meta-tool as well.
		res, handled, err := metatool.New(ex, nil).Handle(ctx, executor.Call{Tool: rank.CallToolName,
			Args: json.RawMessage(`{"name":"read_file","arguments":` + doc + `}`)})
		assert.True(t, handled)
		assert.Error(t, err, doc)
		assert.Contains(t, res.Content(), "duplicateKey", doc)
	}
	assert.Empty(t, ran, "a document with a duplicate key ran")

	_, err := ex.Call(ctx, executor.Call{Tool: "read_file", Args: json.RawMessage(` { "path" : "/safe/\u0078" , "note":"a\u003cb" } `)})
	require.NoError(t, err)
	require.Equal(t, []string{`{"path":"/safe/x","note":"a<b"}`}, ran, "the handler gets the validated value written again")
	last := audited[len(audited)-1]
	assert.JSONEq(t, ran[0], string(last.Args), "the audit names what ran")
}

func mustQuote(t *testing.T, s string) json.RawMessage {
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return b
}

// A model's call with a duplicate key is dropped by the selector, never
// returned for the caller to run.
func TestAdversarialDuplicateKeysSelection(t *testing.T) {
	reg := registry.New(nil)
	require.NoError(t, reg.Register(registry.NewTool("read_file", "Read a file.", json.RawMessage(safePathSchema))))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply := `{"calls":[{"tool":"read_file","args":` + dupDocs[0] + `},{"tool":"read_file","args":{ "path" : "/safe/y" }}]}`
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": reply}}}})
	}))
	defer srv.Close()
	defer closeIdle()
	var cfg selector.Config
	cfg.BaseURL = srv.URL + "/v1"
	cfg.FailOpen = true
	client, err := selector.NewOpenAIClient(&cfg, nil)
	require.NoError(t, err)
	cfg.Logger = slog.New(slog.DiscardHandler)
	sel, err := selector.New(client, &cfg)
	require.NoError(t, err)
	res, err := sel.Select(context.Background(), selector.Request{Task: selector.Task{Description: "read /safe/y"}, Registry: reg})
	require.NoError(t, err)
	require.Len(t, res.Calls, 1)
	assert.Equal(t, `{"path":"/safe/y"}`, string(res.Calls[0].Args), "the call carries the validated value")
	found := false
	for _, d := range res.Dropped {
		found = found || (d.Reason == selector.DropInvalidArgs && strings.Contains(d.Message, "duplicateKey"))
	}
	assert.True(t, found, "the duplicate-key call is dropped as invalid: %+v", res.Dropped)
}

// The MCP proxy in front of a real MCP server (the reference filesystem
// server): a call whose path is given twice never reaches it, one way or the
// other, through call_tool or the tool listed in full.
func TestAdversarialDuplicateKeysMCPRealServer(t *testing.T) {
	bin := realPeer(t, "mcp-server-filesystem")
	dir := t.TempDir()
	safe := filepath.Join(dir, "safe")
	require.NoError(t, os.MkdirAll(safe, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(safe, "a.txt"), []byte("the safe file\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("the secret file\n"), 0o600))
	env := map[string]string{"PATH": filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")}
	p, err := mcpproxy.New(&mcpproxy.Config{Upstreams: []mcpproxy.Upstream{{Name: "fs", Command: bin, Args: []string{dir}, Env: env}},
		Keep: []string{"fs__read_text_file"}}, nil)
	require.NoError(t, err)
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, p.Start(ctx))
	ct, st := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "adversary", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()

	good, bad := filepath.Join(safe, "a.txt"), filepath.Join(dir, "secret.txt")
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, doc := range []string{`{"path":` + q(good) + `,"path":` + q(bad) + `}`, `{"path":` + q(bad) + `,"path":` + q(good) + `}`} {
		for name, args := range map[string]json.RawMessage{
			rank.CallToolName:    json.RawMessage(`{"name":"fs__read_text_file","arguments":` + doc + `}`),
			"fs__read_text_file": json.RawMessage(doc),
		} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			require.NoError(t, err)
			body := textOf(res)
			assert.True(t, res.IsError, "%s %s: %s", name, doc, body)
			assert.Contains(t, body, "duplicateKey")
			assert.NotContains(t, body, "the secret file")
			assert.NotContains(t, body, "the safe file")
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fs__read_text_file", Arguments: json.RawMessage(`{ "path" : ` + q(good) + ` }`)})
	require.NoError(t, err)
	assert.False(t, res.IsError, textOf(res))
	assert.Contains(t, textOf(res), "the safe file")
	assert.Equal(t, int64(1), int64(p.Stats(ctx).Upstreams[0].Calls), "only the valid call reached the server")
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// realPeer finds an installed MCP reference server, or skips the test saying
// how to install the peers.
func realPeer(t *testing.T, name string) string {
	t.Helper()
	return fixtures.MCPPeer(t, name)
}
