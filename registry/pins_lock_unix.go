//go:build unix

package registry

import (
	"os"
	"syscall"
)

// lockDir takes an exclusive advisory lock on dir, which every toolselect
// process saving a pin file there takes too, so that one save's read, merge
// and write never interleaves with another's. The lock is on the directory,
// not the file, because a save replaces the file (a rename).
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
