// Package layers checks the import graph (go list -deps): data flows one
// way, and no package imports one above it (docs/architecture.md).
package layers

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/toolselect/toolselect"

// above lists, for each package, the module packages it must not reach,
// directly or not: the layers above it, and the test fixtures.
var above = map[string][]string{
	"internal/jsonscan":   {"registry", "rank", "selector", "executor", "mcpproxy", "cabi", "internal/par", "internal/telemetry"},
	"internal/strictjson": {"registry", "rank", "selector", "executor", "mcpproxy", "cabi", "internal/par", "internal/telemetry"},
	"internal/par":        {"registry", "rank", "selector", "executor", "mcpproxy", "cabi", "internal/jsonscan", "internal/telemetry"},
	"internal/fileperm":   {"registry", "rank", "selector", "executor", "mcpproxy", "cabi", "internal/jsonscan", "internal/par", "internal/telemetry"},
	"internal/telemetry":  {"registry", "rank", "selector", "executor", "mcpproxy", "cabi", "otelsetup"},
	"otelsetup":           {"registry", "rank", "selector", "executor", "mcpproxy", "cabi", "internal/testing"},
	"":                    {"registry", "rank", "selector", "executor", "mcpproxy", "cabi", "internal", "otelsetup"},
	"registry":            {"rank", "selector", "executor", "mcpproxy", "cabi", "internal/testing", "internal/tools"},
	"rank":                {"selector", "executor", "mcpproxy", "cabi", "internal/testing", "internal/tools"},
	"internal/statestore": {"rank", "selector", "executor", "mcpproxy", "cabi", "internal/testing"},
	"rank/feedbackstore":  {"selector", "executor", "mcpproxy", "cabi", "internal/testing"},
	"rank/embedcache":     {"selector", "executor", "mcpproxy", "cabi", "internal/testing"},
	"selector":            {"rank", "executor", "mcpproxy", "cabi", "internal/testing", "internal/tools"},
	// A program that only registers and runs tools links no ranking (nor its
	// dictionaries) and no selector: the meta-tools and Resolve live above.
	"executor":           {"rank", "selector", "executor/metatool", "executor/chat", "mcpproxy", "cabi", "internal/testing", "internal/tools"},
	"executor/metatool":  {"selector", "executor/chat", "mcpproxy", "cabi", "internal/testing", "internal/tools"},
	"executor/chat":      {"rank", "executor/metatool", "mcpproxy", "cabi", "internal/testing", "internal/tools"},
	"mcpproxy":           {"cabi", "internal/testing", "internal/tools"},
	"selecteval":         {"executor", "mcpproxy", "cabi", "internal/testing", "internal/tools"},
	"cabi/internal/capi": {"mcpproxy", "internal/testing", "internal/tools"},
}

func TestNoPackageImportsUpward(t *testing.T) {
	for pkg, forbidden := range above {
		path := mod
		if pkg != "" {
			path += "/" + pkg
		}
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", path).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", path, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			rel, ok := strings.CutPrefix(dep, mod+"/")
			if !ok || dep == path {
				continue
			}
			for _, f := range forbidden {
				if rel == f || strings.HasPrefix(rel, f+"/") {
					t.Errorf("%s imports %s (a layer above it, or a fixture)", path, dep)
				}
			}
		}
	}
}
