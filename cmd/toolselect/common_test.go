package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cliResult is what one in-process run of the command produced.
type cliResult struct {
	code           int
	stdout, stderr string
}

// execCLI runs the command in-process with the given environment variables
// (nothing else from the real environment leaks in) and standard input.
func execCLI(t *testing.T, vars map[string]string, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cmdEnv{
		stdin:  strings.NewReader(stdin),
		stdout: &out,
		stderr: &errb,
		getenv: func(k string) string { return vars[k] },
		environ: func() []string {
			var kv []string
			for k, v := range vars {
				kv = append(kv, k+"="+v)
			}
			return kv
		},
	}
	code := run(env, args)
	return cliResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// exampleCatalog is the shipped example catalog.
func exampleCatalog(t *testing.T) string {
	t.Helper()
	p := filepath.Join("..", "..", "examples", "catalog.json")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("example catalog: %v", err)
	}
	return p
}

// writeTemp writes content to a file in a temporary directory.
func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// oneLine asserts that s is exactly one line of text.
func oneLine(t *testing.T, s string) {
	t.Helper()
	if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
		t.Errorf("want exactly one line, got %q", s)
	}
}
