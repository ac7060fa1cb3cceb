package layers

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// thirdParty names, for each module the library imports directly, what the
// architecture table (docs/architecture.md) calls it.
var thirdParty = map[string]string{
	"github.com/santhosh-tekuri/jsonschema":  "santhosh-tekuri/jsonschema",
	"github.com/google/jsonschema-go":        "google/jsonschema-go",
	"golang.org/x/text":                      "golang.org/x/text",
	"github.com/kljensen/snowball":           "snowball",
	"github.com/sashabaranov/go-openai":      "go-openai",
	"github.com/tiktoken-go/tokenizer":       "tiktoken-go",
	"github.com/dlclark/regexp2":             "regexp2",
	"github.com/redis/go-redis":              "go-redis",
	"github.com/caarlos0/env":                "caarlos0/env",
	"github.com/go-playground/validator":     "go-playground/validator",
	"go.opentelemetry.io/otel":               "OpenTelemetry",
	"github.com/modelcontextprotocol/go-sdk": "MCP Go SDK",
	"github.com/prometheus/client_golang":    "Prometheus",
	"github.com/tailscale/hujson":            "hujson",
	"google.golang.org/protobuf":             "protowire",
}

var backticked = regexp.MustCompile("`([^`]+)`")

// TestReadmeArchitectureImports keeps the architecture table of
// docs/architecture.md true:
// each Go package a row names lists exactly the project packages it imports
// (the root package is `toolselect`) and every module it imports directly.
func TestReadmeArchitectureImports(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	covered := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		var pkgs []string
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			if strings.HasSuffix(m[1], "/") { // a folder; other backticked words are names
				pkgs = append(pkgs, strings.TrimSuffix(m[1], "/"))
			}
		}
		if !goPackages(pkgs) {
			continue // python/, tests/, examples/, the fixtures' folder
		}
		rows++
		for _, p := range pkgs {
			covered[p] = true
		}
		listed := cells[3]
		mentioned := map[string]bool{}
		for _, m := range backticked.FindAllStringSubmatch(listed, -1) {
			mentioned[m[1]] = true
		}
		imported := map[string]bool{}
		for _, pkg := range pkgs {
			cmd := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "./"+pkg)
			cmd.Dir = filepath.Join("..", "..")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go list %s: %v\n%s", pkg, err, out)
			}
			for _, imp := range strings.Fields(string(out)) {
				switch {
				case imp == mod:
					imported["toolselect"] = true
				case strings.HasPrefix(imp, mod+"/"):
					imported[strings.TrimPrefix(imp, mod+"/")] = true
				case strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
					name := ""
					for m, n := range thirdParty {
						if imp == m || strings.HasPrefix(imp, m+"/") {
							name = n
						}
					}
					if name == "" {
						t.Errorf("%s imports %s: add its module to thirdParty in this test and to the row of docs/architecture.md", pkg, imp)
					} else if !strings.Contains(listed, name) {
						t.Errorf("docs/architecture.md: the %s row does not name %s (%s)", cells[1], name, imp)
					}
				}
			}
		}
		for p := range imported {
			if !mentioned[p] {
				t.Errorf("docs/architecture.md: the %s row does not list `%s`, which it imports", strings.TrimSpace(cells[1]), p)
			}
		}
		for p := range mentioned {
			if isProjectPackage(p) && !imported[p] && !slices.Contains(pkgs, p) {
				t.Errorf("docs/architecture.md: the %s row lists `%s`, which it does not import", strings.TrimSpace(cells[1]), p)
			}
		}
	}
	// Every package of the module has a row, but tests, examples, benchmarks
	// and test or build tooling.
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, out)
	}
	for _, imp := range strings.Fields(string(out)) {
		p := strings.TrimPrefix(strings.TrimPrefix(imp, mod), "/")
		if p == "" {
			p = "."
		}
		skip := false
		for _, prefix := range []string{"tests/", "examples/", "bench/", "internal/testing/", "internal/tools/"} {
			skip = skip || strings.HasPrefix(p+"/", prefix)
		}
		if !skip && !covered[p] {
			t.Errorf("docs/architecture.md: the architecture table has no row for %s", p)
		}
	}
	if rows < 8 {
		t.Fatalf("found %d Go package rows in the architecture table of docs/architecture.md; has its shape changed?", rows)
	}
}

// goPackages reports whether every path is a Go package directory of this module.
func goPackages(paths []string) bool {
	for _, p := range paths {
		if !isProjectPackage(p) {
			return false
		}
	}
	return len(paths) > 0
}

// isProjectPackage reports whether p is a directory of this module holding
// non-test Go files, or the root package's name.
func isProjectPackage(p string) bool {
	if p == "toolselect" {
		return true
	}
	if strings.ContainsAny(p, " (),") {
		return false
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", p, "*.go"))
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			return true
		}
	}
	return false
}
