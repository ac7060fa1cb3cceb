package mcpproxy

import (
	"context"
	"github.com/toolselect/toolselect/internal/testing/fixtures"
	"github.com/toolselect/toolselect/rank"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPProtocolVersions connects SDK clients speaking the session-based
// protocols and the sessionless 2026-07-28 protocol over streamable HTTP.
func TestHTTPProtocolVersions(t *testing.T) {
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}, Keep: []string{"t__count"}})
	srv := httptest.NewServer(p.HTTPHandler(nil))
	t.Cleanup(srv.Close)
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			names := listNames(t, cs)
			if len(names) != 3 || !slices.Contains(names, "t__count") {
				t.Fatalf("tools/list = %v", names)
			}
			if got := find(t, cs, "sleep milliseconds", 1); len(got) != 1 || got[0] != "t__sleep" {
				t.Fatalf("find_tool = %v", got)
			}
			res := call(t, cs, rank.CallToolName, map[string]any{"name": "t__sleep", "arguments": map[string]any{"ms": 1}})
			if res.IsError || text(res) != "done" {
				t.Fatalf("call_tool: %s", text(res))
			}
			res = call(t, cs, rank.CallToolName, map[string]any{"name": "t__sleep", "arguments": map[string]any{"ms": -1}})
			if !res.IsError || !strings.Contains(text(res), "minimum") {
				t.Fatalf("invalid call: %s", text(res))
			}
			// The SDK v1.8.0 client sends ping without the _meta that
			// 2026-07-28 requires, so ping is checked on the session protocols.
			if version >= statelessProtocol {
				return
			}
			if err := cs.Ping(ctx, nil); err != nil {
				t.Fatalf("ping: %v", err)
			}
		})
	}
}

// TestDNSRebinding: a foreign Host or Origin is refused before MCP sees it.
func TestDNSRebinding(t *testing.T) {
	p := startProxy(t, &Config{Catalogs: nil})
	srv := httptest.NewServer(p.HTTPHandler(nil))
	t.Cleanup(srv.Close)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(host, origin string) int {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("", ""); code != http.StatusOK {
		t.Fatalf("plain request: %d", code)
	}
	if code := post("localhost:1234", "http://localhost:1234"); code != http.StatusOK {
		t.Fatalf("localhost origin: %d", code)
	}
	if code := post("evil.example.com", ""); code != http.StatusForbidden {
		t.Fatalf("foreign Host: %d, want 403", code)
	}
	if code := post("", "http://evil.example.com"); code != http.StatusForbidden {
		t.Fatalf("foreign Origin: %d, want 403", code)
	}
}

// TestHTTPUpstreams: streamable HTTP upstreams, a proxy behind a proxy and
// server-everything in its streamableHttp mode.
func TestHTTPUpstreams(t *testing.T) {
	inner := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	innerSrv := httptest.NewServer(inner.HTTPHandler(nil))
	t.Cleanup(innerSrv.Close)

	ups := []Upstream{{Name: "inner", URL: innerSrv.URL}}
	if every, err := fixtures.LookMCPPeer("mcp-server-everything"); err == nil {
		port := freePort(t)
		cmd := exec.Command(every, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+port, "PATH="+filepath.Dir(every)+string(os.PathListSeparator)+os.Getenv("PATH"))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		url := "http://127.0.0.1:" + port + "/mcp"
		waitFor(t, func() bool {
			c, err := net.Dial("tcp", "127.0.0.1:"+port)
			if err == nil {
				c.Close()
			}
			return err == nil
		})
		ups = append(ups, Upstream{Name: "every", URL: url})
	} else {
		t.Log("server-everything not installed: testing the Go HTTP upstream only")
	}
	p := startProxy(t, &Config{Upstreams: ups})
	cs := connectMemory(t, p, "")
	for _, u := range p.Stats(context.Background()).Upstreams {
		if u.State != StateReady || u.Transport != "http" || u.Imported == 0 {
			t.Fatalf("upstream %s: %+v", u.Name, u)
		}
	}
	// The inner proxy lists find_tool and call_tool; calling through both
	// proxies reaches the test upstream.
	res := call(t, cs, rank.CallToolName, map[string]any{"name": "inner__call_tool", "arguments": map[string]any{
		"name": "t__sleep", "arguments": map[string]any{"ms": 1},
	}})
	if res.IsError || text(res) != "done" {
		t.Fatalf("through two proxies: %s", text(res))
	}
	if len(ups) > 1 {
		res = call(t, cs, rank.CallToolName, map[string]any{"name": "every__get-sum", "arguments": map[string]any{"a": 1, "b": 2}})
		if res.IsError || !strings.Contains(text(res), "3") {
			t.Fatalf("everything over HTTP: %s", text(res))
		}
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// TestServeStdioDrain: requests piped in and stdin closed at once still get
// their replies (the SDK's stdio server alone drops them on EOF).
func TestServeStdioDrain(t *testing.T) {
	p := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"t__sleep","arguments":{"ms":300}}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"find_tool","arguments":{"query":"sleep"}}}
`
	var out strings.Builder
	if err := p.ServeStdio(context.Background(), strings.NewReader(in), &out, 0); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{`"id":1`, `"id":2`, `"id":3`} {
		if !strings.Contains(out.String(), id) {
			t.Errorf("no reply with %s:\n%s", id, out.String())
		}
	}
	if !strings.Contains(out.String(), "done") {
		t.Errorf("the slow call's result is missing:\n%s", out.String())
	}
}
