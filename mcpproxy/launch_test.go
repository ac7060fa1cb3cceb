package mcpproxy

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// launchProxy builds a proxy, launches it, waits for it to be ready and
// returns it with the upstreams' states then; it closes with the test.
func launchProxy(t *testing.T, cfg *Config) (*Proxy, []upstreamStats) {
	t.Helper()
	grace := startGrace
	startGrace = 200 * time.Millisecond // the slow upstream below takes longer
	t.Cleanup(func() { startGrace = grace })
	p, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if err := p.Launch(context.Background()); err != nil {
		t.Fatal(err)
	}
	ups, _ := p.WaitReady(context.Background())
	return p, ups
}

// One hung upstream holds nothing up: WaitReady returns, the grace after
// the first upstream was ready, with that one served and the hung one still
// starting, and the client is answered (initialize, find_tool).
func TestLaunchDoesNotWaitForAHungUpstream(t *testing.T) {
	mute := testUpstream(t, "mute")
	mute.Env["TOOLSELECT_TEST_VARIANT"] = "mute"
	p, ups := launchProxy(t, &Config{Upstreams: []Upstream{mute, echoUpstream(t, "fs", "read_file")}})
	states := map[string]string{}
	for _, u := range ups {
		states[u.Name] = u.State
	}
	if states["fs"] != StateReady || states["mute"] != StateStarting {
		t.Fatalf("after WaitReady: %v", states)
	}
	cs := connectMemory(t, p, "")
	if got := find(t, cs, "read file", 5); !slices.Contains(got, "fs__read_file") {
		t.Errorf("the ready upstream is not served: %v", got)
	}
	if s := p.Stats(context.Background()); s.Upstreams[0].State != StateStarting {
		t.Errorf("stats: the hung upstream is %q, want starting", s.Upstreams[0].State)
	}
}

// A slow upstream joins when it is ready, and the client is told with
// notifications/tools/list_changed; a call to its tool made meanwhile waits
// for its start.
func TestLaunchSlowUpstreamJoins(t *testing.T) {
	slow := testUpstream(t, "zoo")
	slow.Env["TOOLSELECT_TEST_VARIANT"] = "slow"
	slow.Env["TOOLSELECT_TEST_DELAY"] = "1500ms"
	p, _ := launchProxy(t, &Config{Upstreams: []Upstream{slow, echoUpstream(t, "fs", "read_file")}})
	changed := make(chan struct{}, 8)
	cs := connectSession(t, p, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}}, "")
	if got := find(t, cs, "zebra stripes counter", 5); slices.Contains(got, "zoo__zebra_stripes_counter") {
		t.Skip("the slow upstream was ready before the client looked (a loaded machine)")
	}
	// A call made before it joined waits for its start.
	if res := call(t, cs, "call_tool", map[string]any{"name": "zoo__zebra_stripes_counter", "arguments": map[string]any{}}); res.IsError {
		t.Errorf("a call while the upstream starts: %s", text(res))
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/tools/list_changed when the slow upstream joined")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(find(t, cs, "zebra stripes counter", 5), "zoo__zebra_stripes_counter") {
		if time.Now().After(deadline) {
			t.Fatal("the slow upstream's tool never became findable")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// An HTTP upstream that dies shows as down in stats: nothing ends with it
// as a stdio child's pipes end, so Stats asks it.
func TestDeadHTTPUpstreamIsDown(t *testing.T) {
	inner := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}})
	srv := httptest.NewServer(inner.HTTPHandler(nil))
	p := startProxy(t, &Config{Upstreams: []Upstream{{Name: "remote", URL: srv.URL + "/mcp"}}})
	if s := p.Stats(context.Background()); s.Upstreams[0].State != StateReady {
		t.Fatalf("before: %+v", s.Upstreams[0])
	}
	srv.CloseClientConnections()
	srv.Close()
	s := p.Stats(context.Background())
	if s.Upstreams[0].State != StateDown || !strings.Contains(s.Upstreams[0].LastError, "stopped answering") {
		t.Fatalf("a dead HTTP upstream: %+v", s.Upstreams[0])
	}
}

// A call to an HTTP upstream that times out asks whether the upstream is
// still alive. Protocol 2026-07-28 has no ping (what the SDK's Ping sends
// such a server is refused), so a healthy upstream must not be dropped for
// a slow call: its server is asked whether it answers at all.
func TestSlowCallDoesNotDropAHealthyHTTPUpstream(t *testing.T) {
	inner := startProxy(t, &Config{Upstreams: []Upstream{testUpstream(t, "t")}, Keep: []string{"t__sleep"}})
	srv := httptest.NewServer(inner.HTTPHandler(nil))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() }) // after the proxy's own cleanup
	p := startProxy(t, &Config{Upstreams: []Upstream{{Name: "remote", URL: srv.URL + "/mcp"}}, Timeout: 300 * time.Millisecond})
	cs := connectMemory(t, p, "")
	res := call(t, cs, "call_tool", map[string]any{"name": "remote__t__sleep", "arguments": map[string]any{"ms": 1500}})
	if !res.IsError || !strings.Contains(text(res), "timed out") {
		t.Fatalf("the slow call: %s", text(res))
	}
	time.Sleep(2500 * time.Millisecond) // the check after the timeout, done
	if s := p.Stats(context.Background()); s.Upstreams[0].State != StateReady || s.Upstreams[0].Connects != 1 {
		t.Fatalf("a healthy HTTP upstream after a slow call: %+v", s.Upstreams[0])
	}
	if res := call(t, cs, "call_tool", map[string]any{"name": "remote__t__sleep", "arguments": map[string]any{"ms": 1}}); res.IsError {
		t.Errorf("after the slow call: %s", text(res))
	}
}
