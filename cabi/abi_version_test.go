package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/cabi/internal/capi"
)

// prototypes returns the header's function prototypes, one a line, white
// space collapsed, in header order.
func prototypes(t *testing.T) []string {
	t.Helper()
	h, err := os.ReadFile("toolselect.h")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^int\s+toolselect_\w+\s*\([^;]*\);`).FindAllString(string(h), -1) {
		out = append(out, strings.Join(strings.Fields(m), " "))
	}
	return out
}

// abiBlocks reads testdata/abi_exports.txt: each "abi N" line and the
// prototypes under it.
func abiBlocks(t *testing.T) (versions []int, blocks map[int][]string) {
	t.Helper()
	data, err := os.ReadFile("testdata/abi_exports.txt")
	if err != nil {
		t.Fatal(err)
	}
	blocks = map[int][]string{}
	cur := -1
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "abi "):
			n, err := strconv.Atoi(strings.TrimPrefix(line, "abi "))
			if err != nil {
				t.Fatalf("abi_exports.txt:%d: %q", i+1, line)
			}
			if _, dup := blocks[n]; dup || (len(versions) > 0 && n <= versions[len(versions)-1]) {
				t.Fatalf("abi_exports.txt:%d: abi %d is not after every earlier version (each version once, in order)", i+1, n)
			}
			versions, blocks[n], cur = append(versions, n), []string{}, n
		case cur < 0:
			t.Fatalf("abi_exports.txt:%d: a prototype before any \"abi N\" line", i+1)
		default:
			blocks[cur] = append(blocks[cur], line)
		}
	}
	return versions, blocks
}

// TestABIVersionCoversExports: the C ABI version (capi.ABIVersion, reported
// by toolselect_version) changes whenever the exports do, so that a host
// comparing it knows every export it was written for is there. The header's
// prototypes must be exactly the last version's block in
// testdata/abi_exports.txt, that version must be capi.ABIVersion, and the
// header's TOOLSELECT_ABI_VERSION and the Python package's ABI_VERSION must
// say the same.
func TestABIVersionCoversExports(t *testing.T) {
	versions, blocks := abiBlocks(t)
	if len(versions) == 0 {
		t.Fatal("abi_exports.txt records no version")
	}
	last := versions[len(versions)-1]
	got := prototypes(t)
	if want := blocks[last]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the exports of toolselect.h differ from ABI %d's in testdata/abi_exports.txt (%s).\n"+
			"An export was added, removed or changed: that is a new C ABI version. Bump capi.ABIVersion, "+
			"TOOLSELECT_ABI_VERSION in toolselect.h and ABI_VERSION in python/toolselect/_version.py to %d, "+
			"and add an \"abi %d\" block with these prototypes:\n%s",
			last, diffLines(want, got), last+1, last+1, strings.Join(got, "\n"))
	}
	if capi.ABIVersion != last {
		t.Errorf("capi.ABIVersion is %d, but the last version in testdata/abi_exports.txt is %d", capi.ABIVersion, last)
	}
	h, _ := os.ReadFile("toolselect.h")
	if m := regexp.MustCompile(`(?m)^#define TOOLSELECT_ABI_VERSION (\d+)$`).FindSubmatch(h); m == nil || string(m[1]) != strconv.Itoa(capi.ABIVersion) {
		t.Errorf("toolselect.h: TOOLSELECT_ABI_VERSION is %q, want %d", m, capi.ABIVersion)
	}
	py, err := os.ReadFile("../python/toolselect/_version.py")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^ABI_VERSION = (\d+)$`).FindSubmatch(py); m == nil || string(m[1]) != strconv.Itoa(capi.ABIVersion) {
		t.Errorf("python/toolselect/_version.py: ABI_VERSION is %q, want %d", m, capi.ABIVersion)
	}
}

// diffLines names the lines only one of a and b has.
func diffLines(a, b []string) string {
	in := func(s []string, x string) bool {
		for _, y := range s {
			if y == x {
				return true
			}
		}
		return false
	}
	var out []string
	for _, x := range a {
		if !in(b, x) {
			out = append(out, "gone: "+x)
		}
	}
	for _, x := range b {
		if !in(a, x) {
			out = append(out, "new: "+x)
		}
	}
	if len(out) == 0 {
		return "same prototypes, another order"
	}
	return fmt.Sprint(strings.Join(out, "; "))
}
