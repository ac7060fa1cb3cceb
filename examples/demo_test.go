package examples

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `make demo` without an endpoint runs the selection against the scripted
// stand-in and shows each step: the offer, the calls returned and
// validated, a call refused with its violation, and the search round.
func TestDemoOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and the stand-in, and runs the demo")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("the demo is a bash script and bash is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "toolselect")
	build := exec.Command("go", "build", "-o", bin, "./cmd/toolselect")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bash, "examples/demo.sh")
	cmd.Dir = ".."
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LLM_COMMON_TOOL_SELECTION_") && !strings.HasPrefix(kv, "OPENAI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TOOLSELECT_BIN="+bin)
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	if first := strings.SplitN(out, "\n", 2)[0]; first != "scripted stand-in for a model; export LLM_COMMON_TOOL_SELECTION_BASE_URL to use yours" {
		t.Errorf("first line %q, want the one line saying the model is a scripted stand-in", first)
	}
	section := func(title string) string {
		i := strings.Index(out, "== "+title)
		if i < 0 {
			t.Fatalf("no section %q in:\n%s", title, out)
		}
		rest := out[i+3:]
		if j := strings.Index(rest, "\n== "); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	steps := []struct {
		title string
		want  []string
	}{
		{"select: the model (scripted-stand-in) picks the tool calls", []string{
			"offered 11 tools: search_logs, get_metrics",
			"3 calls:",
			`1. get_metrics {"service":"checkout-api","metric":"error_rate","window":"30m"}`,
			`3. send_slack_message {"channel":"#inc-checkout"`,
			"(exit 0)", "passed the tool's schema",
		}},
		{"select: a call with an invalid argument is refused", []string{
			"no calls: selection failed (fail_closed)",
			`rejected get_metrics (invalid_args): invalid arguments for tool "get_metrics": at /window: 'half an hour' does not match pattern '^[0-9]+[mhd]$' (pattern)`,
			"(exit 3)",
		}},
		{"select: the offer is too small", []string{
			`searched "page the on-call engineer of a team": offered`,
			`1. page_oncall {"team":"payments-sre"`,
			"(exit 0)",
		}},
		{"validate: arguments checked", []string{"/window  pattern: 'half an hour' does not match"}},
	}
	for _, s := range steps {
		text := section(s.title)
		for _, w := range s.want {
			if !strings.Contains(text, w) {
				t.Errorf("section %q lacks %q:\n%s", s.title, w, text)
			}
		}
	}
	// The first offer of the search step really lacks the tool the task needs.
	search := section("select: the offer is too small")
	first := search[:strings.Index(search, "if none fits")]
	if !strings.Contains(first, " 2. ") || strings.Contains(first, "page_oncall") {
		t.Errorf("the 2 tools offered first should be ranked and leave page_oncall out:\n%s", first)
	}
}
