package examples

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `make eval-demo` without an endpoint scores the scripted stand-in on the
// 24 example tasks (it gets four wrong on purpose) and writes the report.
func TestEvalDemoOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and the stand-in, and runs the demo")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("the demo is a bash script and bash is not on PATH")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "toolselect")
	build := exec.Command("go", "build", "-o", bin, "./cmd/toolselect")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	report := filepath.Join(dir, "report.html")
	cmd := exec.Command(bash, "examples/eval-demo.sh")
	cmd.Dir = ".."
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LLM_COMMON_TOOL_SELECTION_") && !strings.HasPrefix(kv, "OPENAI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TOOLSELECT_BIN="+bin, "REPORT="+report)
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("eval-demo: %v\n%s", err, out)
	}
	for _, want := range []string{
		"scoring the scripted stand-in only; export LLM_COMMON_TOOL_SELECTION_BASE_URL to score your model too",
		"candidate          model              tasks  exact  tools  fail-closed  dropped",
		"scripted-stand-in  scripted-stand-in     24  83.3%  91.7%         0.0%        0",
		"report: " + report,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("eval-demo output lacks %q:\n%s", want, out)
		}
	}
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "missing call to search_logs") {
		t.Errorf("the report lacks the failed triage task")
	}
}
