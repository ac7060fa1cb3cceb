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

// One hung upstream holds nothing up: WaitReady returns with the upstream
// that is ready served and the hung one still starting, and the client is
// answered (initialize, find_tool) at once.
func TestLaunchDoesNotWaitForAHungUpstream(t *testing.T) {
	mute := testUpstream(t, "mute")
	mute.Env["TOOLSELECT_TEST_VARIANT"] = "mute"
	p, err := New(&Config{Upstreams: []Upstream{mute, echoUpstream(t, "fs", "read_file")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if err := p.Launch(context.Background()); err != nil {
		t.Fatal(err)
	}
	ups, _ := p.WaitReady(context.Background())
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
// notifications/tools/list_changed.
func TestLaunchSlowUpstreamJoins(t *testing.T) {
	slow := testUpstream(t, "zoo")
	slow.Env["TOOLSELECT_TEST_VARIANT"] = "slow"
	slow.Env["TOOLSELECT_TEST_DELAY"] = "700ms"
	p, err := New(&Config{Upstreams: []Upstream{slow, echoUpstream(t, "fs", "read_file")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if err := p.Launch(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.WaitReady(context.Background())
	changed := make(chan struct{}, 8)
	cs := connectSession(t, p, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}}, "")
	if got := find(t, cs, "zebra stripes counter", 5); slices.Contains(got, "zoo__zebra_stripes_counter") {
		t.Skip("the slow upstream was ready before the client looked (a loaded machine)")
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
