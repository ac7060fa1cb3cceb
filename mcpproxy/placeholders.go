package mcpproxy

// Placeholders in an upstream's strings (command, args, env, cwd, url,
// headers): how each file format spells them, and what becomes of them.
//
// The proxy's own format has one spelling, ${env:NAME} (or
// ${env:NAME:-default}), and ${userHome}. A client's file has its client's:
// ${NAME} and ${NAME:-default} (Claude Code), ${env:NAME} (Cursor, VS
// Code), ${input:ID} (VS Code's prompts) and the editors' own
// (${workspaceFolder}). LoadConfig expands them from the proxy's
// environment when it starts; ImportClientConfig keeps them as references
// in the proxy's spelling, so that what import-config writes holds no
// secret a placeholder stood for. Every problem is reported at once.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// placeholderRE finds the placeholders in a string.
var placeholderRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// editorVariables are the placeholders VS Code and Cursor expand from the
// editor's state (the open workspace, the current file): only they can.
var editorVariables = map[string]bool{"workspaceFolder": true, "workspaceFolderBasename": true, "workspaceRoot": true,
	"file": true, "fileDirname": true, "fileBasename": true, "relativeFile": true, "cwd": true, "pathSeparator": true}

// envNameRE is an environment variable's name.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// inputVarPrefix starts the variable a VS Code input is passed to the proxy
// in: the client's entry for toolselect sets VSCODE_INPUT_ID to
// ${input:ID}, which VS Code prompts for, and the upstream's value reads
// ${env:VSCODE_INPUT_ID}.
const inputVarPrefix = "VSCODE_INPUT_"

// placeholderPass handles the placeholders of one file: expanding them
// (LoadConfig) or keeping them as references in the proxy's spelling
// (ImportClientConfig), collecting every problem.
type placeholderPass struct {
	keep   bool // keep references instead of expanding
	client bool // a client's file: its clients' spellings are read
	// lookup reads the proxy's environment.
	lookup   func(string) (string, bool)
	problems []string
	// inputs maps a VS Code input's ID to the variable it is passed in
	// (keep, VS Code only), and declared holds the file's input
	// declarations by ID.
	inputs   map[string]string
	declared map[string]json.RawMessage
	vscode   bool
	// unset are the variables referenced (keep) that the environment
	// lacks now, without a default.
	unset map[string]bool
	// read collects the values expanded from the environment into the
	// string being handled (a default written in the file is not one).
	read []string
}

func newPlaceholderPass(keep bool) *placeholderPass {
	return &placeholderPass{keep: keep, lookup: os.LookupEnv, inputs: map[string]string{}, unset: map[string]bool{}}
}

// upstream handles every string of u that may hold a placeholder; where
// names u in problems ("mcpServers.gh", "upstreams[0]").
func (pp *placeholderPass) upstream(where string, u *Upstream) {
	// What the environment puts into the command, its arguments or the
	// URL was kept out of the file to be kept out of sight: it joins
	// u.Secrets, never printed. Env and header values are never printed
	// anyway, and cwd is no secret.
	secret := func(field, s string) string {
		pp.read = pp.read[:0]
		out := pp.str(where+field, s)
		for _, v := range pp.read {
			if v != "" && !slices.Contains(u.Secrets, v) {
				u.Secrets = append(u.Secrets, v)
			}
		}
		return out
	}
	u.Command = secret(".command", u.Command)
	dirField := ".dir"
	if pp.client {
		dirField = ".cwd"
	}
	u.Dir = pp.str(where+dirField, u.Dir)
	u.URL = secret(".url", u.URL)
	if u.Args != nil {
		u.Args = append([]string(nil), u.Args...)
		for i := range u.Args {
			u.Args[i] = secret(fmt.Sprintf(".args[%d]", i), u.Args[i])
		}
	}
	for _, f := range []struct {
		name string
		m    *map[string]string
	}{{"env", &u.Env}, {"headers", &u.Headers}} {
		if *f.m == nil {
			continue
		}
		keys := make([]string, 0, len(*f.m))
		for k := range *f.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(map[string]string, len(*f.m))
		for _, k := range keys {
			out[k] = pp.str(where+"."+f.name+"."+k, (*f.m)[k])
		}
		*f.m = out
	}
}

// str handles the placeholders of s, at where.
func (pp *placeholderPass) str(where, s string) string {
	return placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		out, problem := pp.one(m)
		if problem != "" {
			pp.problems = append(pp.problems, where+": "+problem)
			return m
		}
		return out
	})
}

// one handles one placeholder m ("${...}"): its replacement, or a problem
// (naming the placeholder, never a value).
func (pp *placeholderPass) one(m string) (string, string) {
	inner := m[2 : len(m)-1]
	spec, def, hasDef := strings.Cut(inner, ":-")
	name, isEnv := strings.CutPrefix(spec, "env:")
	switch {
	case inner == "userHome":
		if pp.keep {
			return m, ""
		}
		if home, err := os.UserHomeDir(); err == nil {
			return home, ""
		}
		return "", m + ": no home directory"
	case strings.HasPrefix(inner, "input:"):
		id := strings.TrimPrefix(inner, "input:")
		if pp.keep && pp.vscode && id != "" {
			v, ok := pp.inputs[id]
			if !ok {
				v = inputVar(id)
				pp.inputs[id] = v
			}
			return "${env:" + v + "}", ""
		}
		return "", m + " is a VS Code input, a value VS Code prompts the user for and the proxy cannot: \"toolselect mcp import-config\" has VS Code pass it to the proxy, or write ${env:NAME} for an environment variable"
	case !isEnv && !pp.client:
		if editorVariables[name] {
			return "", m + " is a placeholder only an editor can expand: write the value itself, or ${env:NAME} for an environment variable"
		}
		if envNameRE.MatchString(name) {
			return "", fmt.Sprintf("%s: the proxy's configuration spells an environment variable ${env:%s}", m, name)
		}
		return "", m + " is not a placeholder the proxy knows: ${env:NAME}, ${env:NAME:-default} or ${userHome}"
	case reservedEnv(name):
		return "", fmt.Sprintf("%s: the proxy's own %s* variables (its bearer token among them) are never passed to an upstream", m, reservedEnvPrefix)
	case !envNameRE.MatchString(name) || (!isEnv && editorVariables[name]):
		return "", m + " is a placeholder only its client can expand: write the value itself, or ${env:NAME} for an environment variable"
	}
	if pp.keep {
		if _, ok := pp.lookup(name); !ok && !hasDef {
			pp.unset[name] = true
		}
		if hasDef {
			return "${env:" + name + ":-" + def + "}", ""
		}
		return "${env:" + name + "}", ""
	}
	if v, ok := pp.lookup(name); ok {
		pp.read = append(pp.read, v)
		return v, ""
	}
	if hasDef {
		return def, ""
	}
	return "", fmt.Sprintf("%s: the environment variable %s is not set", m, name)
}

// inputVar is the variable a VS Code input's ID is passed in.
func inputVar(id string) string {
	b := []byte(strings.ToUpper(id))
	for i, ch := range b {
		if !(ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9') {
			b[i] = '_'
		}
	}
	return inputVarPrefix + string(b)
}

// declareInputs records a VS Code file's "inputs" by ID.
func (pp *placeholderPass) declareInputs(raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		pp.problems = append(pp.problems, "inputs: "+jsonTypeError(err).Error())
		return
	}
	pp.declared = map[string]json.RawMessage{}
	for _, d := range list {
		var in struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(d, &in) == nil && in.ID != "" {
			pp.declared[in.ID] = d
		}
	}
}

// err is every problem found, one a line, in file order of the fields
// visited; nil when there is none.
func (pp *placeholderPass) err() error {
	if len(pp.problems) == 0 {
		return nil
	}
	if len(pp.problems) == 1 {
		return errors.New(pp.problems[0])
	}
	return fmt.Errorf("%d placeholder problems:\n  %s", len(pp.problems), strings.Join(pp.problems, "\n  "))
}

// unsetNames lists pp.unset, sorted.
func (pp *placeholderPass) unsetNames() []string {
	out := make([]string, 0, len(pp.unset))
	for n := range pp.unset {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
