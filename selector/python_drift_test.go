package selector

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPythonReadsEveryVariable guards the Python package against drifting
// from this package: ToolSelectionConfig.from_env (or, for the endpoint, the
// selector at call time) must read every variable ConfigFromEnv reads. It
// once lacked LLM_COMMON_TOOL_SELECTION_MODE and _MAX_RESPONSE_BYTES.
func TestPythonReadsEveryVariable(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "python", "toolselect", "*.py"))
	if err != nil || len(files) == 0 {
		t.Skipf("python package not found: %v", err)
	}
	var src strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	py := src.String()
	const prefix = "LLM_COMMON_TOOL_SELECTION_"
	for field, info := range configFields {
		for _, env := range strings.Split(info.env, " or ") {
			// Python code spells a variable as a string literal, in full or
			// as the suffix after its ENV_PREFIX constant: get("MODE"),
			// ("MAX_CALLS", 1, 20). Docstrings do not count.
			name := regexp.QuoteMeta(env)
			if suffix := strings.TrimPrefix(env, prefix); suffix != env {
				name += "|" + regexp.QuoteMeta(suffix)
			}
			if !regexp.MustCompile(`["'](` + name + `)["']`).MatchString(py) {
				t.Errorf("%s (%s) is read by ConfigFromEnv but nowhere in python/toolselect", env, field)
			}
		}
	}
}
