// Package release_test checks what `make release` and `make npm` ship, on
// the platforms this machine can run: the archives are the same bytes on
// every run and hold what they say, the npm packages install offline and
// start the proxy through npx, and the Windows command and DLL run under
// wine (windows_test.go). The release is built once per test binary, for
// linux/amd64 and windows/amd64 only; `make release-check` builds all five
// platforms and the Python artefacts twice.
package release_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	root    = filepath.Join("..", "..")
	version = func() string {
		b, err := os.ReadFile(filepath.Join("..", "..", "VERSION"))
		if err != nil {
			panic(err)
		}
		return strings.TrimSpace(string(b))
	}()
	// The targets the tests build: this machine's and the one wine runs.
	targets = "linux/amd64 windows/amd64"
	// A fixed SOURCE_DATE_EPOCH, so the two runs agree even if a commit
	// lands between them.
	epoch = int64(1700000000)
)

var (
	tmpRoot     string
	releaseOnce sync.Once
	releaseDir  string
	releaseErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolselect-release-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tmpRoot = dir
	code := m.Run()
	stopWine()
	os.RemoveAll(dir)
	os.Exit(code)
}

// need skips a test whose tool is missing, giving the line that installs
// it; under CI=true (.ci/run installs everything) it fails instead.
func need(t *testing.T, what, install string) {
	t.Helper()
	msg := fmt.Sprintf("needs %s (%s; make test installs it when run as root)", what, install)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: CI=true, and .ci/run should have installed it", msg)
	}
	t.Skip(msg)
}

// runRelease runs packaging/release.sh for the test targets into out.
func runRelease(out string) error {
	cmd := exec.Command("bash", "packaging/release.sh", out)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "RELEASE_TARGETS="+targets, "RELEASE_PYTHON=0",
		"SOURCE_DATE_EPOCH="+strconv.FormatInt(epoch, 10))
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("packaging/release.sh %s: %v\n%s", out, err, b)
	}
	return nil
}

// release builds the test targets' archives once and returns their folder.
func release(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds release archives")
	}
	releaseOnce.Do(func() {
		releaseDir = filepath.Join(tmpRoot, "dist-a")
		releaseErr = runRelease(releaseDir)
	})
	if releaseErr != nil {
		t.Fatal(releaseErr)
	}
	return releaseDir
}

// entry is one file of an archive as the archive records it.
type entry struct {
	name  string
	mode  os.FileMode
	mtime int64
	owner string // "uid:gid uname:gname" for tar; "" for zip
	data  []byte
}

// readTarGz reads a .tar.gz archive's gzip header and entries.
func readTarGz(t *testing.T, path string) (*gzip.Header, []entry) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []entry
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return &gz.Header, out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{h.Name, h.FileInfo().Mode(), h.ModTime.Unix(),
			fmt.Sprintf("%d:%d %s:%s", h.Uid, h.Gid, h.Uname, h.Gname), data})
	}
}

func readZip(t *testing.T, path string) []entry {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var out []entry
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{f.Name, f.Mode(), f.Modified.Unix(), "", data})
	}
	return out
}

// Two runs of the release script write the same bytes, and SHA256SUMS
// lists them.
func TestReleaseIsReproducible(t *testing.T) {
	a := release(t)
	b := filepath.Join(tmpRoot, "dist-b")
	if err := runRelease(b); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(a, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	if len(lines) != 2 {
		t.Fatalf("SHA256SUMS lists %d files, want the 2 archives:\n%s", len(lines), sums)
	}
	for _, line := range lines {
		name := strings.TrimSpace(line[strings.Index(line, " "):])
		x, errA := os.ReadFile(filepath.Join(a, name))
		y, errB := os.ReadFile(filepath.Join(b, name))
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v %v", name, errA, errB)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs (%d and %d bytes)", name, len(x), len(y))
		}
	}
	cmd := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	cmd.Dir = b
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum --check: %v\n%s", err, out)
	}
}

// Each archive holds one folder of its own name with the binary, LICENSE
// and README.md, fixed times and owners; the binary is stripped, built
// with -trimpath and says its version.
func TestArchivesHoldTheCommandLicenseAndReadme(t *testing.T) {
	dist := release(t)
	license, _ := os.ReadFile(filepath.Join(root, "LICENSE"))
	readme, _ := os.ReadFile(filepath.Join(root, "README.md"))
	abs, _ := filepath.Abs(root)
	for _, c := range []struct{ file, exe string }{
		{"toolselect_" + version + "_linux_amd64.tar.gz", "toolselect"},
		{"toolselect_" + version + "_windows_amd64.zip", "toolselect.exe"},
	} {
		path := filepath.Join(dist, c.file)
		var entries []entry
		if strings.HasSuffix(c.file, ".zip") {
			entries = readZip(t, path)
		} else {
			var gz *gzip.Header
			gz, entries = readTarGz(t, path)
			if gz.Name != "" || gz.ModTime.Unix() != epoch {
				t.Fatalf("%s: the gzip header has name %q and time %v; want none and SOURCE_DATE_EPOCH", c.file, gz.Name, gz.ModTime)
			}
			if strings.TrimSuffix(entries[0].name, "/") != strings.TrimSuffix(c.file, ".tar.gz") || !entries[0].mode.IsDir() {
				t.Fatalf("%s: first entry %q, want the folder", c.file, entries[0].name)
			}
			entries = entries[1:]
		}
		folder := strings.TrimSuffix(strings.TrimSuffix(c.file, ".tar.gz"), ".zip")
		want := []string{folder + "/" + c.exe, folder + "/LICENSE", folder + "/README.md"}
		if len(entries) != len(want) {
			t.Fatalf("%s holds %d files, want %v", c.file, len(entries), want)
		}
		for i, e := range entries {
			if e.name != want[i] {
				t.Errorf("%s: entry %d is %q, want %q", c.file, i, e.name, want[i])
			}
			if e.mtime != epoch {
				t.Errorf("%s: %s has time %d, want SOURCE_DATE_EPOCH %d", c.file, e.name, e.mtime, epoch)
			}
			if e.owner != "" && e.owner != "0:0 :" {
				t.Errorf("%s: %s is owned by %q, want 0:0 and no names", c.file, e.name, e.owner)
			}
			perm := os.FileMode(0o644)
			if i == 0 {
				perm = 0o755
			}
			if e.mode.Perm() != perm {
				t.Errorf("%s: %s has mode %v, want %v", c.file, e.name, e.mode.Perm(), perm)
			}
		}
		if !bytes.Equal(entries[1].data, license) || !bytes.Equal(entries[2].data, readme) {
			t.Errorf("%s: LICENSE or README.md is not the repository's", c.file)
		}
		if bytes.Contains(entries[0].data, []byte(abs)) {
			t.Errorf("%s: the binary holds the build folder %s: not built with -trimpath", c.file, abs)
		}
		if c.exe == "toolselect" {
			bin := filepath.Join(t.TempDir(), "toolselect")
			if err := os.WriteFile(bin, entries[0].data, 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Symbols(); !errors.Is(err, elf.ErrNoSymbols) {
				t.Errorf("%s: the binary has a symbol table: not built with -s", c.file)
			}
			if f.Section(".debug_info") != nil {
				t.Errorf("%s: the binary has DWARF: not built with -w", c.file)
			}
			f.Close()
			out, err := exec.Command(bin, "--version").Output()
			if err != nil || !strings.HasPrefix(string(out), "toolselect "+version+" (") {
				t.Errorf("%s: --version says %q (%v), want toolselect %s", c.file, out, err, version)
			}
		}
	}
}
