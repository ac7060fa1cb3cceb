package release_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// buildTags is BUILDTAGS's first line that is not a comment: the tags every
// artefact is built with (the file says why).
func buildTags(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "BUILDTAGS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	t.Fatal("BUILDTAGS names no build tags")
	return ""
}

// TestNothingCallsMethodsByName links the command and the C library as
// they ship (BUILDTAGS) and fails when anything in them calls a method by a
// name known only at run time (reflect's MethodByName or Method): the
// linker then keeps every exported method of every linked type, and the
// command grows by a third (text/template, which gRPC's request tracing
// pulled in, and validator's validateFn rule did this). The linker's
// dependency dump marks the caller <ReflectMethod>; the failure names it.
func TestNothingCallsMethodsByName(t *testing.T) {
	if testing.Short() {
		t.Skip("links the command and the library")
	}
	tags := buildTags(t)
	for _, target := range []struct {
		pkg  string
		args []string
	}{
		{"./cmd/toolselect", nil},
		{"./cabi", []string{"-buildmode=c-shared"}},
	} {
		args := append([]string{"build", "-trimpath", "-tags", tags, "-ldflags=-dumpdep", "-o", os.DevNull}, target.args...)
		cmd := exec.Command("go", append(args, target.pkg)...)
		cmd.Dir = root
		if target.pkg == "./cmd/toolselect" {
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%.2000s", strings.Join(cmd.Args[1:], " "), err, out)
		}
		var callers []string
		for _, line := range strings.Split(string(out), "\n") {
			if from, _, ok := strings.Cut(line, " <ReflectMethod> ->"); ok && !slices.Contains(callers, from) {
				callers = append(callers, from)
			}
		}
		if len(callers) > 0 {
			t.Errorf("%s calls methods by name through reflection, so the linker keeps every method of every type: %s",
				target.pkg, strings.Join(callers, ", "))
		}
	}
}
