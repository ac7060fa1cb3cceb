package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A real `go test -json` run of testdata/sample is counted, its skip keeps
// its reason, its failure is named, and the summary ends with the plain
// closing line.
func TestGoTestStream(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test on a sample package")
	}
	cmd := exec.Command("go", "test", "-count=1", "-json", "./testdata/sample")
	cmd.Env = append(os.Environ(), "SAMPLE_FAIL=1")
	stream, _ := cmd.Output() // exits 1: the sample fails on purpose
	var progress bytes.Buffer
	r, err := readGoTest(bytes.NewReader(stream), &progress)
	if err != nil {
		t.Fatal(err)
	}
	if r.Passed != 1 || r.Failed != 1 || r.Skipped != 1 {
		t.Fatalf("counted %d passed, %d failed, %d skipped; want 1, 1, 1\n%s", r.Passed, r.Failed, r.Skipped, stream)
	}
	if len(r.Skips) != 1 || r.Skips[0][1] != "peer not installed: set PEERS=DIR" {
		t.Fatalf("skips %q", r.Skips)
	}
	if !strings.Contains(progress.String(), "--- FAIL:") || !strings.Contains(progress.String(), "boom") {
		t.Fatalf("progress does not show the failure:\n%s", progress.String())
	}
	dir := t.TempDir()
	if err := r.write(filepath.Join(dir, "go.tsv")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "steps"), []byte("vet\ngo\n"), 0o644) // vet never reported
	var out bytes.Buffer
	failed, err := summary(&out, dir)
	if err != nil || !failed {
		t.Fatalf("summary: failed=%v err=%v", failed, err)
	}
	s := out.String()
	for _, want := range []string{"peer not installed: set PEERS=DIR", "vet: the step ended without reporting", "TestFail"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if last := lines[len(lines)-1]; last != "total: 1 passed, 2 failed, 1 skipped" {
		t.Errorf("closing line %q", last)
	}
}
