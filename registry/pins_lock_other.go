//go:build !unix

package registry

// lockDir is a no-op where flock is not available: saves within one process
// are still serialised by Pins' mutex.
func lockDir(string) (unlock func(), err error) { return func() {}, nil }
