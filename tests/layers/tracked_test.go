package layers

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedBytes is the largest file the repository tracks outside test
// data and the embedded dictionaries: anything bigger is build output or
// data that belongs under testdata/.
const maxTrackedBytes = 1 << 20

// bigFileAllowed says where files over maxTrackedBytes may live: test data
// (a testdata folder anywhere) and the dictionaries rank embeds (the
// CC-CEDICT and WordNet tables, the token vocabularies).
func bigFileAllowed(path string) bool {
	return strings.HasPrefix(path, "rank/internal/cedict/") || strings.HasPrefix(path, "rank/internal/wordnet/") || strings.HasPrefix(path, "rank/internal/bpe/") ||
		strings.Contains("/"+path, "/testdata/")
}

// TestNothingBuiltIsTracked fails on a tracked executable binary (ELF,
// Mach-O, PE) anywhere, and on a tracked file over 1 MB outside testdata/
// and the embedded dictionary, naming each file.
func TestNothingBuiltIsTracked(t *testing.T) {
	root := filepath.Join("..", "..")
	files := trackedFiles(t)
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files; is this the repository?", len(files))
	}
	for _, f := range files {
		fi, err := os.Lstat(filepath.Join(root, f))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a symbolic link
		}
		if kind := executableKind(filepath.Join(root, f)); kind != "" {
			t.Errorf("%s is a tracked %s executable: build output is never committed (git rm --cached it; .gitignore should cover it)", f, kind)
		}
		if fi.Size() > maxTrackedBytes && !bigFileAllowed(f) {
			t.Errorf("%s is tracked and %.1f MB (over 1 MB): build output is never committed, test data goes under testdata/", f, float64(fi.Size())/(1<<20))
		}
	}
}

// trackedFiles lists the files git tracks, as paths from the repository's root.
func trackedFiles(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	return strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
}

// executableKind names the executable format of the file at path (ELF,
// Mach-O, PE), or "" when it is none of them.
func executableKind(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := f.Read(head)
	return executableFormat(head[:n])
}

// executableFormat reads the magic numbers of the start of a file.
func executableFormat(b []byte) string {
	if len(b) < 4 {
		return ""
	}
	switch {
	case bytes.HasPrefix(b, []byte("\x7fELF")):
		return "ELF"
	case bytes.HasPrefix(b, []byte{0xfe, 0xed, 0xfa, 0xce}), bytes.HasPrefix(b, []byte{0xfe, 0xed, 0xfa, 0xcf}),
		bytes.HasPrefix(b, []byte{0xce, 0xfa, 0xed, 0xfe}), bytes.HasPrefix(b, []byte{0xcf, 0xfa, 0xed, 0xfe}):
		return "Mach-O"
	case bytes.HasPrefix(b, []byte{0xca, 0xfe, 0xba, 0xbe}) && len(b) >= 8 && binary.BigEndian.Uint32(b[4:8]) < 32:
		return "Mach-O" // a universal binary (a Java class file has its version there, above 32)
	case bytes.HasPrefix(b, []byte("MZ")) && len(b) >= 0x40:
		// A PE file: the DOS header's e_lfanew points at "PE\0\0".
		off := binary.LittleEndian.Uint32(b[0x3c:0x40])
		if int(off)+4 <= len(b) && bytes.Equal(b[off:off+4], []byte("PE\x00\x00")) {
			return "PE"
		}
	}
	return ""
}

// The magic numbers are read as each format defines them: a Go-built ELF,
// a Mach-O and a universal header, a PE with its DOS stub; text is none.
func TestExecutableFormat(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if kind := executableKind(self); kind != "ELF" && kind != "Mach-O" && kind != "PE" {
		t.Errorf("the test binary itself reads as %q", kind)
	}
	pe := make([]byte, 0x80)
	copy(pe, "MZ")
	binary.LittleEndian.PutUint32(pe[0x3c:], 0x40)
	copy(pe[0x40:], "PE\x00\x00")
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{[]byte("\x7fELF\x02\x01\x01"), "ELF"},
		{[]byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1}, "Mach-O"},
		{[]byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2}, "Mach-O"},
		{[]byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 0x41}, ""},
		{pe, "PE"},
		{append([]byte("MZ is a text file that starts like a DOS header"), make([]byte, 64)...), ""},
		{[]byte("package layers\n"), ""},
	} {
		if got := executableFormat(c.b); got != c.want {
			t.Errorf("% x...: got %q, want %q", c.b[:8], got, c.want)
		}
	}
}
