// Package mcp_test drives the built `toolselect mcp` binary with real MCP
// peers: the official inspector's command-line mode over stdio and
// streamable HTTP, the Go SDK client over stdio, and the conformance suite.
package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
)

// peer finds an installed MCP peer, or skips the test saying how to install
// the peers.
func peer(t *testing.T, name string) string {
	t.Helper()
	return fixtures.MCPPeer(t, name)
}

// peerPath puts the peers' directory (and its Node 22) first on PATH.
func peerPath(bin string) []string {
	return append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

var binPath string

// build compiles cmd/toolselect once per test binary.
func build(t *testing.T) string {
	t.Helper()
	if binPath != "" {
		return binPath
	}
	dir, err := os.MkdirTemp("", "toolselect-mcp-test")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "toolselect")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/toolselect")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	binPath = bin
	return bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// proxyArgs is the proxy's command line in front of server-everything and
// server-memory (its file in dir).
func proxyArgs(t *testing.T, dir string) []string {
	every := peer(t, "mcp-server-everything")
	mem := peer(t, "mcp-server-memory")
	return []string{"mcp",
		"--upstream", every,
		"--upstream", "memory=MEMORY_FILE_PATH=" + filepath.Join(dir, "memory.jsonl") + " " + mem,
		"--keep", "everything__echo",
	}
}

// inspector runs `mcp-inspector --cli` and decodes its JSON output.
func inspector(t *testing.T, args ...string) map[string]any {
	t.Helper()
	bin := peer(t, "mcp-inspector")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--cli"}, args...)...)
	cmd.Env = peerPath(bin)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("mcp-inspector %v: %v\nstdout: %s\nstderr: %s", args, err, out, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("inspector output: %v: %s", err, out)
	}
	return v
}

func toolNames(v map[string]any) []string {
	var names []string
	tools, _ := v["tools"].([]any)
	for _, tl := range tools {
		if m, ok := tl.(map[string]any); ok {
			names = append(names, m["name"].(string))
		}
	}
	return names
}

func resultText(v map[string]any) string {
	var b strings.Builder
	content, _ := v["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			if s, ok := m["text"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

// checkInspector runs the inspector's list / find / call against target
// (the inspector arguments naming the server).
func checkInspector(t *testing.T, target func(extra ...string) []string) {
	t.Run("tools/list", func(t *testing.T) {
		names := toolNames(inspector(t, target("--method", "tools/list")...))
		if len(names) != 3 || !slices.Contains(names, "find_tool") || !slices.Contains(names, "call_tool") || !slices.Contains(names, "everything__echo") {
			t.Fatalf("tools/list = %v", names)
		}
	})
	t.Run("find_tool", func(t *testing.T) {
		v := inspector(t, target("--tool-arg", "query=add two numbers", "--method", "tools/call", "--tool-name", "find_tool")...)
		if txt := resultText(v); !strings.Contains(txt, "everything__get-sum") {
			t.Fatalf("find_tool: %s", txt)
		}
		v = inspector(t, target("--tool-arg", "query=delete entities", "limit=50", "--method", "tools/call", "--tool-name", "find_tool")...)
		if txt := resultText(v); strings.Contains(txt, "memory__delete_") {
			t.Fatalf("find_tool returned a destructive tool: %s", txt)
		}
	})
	t.Run("call_tool", func(t *testing.T) {
		v := inspector(t, target("--tool-arg", "name=everything__get-sum", `arguments={"a":19,"b":23}`, "--method", "tools/call", "--tool-name", "call_tool")...)
		if txt := resultText(v); v["isError"] == true || !strings.Contains(txt, "42") {
			t.Fatalf("call_tool get-sum: %v", v)
		}
		v = inspector(t, target("--tool-arg", "name=memory__create_entities", `arguments={"entities":[{"name":"x"}]}`, "--method", "tools/call", "--tool-name", "call_tool")...)
		if txt := resultText(v); v["isError"] != true || !strings.Contains(txt, "required") {
			t.Fatalf("call_tool with invalid arguments: %v", v)
		}
		v = inspector(t, target("--tool-arg", "name=nope", "arguments={}", "--method", "tools/call", "--tool-name", "call_tool")...)
		if txt := resultText(v); v["isError"] != true || !strings.Contains(txt, "unknown tool") {
			t.Fatalf("call_tool unknown: %v", v)
		}
	})
}

// TestInspectorStdio: the inspector starts the proxy as its stdio server.
func TestInspectorStdio(t *testing.T) {
	peer(t, "mcp-inspector")
	bin := build(t)
	args := proxyArgs(t, t.TempDir())
	checkInspector(t, func(extra ...string) []string {
		return append(append(extra, "--", bin), args...)
	})
}

// startHTTP starts the proxy on 127.0.0.1:0 and returns its URL; the
// process is ended when the test finishes.
func startHTTP(t *testing.T, args ...string) string {
	t.Helper()
	u, _ := startHTTPWith(t, nil, args...)
	return u
}

// startHTTPWith is startHTTP with extra environment variables for the
// proxy; stderr returns what the proxy has written on stderr so far.
func startHTTPWith(t *testing.T, env []string, args ...string) (url string, stderr func() string) {
	t.Helper()
	bin := build(t)
	cmd := exec.Command(bin, append(args, "--listen", "127.0.0.1:0")...)
	cmd.Env = append(os.Environ(), env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	var mu sync.Mutex
	var lines strings.Builder
	urlRE := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			mu.Lock()
			lines.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if u := urlRE.FindString(sc.Text()); u != "" {
				found <- u
			}
		}
	}()
	stderr = func() string {
		mu.Lock()
		defer mu.Unlock()
		return lines.String()
	}
	select {
	case u := <-found:
		return u, stderr
	case <-time.After(60 * time.Second):
		t.Fatalf("proxy did not report its address; stderr:\n%s", stderr())
		return "", nil
	}
}

// TestInspectorHTTP: the inspector connects to `toolselect mcp --listen`.
func TestInspectorHTTP(t *testing.T) {
	peer(t, "mcp-inspector")
	url := startHTTP(t, proxyArgs(t, t.TempDir())...)
	checkInspector(t, func(extra ...string) []string {
		return append([]string{url}, extra...)
	})
	t.Run("mcp stats --url", func(t *testing.T) {
		out, err := exec.Command(build(t), "mcp", "stats", "--url", url).Output()
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Upstreams []struct{ Name, State string }
			FindTool  struct{ Count int }
			CallTool  struct{ Count int }
		}
		if err := json.Unmarshal(out, &st); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if len(st.Upstreams) != 2 || st.FindTool.Count < 2 || st.CallTool.Count < 3 {
			t.Fatalf("stats: %s", out)
		}
	})
}

// TestSDKClientStdio: the Go SDK client runs the binary as a stdio server,
// for two protocol versions.
func TestSDKClientStdio(t *testing.T) {
	bin := build(t)
	args := proxyArgs(t, t.TempDir())
	every := peer(t, "mcp-server-everything")
	for _, version := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.Command(bin, args...)
			cmd.Env = peerPath(every)
			c := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{
				"name": "everything__echo", "arguments": map[string]any{"message": "through the proxy"},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "through the proxy") {
				t.Fatalf("echo: %+v", res)
			}
		})
	}
}

// TestConformance runs tests/mcp/conformance.sh against the built binary.
func TestConformance(t *testing.T) {
	peer(t, "conformance")
	if testing.Short() {
		t.Skip("conformance suite skipped in -short mode")
	}
	cmd := exec.Command("bash", "conformance.sh")
	cmd.Env = append(peerPath(peer(t, "conformance")), "TOOLSELECT_BIN="+build(t), "TOOLSELECT_REQUIRE_PEERS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance.sh: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
