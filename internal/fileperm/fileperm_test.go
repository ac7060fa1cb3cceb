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
