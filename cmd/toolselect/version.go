package main

import (
	"fmt"

	"github.com/toolselect/toolselect"
	"runtime"
	"runtime/debug"
)

// version is the release of the command: the VERSION file, which the library
// (cabi), the Python package and the MCP proxy read too.
var version = toolselect.Version()

func init() {
	register(command{name: "version", summary: "print the version (also: toolselect --version)", run: runVersion})
}

// versionLine is "toolselect VERSION (GO, OS/ARCH[, commit REV[+dirty]])".
func versionLine() string {
	s := fmt.Sprintf("toolselect %s (%s, %s/%s", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				rev = kv.Value
			case "vcs.modified":
				if kv.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			s += ", commit " + rev + dirty
		}
	}
	return s + ")"
}

func runVersion(env *cmdEnv, args []string) int {
	fs := newFlags(env, "version", "")
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(env, "version", exitUsage, "unexpected argument %q", fs.Arg(0))
	}
	fmt.Fprintln(env.stdout, versionLine())
	return exitOK
}
