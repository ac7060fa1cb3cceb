package main

import (
	"bytes"
	"encoding/json"

	"github.com/toolselect/toolselect/registry"
)

func init() {
	register(command{
		name:    "schema",
		summary: "print a catalog's tools in a provider's format",
		run:     runSchema,
	})
}

func runSchema(env *cmdEnv, args []string) int {
	fs := newFlags(env, "schema", "--catalog FILE [--format FORMAT] [--indent]")
	skipInvalid := fs.Bool("skip-invalid", true, skipInvalidUsage)
	catalog := fs.String("catalog", "", "tool catalog: canonical JSON/JSON Lines, OpenAI, Anthropic or MCP tools (\"-\" reads stdin)")
	format := fs.String("format", "canonical", "output format: "+formatNames("|"))
	indent := fs.Bool("indent", false, "indent the JSON output (default: one compact line)")
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(env, "schema", exitUsage, "unexpected argument %q (run \"toolselect schema --help\")", fs.Arg(0))
	}
	f, err := registry.ParseFormat(*format)
	if err != nil {
		return fail(env, "schema", exitUsage, "%v", err)
	}
	reg, code, ok := loadCatalog(env, "schema", *catalog, !*skipInvalid)
	if !ok {
		return code
	}
	out, err := reg.View(f)
	if err != nil {
		return fail(env, "schema", exitUsage, "%v", err)
	}
	// Only insignificant white space changes: schemas keep every key and value as written.
	var buf bytes.Buffer
	if *indent {
		err = json.Indent(&buf, out, "", "  ")
	} else {
		err = json.Compact(&buf, out)
	}
	if err == nil {
		out = buf.Bytes()
	}
	env.stdout.Write(out)
	env.stdout.Write([]byte("\n"))
	return exitOK
}
