// Package fileperm holds the one rule for files that decide what runs or
// hold what users typed (pin files, feedback stores): they are created
// readable and writable by their owner only, and an existing one that its
// group or everyone may write is refused, since whoever can write it can
// approve a tool or steer the ranking.
package fileperm

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Private is the mode such files are created with.
const Private fs.FileMode = 0o600

// Check refuses fi (the file at path) when its group or everyone may write
// it, with the chmod that fixes it. On Windows, where the mode bits do not
// say who may write a file, it accepts every file.
func Check(path string, fi fs.FileInfo) error {
	if runtime.GOOS == "windows" || fi == nil {
		return nil
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s is writable by its group or by everyone (mode %04o), so anyone who can write it decides what it holds; refusing it: run chmod go-w %s", path, perm, path)
	}
	return nil
}

// WritePrivate writes data to path readable and writable by its owner only,
// whatever mode a file already at path had: it writes a new file beside it
// (created with mode [Private]) and renames it over path, so that no
// moment exists in which the content is in a file others may read, and a
// reader never sees half of it. A symbolic link at path is replaced, not
// followed.
func WritePrivate(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	// CreateTemp creates 0600 files; Chmod says so where a umask or a
	// platform might not.
	if err := tmp.Chmod(Private); err != nil && runtime.GOOS != "windows" {
		return fail(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
