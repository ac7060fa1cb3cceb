package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCHeaderSmoke builds the shared library, compiles testdata/abi_smoke.c
// against toolselect.h and runs it: the header is usable from C and the
// documented return codes and ownership rule hold.
func TestCHeaderSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the shared library")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no C compiler (%s)", cc)
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libtoolselect.so")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-o", lib, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the library: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "abi_smoke")
	if out, err := exec.Command(cc, "-std=c99", "-Wall", "-Werror", "-I.", "-o", bin, "testdata/abi_smoke.c",
		"-L"+dir, "-ltoolselect", "-Wl,-rpath,"+dir).CombinedOutput(); err != nil {
		t.Fatalf("compiling against toolselect.h: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("abi_smoke: %v\n%s", err, out)
	}
}
