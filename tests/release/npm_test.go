package release_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
	"github.com/toolselect/toolselect/mcpproxy"
)

var (
	npmOnce sync.Once
	npmDir  string
	npmErr  error
)

// npmPackages runs packaging/npm.py on the test release (the linux-x64 and
// win32-x64 platform packages, and the main one) and returns dist/npm.
func npmPackages(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"npm", "npx", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			need(t, tool, "apt-get install -y npm")
		}
	}
	dist := release(t)
	npmOnce.Do(func() {
		npmDir = filepath.Join(dist, "npm")
		cmd := exec.Command("python3", "packaging/npm.py", "--dist", dist, "--out", npmDir)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "NPM_PLATFORMS=linux-x64 win32-x64")
		if out, err := cmd.CombinedOutput(); err != nil {
			npmErr = errors.New("packaging/npm.py: " + err.Error() + "\n" + string(out))
		}
	})
	if npmErr != nil {
		t.Fatal(npmErr)
	}
	return npmDir
}

// packageJSON reads package/package.json from an npm tarball.
func packageJSON(t *testing.T, tgz string) map[string]any {
	t.Helper()
	_, entries := readTarGz(t, tgz)
	for _, e := range entries {
		if e.name == "package/package.json" {
			var m map[string]any
			if err := json.Unmarshal(e.data, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("%s: no package/package.json", tgz)
	return nil
}

// The main package lists every platform package as an optional dependency
// of its own version; each platform package carries os and cpu.
func TestNPMPackagesDeclareTheirPlatforms(t *testing.T) {
	dir := npmPackages(t)
	main := packageJSON(t, filepath.Join(dir, "toolselect-"+version+".tgz"))
	if main["name"] != "toolselect" || main["version"] != version {
		t.Fatalf("main package: %v %v", main["name"], main["version"])
	}
	if bin, _ := main["bin"].(map[string]any); bin["toolselect"] != "bin/toolselect.js" {
		t.Fatalf("main package bin: %v", main["bin"])
	}
	opt, _ := main["optionalDependencies"].(map[string]any)
	want := []string{"@toolselect/darwin-arm64", "@toolselect/darwin-x64", "@toolselect/linux-arm64", "@toolselect/linux-x64", "@toolselect/win32-x64"}
	var got []string
	for name, v := range opt {
		got = append(got, name)
		if v != version {
			t.Errorf("%s is pinned at %v, want %s", name, v, version)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("optionalDependencies: %v, want %v", got, want)
	}
	for _, c := range []struct{ plat, os, cpu string }{{"linux-x64", "linux", "x64"}, {"win32-x64", "win32", "x64"}} {
		p := packageJSON(t, filepath.Join(dir, "toolselect-"+c.plat+"-"+version+".tgz"))
		if p["name"] != "@toolselect/"+c.plat || p["version"] != version {
			t.Errorf("%s: %v %v", c.plat, p["name"], p["version"])
		}
		if os, _ := p["os"].([]any); len(os) != 1 || os[0] != c.os {
			t.Errorf("%s: os %v, want [%s]", c.plat, p["os"], c.os)
		}
		if cpu, _ := p["cpu"].([]any); len(cpu) != 1 || cpu[0] != c.cpu {
			t.Errorf("%s: cpu %v, want [%s]", c.plat, p["cpu"], c.cpu)
		}
	}
}

// npmInstall installs tarballs offline into a fresh prefix.
func npmInstall(t *testing.T, tarballs ...string) string {
	t.Helper()
	prefix := t.TempDir()
	args := append([]string{"install", "--offline", "--no-audit", "--no-fund", "--prefix", prefix}, tarballs...)
	cmd := exec.Command("npm", args...)
	cmd.Dir = prefix
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(prefix, ".npm-cache"), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	return prefix
}

func npx(prefix string, args ...string) *exec.Cmd {
	cmd := exec.Command("npx", append([]string{"--offline", "toolselect"}, args...)...)
	cmd.Dir = prefix
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(prefix, ".npm-cache"), "npm_config_update_notifier=false")
	return cmd
}

// Installed offline from the tarballs, `npx toolselect` runs this
// platform's binary: --version, and the MCP proxy answers a client's
// initialize and a find_tool call over stdio through npx.
func TestNPXRunsTheCommandAndTheProxy(t *testing.T) {
	dir := npmPackages(t)
	prefix := npmInstall(t, filepath.Join(dir, "toolselect-"+version+".tgz"), filepath.Join(dir, "toolselect-linux-x64-"+version+".tgz"))
	out, err := npx(prefix, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "toolselect "+version+" (") || !strings.Contains(string(out), "linux/amd64") {
		t.Fatalf("npx toolselect --version: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(prefix, "node_modules", "@toolselect", "win32-x64")); err == nil {
		t.Errorf("npm installed the win32-x64 package on linux: its os/cpu fields did not apply")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	catalog, _ := filepath.Abs(filepath.Join(root, "examples", "catalog.json"))
	client := mcp.NewClient(&mcp.Implementation{Name: "npx-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: npx(prefix, "mcp", "--catalog", catalog)}, nil)
	if err != nil {
		t.Fatalf("initialize through npx: %v", err)
	}
	defer cs.Close()
	if info := cs.InitializeResult().ServerInfo; info == nil || info.Version != version {
		t.Fatalf("server info: %+v", info)
	}
	found := fixtures.FindTool(ctx, t, cs, "send a message to a slack channel", 5)
	if !slices.Contains(found, "send_slack_message") {
		t.Fatalf("find_tool through npx: %v", found)
	}
}

// On a platform with no package, and when npm left the platform package
// out, the bin says what is missing and exits 1.
func TestNPXSaysWhatIsMissing(t *testing.T) {
	dir := npmPackages(t)
	prefix := npmInstall(t, filepath.Join(dir, "toolselect-"+version+".tgz"))
	js := filepath.Join(prefix, "node_modules", "toolselect", "bin", "toolselect.js")
	out, err := exec.Command("node", js, "--version").CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "the package @toolselect/linux-x64, which holds the binary for linux-x64, is not installed") {
		t.Errorf("without the platform package: exit %d\n%s", code, out)
	}
	fake := `Object.defineProperty(process, "platform", {value: "aix"}); process.argv.splice(1, 0, ` + strconvQuote(js) + `); require(` + strconvQuote(js) + `)`
	out, err = exec.Command("node", "-e", fake, "--", "--version").CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "no prebuilt binary for this platform (aix-x64)") ||
		!strings.Contains(string(out), "go install github.com/toolselect/toolselect/cmd/toolselect") {
		t.Errorf("on aix: exit %d\n%s", code, out)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// The four client entries docs/mcp.md gives under "With npx" parse as
// their clients' files, and each one's command line, run through npx from
// the offline install, starts the proxy (its --config path replaced by a
// configuration serving the example catalog).
func TestNPXDocEntries(t *testing.T) {
	dir := npmPackages(t)
	prefix := npmInstall(t, filepath.Join(dir, "toolselect-"+version+".tgz"), filepath.Join(dir, "toolselect-linux-x64-"+version+".tgz"))
	doc, err := os.ReadFile(filepath.Join(root, "docs", "mcp.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n### With npx")
	section, _, _ = strings.Cut(section, "\n### ")
	blocks := strings.Split(section, "```json\n")[1:]
	if len(blocks) != 4 {
		t.Fatalf("docs/mcp.md \"With npx\" has %d JSON blocks, want one per client (4)", len(blocks))
	}
	catalog, _ := filepath.Abs(filepath.Join(root, "examples", "catalog.json"))
	config := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(config, []byte(`{"upstreams": [], "catalogs": [`+strconvQuote(catalog)+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, b := range blocks {
		b, _, _ = strings.Cut(b, "```")
		file := filepath.Join(t.TempDir(), "client.json")
		if err := os.WriteFile(file, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := mcpproxy.LoadConfig(file)
		if err != nil || len(cfg.Upstreams) != 1 {
			t.Fatalf("block %d: %v\n%s", i+1, err, b)
		}
		u := cfg.Upstreams[0]
		if u.Name != "toolselect" || u.Command != "npx" || !slices.Equal(u.Args[:4], []string{"-y", "toolselect", "mcp", "--config"}) || len(u.Args) != 5 {
			t.Fatalf("block %d: entry %+v, want npx -y toolselect mcp --config PATH", i+1, u)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.Command("npx", append(u.Args[:4:4], config)...)
		cmd.Dir = prefix
		cmd.Env = append(os.Environ(), "npm_config_offline=true", "npm_config_cache="+filepath.Join(prefix, ".npm-cache"))
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "doc-entry", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			cancel()
			t.Fatalf("block %d: initialize through %v: %v", i+1, cmd.Args, err)
		}
		found := fixtures.FindTool(ctx, t, cs, "search the logs of a service", 5)
		cs.Close()
		cancel()
		if !slices.Contains(found, "search_logs") {
			t.Fatalf("block %d: find_tool: %v", i+1, found)
		}
	}
}
