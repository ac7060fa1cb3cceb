package fileperm

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestCheckRefusesFilesOthersMayWrite(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("mode bits do not say who may write a file on Windows")
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, Private); err != nil {
		t.Fatal(err)
	}
	for mode, refused := range map[os.FileMode]bool{0o600: false, 0o644: false, 0o400: false, 0o620: true, 0o602: true, 0o666: true} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		err = Check(path, fi)
		if (err != nil) != refused {
			t.Fatalf("mode %04o: refused %v, want %v (%v)", mode, err != nil, refused, err)
		}
		if refused && (!strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "chmod go-w "+path)) {
			t.Fatalf("mode %04o: the error names neither the file nor the fix: %v", mode, err)
		}
	}
}

// WritePrivate leaves a file its owner alone may read, over a file others
// could read (0644) or write, and replaces a symbolic link instead of
// writing through it.
func TestWritePrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("mode bits do not say who may read a file on Windows")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "cfg.json")
	for _, mode := range []os.FileMode{0o644, 0o666, 0o600} {
		if err := os.WriteFile(path, []byte("old"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if err := WritePrivate(path, []byte("secret")); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != "secret" || fi.Mode().Perm() != Private {
			t.Errorf("over a %04o file: %q, mode %04o", mode, b, fi.Mode().Perm())
		}
	}
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte("untouched"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WritePrivate(link, []byte("secret")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "untouched" {
		t.Errorf("wrote through the link: %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink != 0 || fi.Mode().Perm() != Private {
		t.Errorf("the link was not replaced by a private file: %v %v", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("temporary files left: %v", entries)
	}
}
