package mcpproxy

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// Attacks on the HTTP front door and the proxy's names, each with the
// outcome it must have. Duplicate argument keys through every front door are
// in tests/hardening.

// "localhost" is a name, and a name may resolve to any address: without
// authentication the proxy checks the address it was bound to, so a
// localhost that resolves elsewhere is refused, the listener closed.
func TestAdversarialLocalhostResolvingElsewhere(t *testing.T) {
	var got net.Listener
	listen = func(network, _ string) (net.Listener, error) {
		ln, err := net.Listen(network, "0.0.0.0:0") // what a hostile resolver could give
		got = ln
		return ln, err
	}
	t.Cleanup(func() { listen = net.Listen })
	p := startProxy(t, &Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	served := false
	err := p.ListenAndServe(ctx, "localhost:0", &HTTPOptions{}, func(net.Addr) { served = true })
	if !errors.Is(err, ErrUnauthenticated) || served {
		t.Fatalf("localhost bound to 0.0.0.0 without auth: %v (served %v)", err, served)
	}
	if got == nil {
		t.Fatal("the listener was never opened")
	}
	_ = got.(*net.TCPListener).SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := got.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Error("the refused listener is still open")
	}
	// With a token the same address is served.
	if err := (&HTTPOptions{Token: "0123456789abcdef0123"}).CheckBound("localhost:0", got.Addr()); err != nil {
		t.Errorf("with a token: %v", err)
	}
	if err := (&HTTPOptions{}).CheckBound("localhost:0", &net.TCPAddr{IP: net.IPv6loopback}); err != nil {
		t.Errorf("::1: %v", err)
	}
}

// A bearer token of white space only is a configuration error.
func TestAdversarialBlankToken(t *testing.T) {
	for _, tok := range []string{" ", "\t\n", "   \r\n"} {
		if err := (&HTTPOptions{Token: tok}).Validate(); !errors.Is(err, ErrAuthConfig) {
			t.Errorf("token %q: %v, want ErrAuthConfig", tok, err)
		}
	}
}
