// Package fileperm holds the one rule for files that decide what runs or
// hold what users typed (pin files, feedback stores): they are created
// readable and writable by their owner only, and an existing one that its
// group or everyone may write is refused, since whoever can write it can
// approve a tool or steer the ranking.
package fileperm

import (
	"fmt"
	"io/fs"
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
