package mcpproxy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// findWithheld runs find_tool for query and returns the tools' names, the
// withheld counts and the whole answer.
func findWithheld(t *testing.T, cs *mcp.ClientSession, query string) (names []string, withheld map[string]float64, raw string) {
	t.Helper()
	res := call(t, cs, rank.FindToolName, map[string]any{"query": query, "limit": 10})
	var out struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Withheld map[string]float64 `json:"withheld"`
	}
	if err := json.Unmarshal([]byte(text(res)), &out); err != nil {
		t.Fatalf("find_tool %q: %v: %s", query, err, text(res))
	}
	for _, f := range out.Tools {
		names = append(names, f.Name)
	}
	return names, out.Withheld, text(res)
}

// Per-tool rules against the real server-filesystem, with the destructive
// mode left at deny: an ask rule makes write_file findable and asked about
// through a client that declares elicitation (refused, saying why, through
// one that does not); a deny rule withholds the read-only read tools from
// find_tool (counted "denied by rule", never named) and refuses calling
// them; a destructive tool no rule names stays refused unasked although
// the proxy now has an approver.
func TestPermissionsRulesThroughTheRealClient(t *testing.T) {
	ups, fsDir := realPeers(t)
	p := startProxy(t, &Config{Upstreams: ups[1:2], Permissions: registry.ToolRules{
		Ask:  []string{"filesystem__write_file"},
		Deny: []string{"filesystem__read_*"},
	}})
	var asked atomic.Int32
	var msg atomic.Value
	accept := connectSession(t, p, elicitingClient("accept", &asked, &msg), "2025-11-25")

	names, withheld, raw := findWithheld(t, accept, "write a file")
	if !strings.Contains(strings.Join(names, ","), "filesystem__write_file") {
		t.Fatalf("write_file, asked by rule, is not findable: %s", raw)
	}
	names, withheld, raw = findWithheld(t, accept, "read the contents of a file")
	for _, n := range names {
		if strings.HasPrefix(n, "filesystem__read_") {
			t.Fatalf("a denied tool is findable: %s", raw)
		}
	}
	if withheld["denied by rule"] < 1 || strings.Contains(raw, "read_text_file") || strings.Contains(raw, "read_file\"") {
		t.Fatalf("find_tool must count the denied matches, never name them: %s", raw)
	}

	target := filepath.Join(fsDir, "ruled.txt")
	res := call(t, accept, rank.CallToolName, map[string]any{"name": "filesystem__write_file",
		"arguments": map[string]any{"path": target, "content": "approved"}})
	if res.IsError || asked.Load() != 1 {
		t.Fatalf("ask rule, accepted: isError %v, asked %d: %s", res.IsError, asked.Load(), text(res))
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "approved" {
		t.Fatalf("the file after accept: %q %v", b, err)
	}

	res = call(t, accept, rank.CallToolName, map[string]any{"name": "filesystem__read_text_file",
		"arguments": map[string]any{"path": filepath.Join(fsDir, "hello.txt")}})
	if !res.IsError || strings.Contains(text(res), "hello from") || !strings.Contains(text(res), "permissions.deny") {
		t.Fatalf("a read-only tool a deny rule names ran or says nothing of the rule: %s", text(res))
	}

	// move_file is destructive and no rule names it: the mode (deny) holds,
	// nobody is asked although ask rules gave the proxy an approver.
	res = call(t, accept, rank.CallToolName, map[string]any{"name": "filesystem__move_file",
		"arguments": map[string]any{"source": target, "destination": target + ".moved"}})
	if !res.IsError || asked.Load() != 1 || !strings.Contains(text(res), "--destructive") {
		t.Fatalf("an unnamed destructive tool: isError %v, asked %d: %s", res.IsError, asked.Load(), text(res))
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("move_file ran: %v", err)
	}

	plain := connectSession(t, p, nil, "2025-11-25")
	res = call(t, plain, rank.CallToolName, map[string]any{"name": "filesystem__write_file",
		"arguments": map[string]any{"path": target, "content": "unasked"}})
	if !res.IsError || !strings.Contains(text(res), "did not declare the elicitation capability") {
		t.Fatalf("a client without elicitation: %s", text(res))
	}
	if b, _ := os.ReadFile(target); string(b) != "approved" {
		t.Fatalf("a client without elicitation wrote the file: %q", b)
	}
}

// An allow rule runs a destructive tool unasked under --destructive ask,
// while the other destructive tools are still asked; deny beats allow for
// the same tool; a read-only tool an ask rule names is asked about too.
func TestPermissionsAllowAskDenyPrecedence(t *testing.T) {
	up := echoUpstream(t, "ed", "read_note", "!write_note", "!drop_table", "!wipe_all")
	p := startProxy(t, &Config{Upstreams: []Upstream{up}, Destructive: destructiveAsk, Permissions: registry.ToolRules{
		Allow: []string{"ed__write_note", "ed__wipe_all"},
		Ask:   []string{"ed__read_*"},
		Deny:  []string{"ed__wipe_*"},
	}})
	var asked atomic.Int32
	var msg atomic.Value
	cs := connectSession(t, p, elicitingClient("decline", &asked, &msg), "2025-11-25")
	args := map[string]any{"path": "/safe/x"}
	run := func(name string) *mcp.CallToolResult {
		return call(t, cs, rank.CallToolName, map[string]any{"name": name, "arguments": args})
	}
	if res := run("ed__write_note"); res.IsError || asked.Load() != 0 {
		t.Fatalf("allowed destructive tool: isError %v, asked %d: %s", res.IsError, asked.Load(), text(res))
	}
	if res := run("ed__read_note"); !res.IsError || asked.Load() != 1 || !strings.Contains(text(res), "approval denied") {
		t.Fatalf("read-only tool under an ask rule, declined: asked %d: %s", asked.Load(), text(res))
	}
	if m, _ := msg.Load().(string); !strings.Contains(m, "permissions.ask rule") || !strings.Contains(m, "ed__read_note") {
		t.Fatalf("the user is not told why a read-only tool is asked about:\n%s", m)
	}
	if res := run("ed__drop_table"); !res.IsError || asked.Load() != 2 {
		t.Fatalf("unnamed destructive tool under --destructive ask, declined: asked %d: %s", asked.Load(), text(res))
	}
	if res := run("ed__wipe_all"); !res.IsError || asked.Load() != 2 || !strings.Contains(text(res), "denied by a rule") {
		t.Fatalf("deny and allow both name wipe_all: deny must win, unasked: asked %d: %s", asked.Load(), text(res))
	}
	if names, withheld, raw := findWithheld(t, cs, "wipe all"); len(names) > 0 && names[0] == "ed__wipe_all" || withheld["denied by rule"] != 1 || strings.Contains(raw, "wipe_all") {
		t.Fatalf("find_tool and the denied tool: %s", raw)
	}
}

// An upstream cannot dodge a rule by the name it gives its tool: a tool
// named in capitals is still denied or asked about (deny and ask rules
// match whatever the case), and a name made of glob metacharacters is
// matched as those characters, never read as a pattern that would match
// other tools or escape one.
func TestPermissionsAttackerNames(t *testing.T) {
	up := echoUpstream(t, "ev", "DELETE_ALL", "Read_Secrets", "*", "safe_[x]")
	p := startProxy(t, &Config{Upstreams: []Upstream{up}, Destructive: destructiveAllow, Permissions: registry.ToolRules{
		Deny: []string{"ev__delete_all", "ev__read_secrets"},
		// Quoting: this names the tool called "safe_[x]" only.
		Allow: []string{`ev__safe_\[x\]`},
		Ask:   []string{`ev__\*`},
	}})
	cs := connectSession(t, p, nil, "2025-11-25")
	for _, name := range []string{"ev__DELETE_ALL", "ev__Read_Secrets"} {
		res := call(t, cs, rank.CallToolName, map[string]any{"name": name, "arguments": map[string]any{"path": "/safe/x"}})
		if !res.IsError || !strings.Contains(text(res), "denied by a rule") {
			t.Fatalf("%s dodged its deny rule by case: %s", name, text(res))
		}
	}
	// "*" is asked about (its quoted rule), and this client cannot be asked.
	res := call(t, cs, rank.CallToolName, map[string]any{"name": "ev__*", "arguments": map[string]any{"path": "/safe/x"}})
	if !res.IsError || !strings.Contains(text(res), "elicitation") {
		t.Fatalf(`the tool named "*": %s`, text(res))
	}
	if res := call(t, cs, rank.CallToolName, map[string]any{"name": "ev__safe_[x]", "arguments": map[string]any{"path": "/safe/x"}}); res.IsError {
		t.Fatalf("the allowed tool with brackets in its name: %s", text(res))
	}
}

// A rule never serves a held tool: a catalog tool whose definition changed
// since it was pinned stays held, unfindable, whatever an allow rule says;
// a rule matching nothing is warned about at start, naming it.
func TestPermissionsDoNotServeHeldToolsAndUnmatchedAreWarned(t *testing.T) {
	var logs syncBuffer
	p, _ := heldCatalogProxyWith(t, &logs, func(c *Config) {
		c.Permissions = registry.ToolRules{Allow: []string{"zebra_*", "lion_mane"}, Deny: []string{"tiger_*"}}
	})
	found, err := p.FindTool(context.Background(), "zebra stripes", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 && found[0].Name == "zebra_stripes" {
		t.Fatal("an allow rule served the held tool")
	}
	if held := p.Stats(context.Background()).Pins.Held; len(held) != 1 || held[0].Tool != "zebra_stripes" {
		t.Fatalf("held %+v", held)
	}
	out := logs.String()
	if !strings.Contains(out, `permissions rule matches no tool`) || !strings.Contains(out, `deny[0] \"tiger_*\"`) {
		t.Fatalf("the unmatched rule is not warned about:\n%s", out)
	}
	if strings.Contains(out, `zebra_*`) || strings.Contains(out, `lion_mane\"`) {
		t.Fatalf("a rule that matches a tool (served or held) was warned about:\n%s", out)
	}
}

// The configuration file: "permissions" with "allow", "ask" and "deny";
// a pattern path.Match cannot read is an error naming it; an unknown key
// inside permissions (a misspelt list, or "unsafe", which is the
// destructive mode's) is an error.
func TestPermissionsConfig(t *testing.T) {
	load := func(body string) (*Config, error) { return loadConfigText(t, body) }
	c, err := load(`{"permissions": {"allow": ["fs__read_*"], "ask": ["fs__write_*"], "deny": ["fs__delete"]}, "destructive": "ask"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := registry.ToolRules{Allow: []string{"fs__read_*"}, Ask: []string{"fs__write_*"}, Deny: []string{"fs__delete"}}
	if got := c.Permissions; strings.Join(got.Allow, ",") != "fs__read_*" || strings.Join(got.Ask, ",") != "fs__write_*" || strings.Join(got.Deny, ",") != "fs__delete" {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	b, err := json.Marshal(c)
	if err != nil || !strings.Contains(string(b), `"permissions":{"allow":["fs__read_*"],"ask":["fs__write_*"],"deny":["fs__delete"]}`) {
		t.Fatalf("written back: %s %v", b, err)
	}
	for body, want := range map[string]string{
		`{"permissions": {"deny": ["fs__[write"]}}`: `permissions.deny[0] "fs__[write": syntax error in pattern`,
		`{"permissions": {"deny": [""]}}`:           `permissions.deny[0]: an empty pattern`,
		`{"permissions": {"denied": ["x"]}}`:        `denied`,
		`{"permissions": {"unsafe": "allow"}}`:      `unsafe`,
		`{"permissions": {"allow": "fs__*"}}`:       `permissions.allow`,
	} {
		if _, err := load(body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	if b, _ := json.Marshal(&Config{}); strings.Contains(string(b), "permissions") {
		t.Errorf("no rules, yet written: %s", b)
	}
}
