package mcpproxy

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// commandPath is where an upstream's command is found as its client would
// find it: an MCP client built on Node (Claude Desktop, Claude Code, VS
// Code) spawns the command with the entry's env, and Node looks a bare name
// up in that env's PATH, so an entry setting "env": {"PATH": ...} runs the
// binary found there, not the one first in the proxy's own PATH. ok is false
// when the entry sets no PATH or the command names a path: exec.Command's
// own lookup applies then.
func commandPath(command string, env map[string]string) (path string, ok bool, err error) {
	pathList, set := env["PATH"]
	if !set && runtime.GOOS == "windows" {
		for k, v := range env { // Windows names it Path as often as PATH
			if strings.EqualFold(k, "PATH") {
				pathList, set = v, true
			}
		}
	}
	if !set || strings.ContainsAny(command, `/\`) {
		return "", false, nil
	}
	exts := []string{""}
	if runtime.GOOS == "windows" && filepath.Ext(command) == "" {
		pathext := env["PATHEXT"]
		if pathext == "" {
			pathext = os.Getenv("PATHEXT")
		}
		if pathext == "" {
			pathext = ".com;.exe;.bat;.cmd"
		}
		exts = filepath.SplitList(strings.ToLower(pathext))
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // "" and "." mean the working directory: never searched, as Go's LookPath refuses them
		}
		for _, ext := range exts {
			p := filepath.Join(dir, command+ext)
			if executable(p) {
				return p, true, nil
			}
		}
	}
	return "", true, fmt.Errorf("command %q is not found in the entry's env.PATH (%s), where its client would look for it", command, pathList)
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	if runtime.GOOS == "windows" {
		return true
	}
	return fi.Mode()&0o111 != 0
}
