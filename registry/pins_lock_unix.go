//go:build unix

package registry

import (
	"errors"
	"os"
	"syscall"
)

// lockDir takes an exclusive advisory lock on dir, which every toolselect
// process saving a pin file there takes too, so that one save's read, merge
// and write never interleaves with another's. The lock is on the directory,
// not the file, because a save replaces the file (a rename). Where the file
// system has no such locks (some network file systems), saves go on
// unlocked: within one process Pins' mutex still serialises them.
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
	if errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EINVAL) {
		f.Close()
		return func() {}, nil
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
