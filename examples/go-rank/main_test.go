package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The example runs as the README says (go run ./examples/go-rank from the
// repository root) and each step prints what the README promises: a reason in
// the tool's words, the miss that motivates the offer budget, a prefilter's
// picks, and find_tool / call_tool answered by the executor.
func TestGoRankRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example with go run")
	}
	cmd := exec.Command("go", "run", "./examples/go-rank")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	for _, want := range []string{
		"catalog: 24 tools",
		"get_weather 0.46 (bm25 score 0.458; matched weather, forecast, days (related to 'tomorrow'))",
		`rank "do I pack a parapluie for Lyon?": 0 picks`,
		"prefilter offers: translate_text",
		"meta-tools: find_tool, call_tool",
		`find_tool -> [{"name":"get_weather"`,
		"call_tool -> light rain in Lyon, 14°C",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
