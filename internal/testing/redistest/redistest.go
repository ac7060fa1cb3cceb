// Package redistest starts a real redis-server for tests: one place for the
// command line, the free port and the wait, shared by every package whose
// tests need Redis (the embedding cache, the feedback store).
package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Start runs redis-server on a free loopback port with no persistence and
// returns its address (127.0.0.1:PORT). The server is stopped when the test
// ends. Without redis-server on PATH the test is skipped, saying how to
// install it (make test installs it when run as root).
func Start(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (apt-get install -y redis-server; make test installs it when run as root)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("redis-server did not start on %s", addr)
	return ""
}
