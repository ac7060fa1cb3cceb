package mcpproxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loadConfigText writes body to a file and reads it with LoadConfig.
func loadConfigText(t *testing.T, body string) (*Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "proxy.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return LoadConfig(path)
}

// The JSON configuration gives the timeout as a Go duration string or a
// number of seconds; Config.Timeout is a time.Duration; unknown keys and a
// malformed timeout are errors naming what was wrong; MarshalJSON reads back.
func TestConfigTimeoutJSON(t *testing.T) {
	load := func(body string) (*Config, error) { return loadConfigText(t, body) }
	for body, want := range map[string]time.Duration{
		`{"timeout": "1m30s"}`: 90 * time.Second,
		`{"timeout": 90}`:      90 * time.Second,
		`{"timeout": 0.5}`:     500 * time.Millisecond,
		`{}`:                   0,
	} {
		c, err := load(body)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if c.Timeout != want {
			t.Errorf("%s: Timeout %v, want %v", body, c.Timeout, want)
		}
	}
	for body, want := range map[string]string{
		`{"timeout": "soon"}`: `timeout "soon"`,
		`{"timeout": true}`:   "timeout must be",
		`{"timout": "1s"}`:    `unknown field "timout"`,
	} {
		if _, err := load(body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", body, err, want)
		}
	}
	b, err := json.Marshal(Config{Timeout: 90 * time.Second, Separator: "::"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"timeout":"1m30s"`) {
		t.Errorf("marshalled %s", b)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil || back.Timeout != 90*time.Second || back.Separator != "::" {
		t.Errorf("read back %+v, %v", back, err)
	}
}

// A separator holds only the characters of an MCP tool name: anything else
// would make UPSTREAM+separator+TOOL an invalid tool or prompt name, or a
// namespaced resource URI that does not parse (':' reads as a port).
func TestSeparatorCharacters(t *testing.T) {
	for _, sep := range []string{"__", ".", "-", "_", "--", "x", "_.-"} {
		c := &Config{Separator: sep, Upstreams: []Upstream{{Name: "a", Command: "x"}}}
		if err := c.Validate(); err != nil {
			t.Errorf("separator %q refused: %v", sep, err)
		}
	}
	for _, sep := range []string{":", "::", "/", "__/", " ", " __", "a b", "#", "?", "%", "@", "é", "\t"} {
		c := &Config{Separator: sep, Upstreams: []Upstream{{Name: "a", Command: "x"}}}
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "use only letters, digits, '_', '.' and '-'") || !strings.Contains(err.Error(), strconv.Quote(sep)) {
			t.Errorf("separator %q: %v", sep, err)
		}
	}
	if _, err := New(&Config{Separator: ":"}, nil); err == nil {
		t.Error("New accepted the separator \":\"")
	}
}

// A configuration file is one JSON object: white space may follow it,
// nothing else.
func TestConfigTrailingData(t *testing.T) {
	load := func(body string) error {
		t.Helper()
		path := filepath.Join(t.TempDir(), "proxy.json")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfig(path)
		return err
	}
	for _, body := range []string{`{"timeout": "1s"}`, "{\"timeout\": \"1s\"}\n", "  {}  \n\t\n"} {
		if err := load(body); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
	for _, body := range []string{
		`{"timeout": "1s"}}`,
		`{"timeout": "1s"} {"timeout": "2s"}`,
		"{}\n{}\n",
		`{} x`,
		`{} []`,
		`{} 1`,
	} {
		err := load(body)
		if err == nil || !strings.Contains(err.Error(), "unexpected data after the JSON value") {
			t.Errorf("%q: %v, want it refused", body, err)
		}
	}
}
