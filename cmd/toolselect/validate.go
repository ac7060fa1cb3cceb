package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/toolselect/toolselect/registry"
)

func init() {
	register(command{
		name:    "validate",
		summary: "check a tool call's arguments against the tool's schema",
		run:     runValidate,
	})
}

// validateOutput is what validate prints, valid or not.
type validateOutput struct {
	Tool       string               `json:"tool"`
	Valid      bool                 `json:"valid"`
	Validated  bool                 `json:"validated"` // false: the tool has no schema (allowNoSchema)
	Violations []registry.Violation `json:"violations"`
}

func runValidate(env *cmdEnv, args []string) int {
	fs := newFlags(env, "validate", "--catalog FILE --tool NAME --args JSON [--json]")
	skipInvalid := fs.Bool("skip-invalid", true, skipInvalidUsage)
	catalog := fs.String("catalog", "", "tool catalog (any format the registry reads; \"-\" reads stdin)")
	tool := fs.String("tool", "", "tool name, canonical or as a provider view mapped it")
	argsFlag := fs.String("args", "", "the arguments: a JSON object, \"-\" for stdin or @FILE")
	fs.Bool("json", false, "print one JSON line (the default when stdout is not a terminal; --json=false prints the summary anyway)")
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		return fail(env, "validate", exitUsage, "unexpected argument %q (run \"toolselect validate --help\")", fs.Arg(0))
	case *tool == "":
		return fail(env, "validate", exitUsage, "--tool is required")
	case *argsFlag == "":
		return fail(env, "validate", exitUsage, "--args is required (a JSON object such as '{}')")
	case *argsFlag == "-" && *catalog == "-":
		return fail(env, "validate", exitUsage, "--catalog and --args cannot both read stdin")
	}
	raw, err := readArg(env, *argsFlag)
	if err != nil {
		return fail(env, "validate", exitUsage, "reading --args: %v", err)
	}
	reg, code, ok := loadCatalog(env, "validate", *catalog, !*skipInvalid)
	if !ok {
		return code
	}
	entry, ok := reg.Lookup(*tool)
	if !ok {
		return fail(env, "validate", exitUsage, "%v in %s", reg.UnknownTool(*tool, nil), *catalog)
	}
	out := validateOutput{Tool: entry.Name(), Valid: true, Validated: entry.Validated(), Violations: []registry.Violation{}}
	if err := entry.ValidateArgs([]byte(raw)); err != nil {
		var ve *registry.ValidationError
		if !errors.As(err, &ve) {
			return fail(env, "validate", exitUsage, "%v", err)
		}
		out.Valid, out.Violations = false, ve.Violations
	}
	if env.humanOutput(fs) {
		out.print(env.stdout)
	} else {
		writeJSON(env.stdout, out)
	}
	if !out.Valid {
		return exitInvalid
	}
	return exitOK
}

// print writes the result for people: a verdict line, then one line per
// violation (pointer, rule, message).
func (o validateOutput) print(w io.Writer) {
	switch {
	case o.Valid && o.Validated:
		fmt.Fprintf(w, "%s: arguments valid\n", o.Tool)
	case o.Valid:
		fmt.Fprintf(w, "%s: arguments accepted; the tool has no schema (allowNoSchema), so only their shape was checked (a JSON object within the size and depth limits)\n", o.Tool)
	default:
		fmt.Fprintf(w, "%s: arguments invalid, %d %s:\n", o.Tool, len(o.Violations), plural(len(o.Violations), "violation", "violations"))
		width := 0
		for _, v := range o.Violations {
			width = max(width, len(pointerLabel(v.Pointer)))
		}
		for _, v := range o.Violations {
			fmt.Fprintf(w, "  %-*s  %s: %s\n", width, pointerLabel(v.Pointer), v.Rule, v.Message)
		}
	}
}

// pointerLabel shows a JSON pointer, naming the empty one.
func pointerLabel(p string) string {
	if p == "" {
		return "(the arguments)"
	}
	return p
}
