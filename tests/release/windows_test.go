package release_test

import (
	"archive/zip"
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// The Windows artefacts run under Debian's wine in a prefix made once per
// test binary in a temporary folder. Debian 12's wine 8.0 lacks
// bcryptprimitives.dll, which Go's Windows runtime loads at start; the
// prefix gets a test-only stand-in built with mingw from
// tests/windows/bcryptprimitives.c (docs/testing.md says why).

const installWine = "apt-get install -y wine wine64 gcc-mingw-w64-x86-64"

var (
	wineOnce   sync.Once
	winePrefix string
	wineErr    error
)

// wine returns the wine program and the environment of the test prefix,
// creating the prefix on first use, or skips naming the install line.
func wine(t *testing.T) (string, []string) {
	t.Helper()
	prog := ""
	for _, name := range []string{"wine64", "wine"} {
		if p, err := exec.LookPath(name); err == nil {
			prog = p
			break
		}
	}
	if prog == "" {
		need(t, "wine", installWine)
	}
	if _, err := exec.LookPath("x86_64-w64-mingw32-gcc"); err != nil {
		need(t, "x86_64-w64-mingw32-gcc (mingw)", installWine)
	}
	wineOnce.Do(func() {
		prefix := filepath.Join(tmpRoot, "wineprefix")
		env := wineEnv(prefix)
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		boot := exec.CommandContext(ctx, prog, "wineboot", "-i")
		boot.Env = env
		if out, err := boot.CombinedOutput(); err != nil {
			wineErr = fmt.Errorf("wineboot -i: %v\n%s", err, out)
			return
		}
		winePrefix = prefix
		shim := filepath.Join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll")
		cc := exec.Command("x86_64-w64-mingw32-gcc", "-shared", "-O2", "-o", shim,
			filepath.Join(root, "tests", "windows", "bcryptprimitives.c"), "-ladvapi32")
		if out, err := cc.CombinedOutput(); err != nil {
			wineErr = fmt.Errorf("building the bcryptprimitives.dll stand-in: %v\n%s", err, out)
		}
	})
	if wineErr != nil {
		t.Fatal(wineErr)
	}
	return prog, wineEnv(winePrefix)
}

func wineEnv(prefix string) []string {
	return append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all",
		// No Mono or Gecko install prompts: the tests need neither.
		"WINEDLLOVERRIDES=mscoree,mshtml=")
}

// stopWine stops the prefix's wineserver (TestMain, before the folder goes).
func stopWine() {
	if winePrefix == "" {
		return
	}
	cmd := exec.Command("wineserver", "-k")
	cmd.Env = wineEnv(winePrefix)
	_ = cmd.Run()
}

// windowsPath is the path wine's Z: drive gives a Linux path.
func windowsPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return "Z:" + strings.ReplaceAll(abs, "/", `\`)
}

// windowsRelease extracts toolselect.exe from the release zip, and writes
// the example catalog with Windows line endings beside it.
func windowsRelease(t *testing.T) (exe, catalog string) {
	t.Helper()
	dist := release(t)
	dir := t.TempDir()
	name := "toolselect_" + version + "_windows_amd64"
	z, err := zip.OpenReader(filepath.Join(dist, name+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	r, err := z.Open(name + "/toolselect.exe")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(r)
	exe = filepath.Join(dir, "toolselect.exe")
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "examples", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	catalog = filepath.Join(dir, "catalog.json")
	crlf := strings.ReplaceAll(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n", "\r\n")
	if err := os.WriteFile(catalog, []byte(crlf), 0o644); err != nil {
		t.Fatal(err)
	}
	return exe, catalog
}

// The release's toolselect.exe under wine: --version, and rank on a catalog
// named by a Windows path, the file with CRLF line endings.
func TestWindowsCommandUnderWine(t *testing.T) {
	prog, env := wine(t)
	exe, catalog := windowsRelease(t)
	cmd := exec.Command(prog, exe, "--version")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "toolselect "+version+" (") || !strings.Contains(string(out), "windows/amd64") {
		t.Fatalf("toolselect.exe --version: %v\n%s", err, out)
	}
	cmd = exec.Command(prog, exe, "rank", "--catalog", windowsPath(catalog), "send a message to a slack channel")
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("toolselect.exe rank: %v\n%s", err, out)
	}
	if first, _, _ := strings.Cut(string(out), "\n"); !strings.Contains(first, "send_slack_message") {
		t.Fatalf("toolselect.exe rank: first line %q, want send_slack_message\n%s", first, out)
	}
}

// The release's toolselect.exe mcp under wine, over stdio: the Go SDK's
// client initializes, lists the tools and calls find_tool; and requests
// ending in CRLF, as a Windows client may write them, are answered too.
func TestWindowsMCPUnderWine(t *testing.T) {
	prog, env := wine(t)
	exe, catalog := windowsRelease(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	cmd := exec.Command(prog, exe, "mcp", "--catalog", windowsPath(catalog))
	cmd.Env = env
	client := mcp.NewClient(&mcp.Implementation{Name: "wine-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if info := cs.InitializeResult().ServerInfo; info == nil || info.Version != version {
		t.Fatalf("server info: %+v", info)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "find_tool") || !slices.Contains(names, "call_tool") {
		t.Fatalf("tools/list: %v", names)
	}
	if found := fixtures.FindTool(ctx, t, cs, "send a message to a slack channel", 5); !slices.Contains(found, "send_slack_message") {
		t.Fatalf("find_tool: %v", found)
	}
	cs.Close()

	raw := exec.CommandContext(ctx, prog, exe, "mcp", "--catalog", windowsPath(catalog))
	raw.Env = env
	raw.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"crlf","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"find_tool","arguments":{"query":"search the logs of a service"}}}`,
	}, "\r\n") + "\r\n")
	stdout, err := raw.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Start(); err != nil {
		t.Fatal(err)
	}
	answers := map[float64]string{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() && len(answers) < 2 {
		var msg struct {
			ID     *float64        `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			t.Fatalf("not JSON on stdout: %q", sc.Text())
		}
		if msg.ID != nil {
			answers[*msg.ID] = string(msg.Result) + string(msg.Error)
		}
	}
	_ = raw.Process.Kill()
	_ = raw.Wait()
	if !strings.Contains(answers[1], `"serverInfo"`) || !strings.Contains(answers[2], "search_logs") {
		t.Fatalf("CRLF requests: answers %v", answers)
	}
}

// The C library as toolselect.dll, built with mingw: it exports exactly the
// C ABI's functions, a C program built with mingw against toolselect.h runs
// the C ABI smoke test under wine, and build_wheel.py makes the win_amd64
// wheel of it.
func TestWindowsDLLUnderWine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Windows DLL")
	}
	prog, env := wine(t)
	dir := t.TempDir()
	dll := filepath.Join(dir, "toolselect.dll")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-tags", buildTags(t),
		"-ldflags=-s -w", "-o", dll, "./cabi")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=1", "GOOS=windows", "GOARCH=amd64", "CC=x86_64-w64-mingw32-gcc")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building toolselect.dll: %v\n%s", err, out)
	}

	dump, err := exec.Command("x86_64-w64-mingw32-objdump", "-p", dll).Output()
	if err != nil {
		t.Fatalf("objdump -p: %v", err)
	}
	_, table, _ := strings.Cut(string(dump), "[Ordinal/Name Pointer] Table")
	table, _, _ = strings.Cut(table, "\n\n")
	var exported []string
	for _, m := range regexp.MustCompile(`\]\s+(\w+)`).FindAllStringSubmatch(table, -1) {
		if strings.HasPrefix(m[1], "toolselect_") {
			exported = append(exported, m[1])
		}
	}
	slices.Sort(exported)
	if want := abiExports(t); !slices.Equal(exported, want) {
		t.Fatalf("toolselect.dll exports %v,\nthe C ABI (cabi/testdata/abi_exports.txt) is %v", exported, want)
	}

	smoke := filepath.Join(dir, "abi_smoke.exe")
	cc := exec.Command("x86_64-w64-mingw32-gcc", "-std=c99", "-Wall", "-Werror", "-I", filepath.Join(root, "cabi"),
		"-o", smoke, filepath.Join(root, "cabi", "testdata", "abi_smoke.c"), dll)
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("compiling abi_smoke.c with mingw against toolselect.h: %v\n%s", err, out)
	}
	run := exec.Command(prog, smoke)
	run.Env, run.Dir = env, dir
	out, err := run.CombinedOutput()
	if err != nil || strings.TrimSpace(strings.ReplaceAll(string(out), "\r", "")) != "ok" {
		t.Fatalf("abi_smoke.exe under wine: %v\n%s", err, out)
	}

	wb := exec.Command("python3", filepath.Join(root, "python", "build_wheel.py"), "--lib", dll, "--out", dir)
	whl, err := wb.Output()
	if err != nil {
		t.Fatalf("build_wheel.py --lib toolselect.dll: %v", err)
	}
	wheel := strings.TrimSpace(string(whl))
	if filepath.Base(wheel) != "toolselect-"+version+"-py3-none-win_amd64.whl" {
		t.Fatalf("wheel %s, want the win_amd64 tag", wheel)
	}
	z, err := zip.OpenReader(wheel)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var files []string
	for _, f := range z.File {
		files = append(files, f.Name)
	}
	if !slices.Contains(files, "toolselect/toolselect.dll") || slices.ContainsFunc(files, func(s string) bool { return strings.HasSuffix(s, ".so") }) {
		t.Fatalf("the win_amd64 wheel holds %v: want toolselect/toolselect.dll and no .so", files)
	}
}

// abiExports is the current C ABI's function names: the last "abi N" block
// of cabi/testdata/abi_exports.txt.
func abiExports(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "cabi", "testdata", "abi_exports.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "abi "):
			names = nil
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
		default:
			if m := regexp.MustCompile(`\b(toolselect_\w+)\(`).FindStringSubmatch(line); m != nil {
				names = append(names, m[1])
			}
		}
	}
	slices.Sort(names)
	return names
}
