package mcpproxy

import (
	"slices"
	"strings"
	"testing"
)

// The environment a stdio upstream gets: the platform's default set, the
// names passed, the entry's env; never the rest, never TOOLSELECT_*.
func TestChildEnv(t *testing.T) {
	environ := []string{"HOME=/home/u", "PATH=/usr/bin", "USER=u", "LOGNAME=u", "SHELL=/bin/sh", "TERM=xterm",
		"TOOLSELECT_MCP_AUTH_TOKEN=proxy-secret", "GITHUB_TOKEN=ghp_x", "OPENAI_API_KEY=sk-x", "BRAVE_API_KEY=b",
		"LANG=C.UTF-8", "toolselect_mcp_auth_token=lower"}
	got := childEnv(environ, "linux", []string{"BRAVE_API_KEY", "TOOLSELECT_MCP_AUTH_TOKEN", "NOT_SET"}, map[string]string{"PATH": "/opt/node/bin", "MEMORY_FILE_PATH": "/tmp/m"})
	want := []string{"HOME=/home/u", "USER=u", "LOGNAME=u", "SHELL=/bin/sh", "TERM=xterm", "BRAVE_API_KEY=b", "MEMORY_FILE_PATH=/tmp/m", "PATH=/opt/node/bin"}
	if !slices.Equal(got, want) {
		t.Errorf("linux:\n got %q\nwant %q", got, want)
	}

	// An exported shell function among the defaults is left out, as the
	// reference SDKs leave it out.
	if got := childEnv([]string{"TERM=() { :; }; echo pwned", "HOME=/h"}, "linux", nil, nil); !slices.Equal(got, []string{"HOME=/h"}) {
		t.Errorf("function value: %q", got)
	}

	// Windows: its own set, names matched without regard to case.
	win := []string{"Path=C:\\Windows", "SystemRoot=C:\\Windows", "USERPROFILE=C:\\Users\\u", "HOME=C:\\h", "Toolselect_MCP_Auth_Token=t",
		"=C:=C:\\", "APPDATA=C:\\a", "github_token=g"}
	got = childEnv(win, "windows", []string{"GITHUB_TOKEN"}, map[string]string{"TEMP": "C:\\t"})
	want = []string{"Path=C:\\Windows", "SystemRoot=C:\\Windows", "USERPROFILE=C:\\Users\\u", "APPDATA=C:\\a", "github_token=g", "TEMP=C:\\t"}
	if !slices.Equal(got, want) {
		t.Errorf("windows:\n got %q\nwant %q", got, want)
	}

	// Nothing in, nothing out, and never nil (exec.Cmd reads a nil Env as
	// the whole of the proxy's).
	if got := childEnv(nil, "linux", nil, nil); got == nil || len(got) != 0 {
		t.Errorf("empty: %#v", got)
	}
}

// passEnv takes variable names, never the proxy's own.
func TestPassEnvValidation(t *testing.T) {
	for _, tc := range []struct {
		up   Upstream
		want string // "" for valid
	}{
		{Upstream{Name: "a", Command: "x", PassEnv: []string{"GITHUB_TOKEN", "_X1"}}, ""},
		{Upstream{Name: "a", Command: "x", PassEnv: []string{"TOOLSELECT_MCP_AUTH_TOKEN"}}, `passEnv[0] "TOOLSELECT_MCP_AUTH_TOKEN": the proxy's own TOOLSELECT_* variables`},
		{Upstream{Name: "a", Command: "x", PassEnv: []string{"OK", "toolselect_x"}}, `passEnv[1] "toolselect_x"`},
		{Upstream{Name: "a", Command: "x", PassEnv: []string{"A=B"}}, `passEnv[0] "A=B" is not an environment variable's name`},
		{Upstream{Name: "a", URL: "http://127.0.0.1:1/mcp", PassEnv: []string{"A"}}, "passEnv needs command"},
	} {
		err := (&Config{Upstreams: []Upstream{tc.up}}).Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.up.PassEnv, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.up.PassEnv, err, tc.want)
		}
	}
}
