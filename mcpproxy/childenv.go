package mcpproxy

// The environment a stdio upstream starts with. A server is a program the
// proxy runs on the model's behalf, and its tools may hand anything it can
// read to the model (server-everything's get-env returns its whole
// environment), so it gets what MCP's reference clients give a server
// (the TypeScript and Python SDKs' default set: enough for a shell, a home
// directory and PATH), the entry's own env, and the variables the entry
// names in passEnv. Nothing else of the proxy's environment reaches it: not
// its bearer token, not an API key the proxy's user happened to export, and
// never a TOOLSELECT_* variable.

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
)

// defaultEnvPOSIX and defaultEnvWindows are the variables MCP's reference
// SDKs (TypeScript and Python, getDefaultEnvironment) pass a stdio server.
var (
	defaultEnvPOSIX   = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}
	defaultEnvWindows = []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE",
		"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE"}
)

// reservedEnvPrefix starts the proxy's own variables (its bearer token
// among them): none is passed to an upstream, by passEnv or a placeholder.
const reservedEnvPrefix = "TOOLSELECT_"

// reservedEnv reports whether name is one of the proxy's own variables.
// Windows' names ignore case, so the prefix does too.
func reservedEnv(name string) bool {
	return len(name) >= len(reservedEnvPrefix) && strings.EqualFold(name[:len(reservedEnvPrefix)], reservedEnvPrefix)
}

// checkPassEnv reports the first name of a passEnv list that is not an
// environment variable's name or is one of the proxy's own.
func checkPassEnv(names []string) error {
	for i, n := range names {
		switch {
		case !envNameRE.MatchString(n):
			return fmt.Errorf("passEnv[%d] %q is not an environment variable's name (letters, digits and '_', not starting with a digit)", i, n)
		case reservedEnv(n):
			return fmt.Errorf("passEnv[%d] %q: the proxy's own %s* variables (its bearer token among them) are never passed to an upstream", i, n, reservedEnvPrefix)
		}
	}
	return nil
}

// childEnv is the environment of a stdio upstream started by a proxy whose
// own environment is environ ("NAME=value" entries, as os.Environ gives
// them) on goos: the default set of that platform and the names in pass,
// as far as the proxy has them, then the entry's env, which wins. A default
// variable whose value starts with "()" (an exported shell function) is
// left out, as the reference SDKs leave it out. On Windows names are
// matched without regard to case ("Path" is PATH), as Windows matches them.
func childEnv(environ []string, goos string, pass []string, entry map[string]string) []string {
	fold := func(s string) string { return s }
	defaults := defaultEnvPOSIX
	if goos == "windows" {
		fold, defaults = strings.ToUpper, defaultEnvWindows
	}
	want := map[string]bool{} // folded name -> a default (true) or passed (false)
	for _, n := range defaults {
		want[fold(n)] = true
	}
	for _, n := range pass {
		if _, isDefault := want[fold(n)]; !isDefault && !reservedEnv(n) {
			want[fold(n)] = false
		}
	}
	for k := range entry {
		delete(want, fold(k)) // the entry's value replaces the proxy's
	}
	env := []string{} // never nil: exec.Cmd gives a nil Env the proxy's whole one
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" { // Windows' per-drive "=C:=C:\" entries
			continue
		}
		isDefault, ok := want[fold(k)]
		if !ok || reservedEnv(k) || (isDefault && strings.HasPrefix(v, "()")) {
			continue
		}
		delete(want, fold(k)) // the first of two spellings, as a lookup finds it
		env = append(env, k+"="+v)
	}
	keys := make([]string, 0, len(entry))
	for k := range entry {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+entry[k])
	}
	return env
}

// upstreamEnv is childEnv for this process and platform.
func upstreamEnv(environ []string, u Upstream) []string {
	return childEnv(environ, runtime.GOOS, u.PassEnv, u.Env)
}
