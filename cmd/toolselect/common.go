package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolselect/toolselect/registry"
)

// loadCatalog reads --catalog (any format the registry detects; "-" reads
// standard input) for every command that takes one, with one rule: a tool the
// registry refuses (a schema-less tool without allowNoSchema, a bad schema, a
// duplicate name) is left out with a warning on stderr naming it and why, and
// the command goes on with the rest. A catalog with nothing valid left is a
// usage error (exit 2) naming the refusals. With strict (--skip-invalid=false)
// any refusal fails the whole catalog instead. On failure the error has been
// printed under the command's name and the exit code is returned.
func loadCatalog(env *cmdEnv, name, path string, strict bool) (*registry.Registry, int, bool) {
	return loadPinnedCatalog(env, name, path, strict, "", false)
}

// loadPinnedCatalog is loadCatalog with a pin file (registry.Pins, as the MCP
// proxy applies it): a tool whose definition differs from its pin is left
// out with a warning saying what changed and how to approve it; tools seen
// for the first time are pinned. "" means no pin file.
func loadPinnedCatalog(env *cmdEnv, name, path string, strict bool, pinsPath string, strictDesc bool) (*registry.Registry, int, bool) {
	tools, err := readCatalog(env, path)
	if err != nil {
		return nil, fail(env, name, exitUsage, "%v", err), false
	}
	if pinsPath != "" {
		pins, err := registry.LoadPins(pinsPath)
		if err != nil {
			return nil, fail(env, name, exitUsage, "--pins: %v", err), false
		}
		save := false
		kept := tools[:0]
		for _, t := range tools {
			c, changed, err := pins.Check(t, strictDesc)
			save = save || changed
			switch {
			case err != nil:
				fmt.Fprintf(env.stderr, "toolselect %s: warning: held %s: %v\n", name, t.Name, err)
			case c.Held:
				fmt.Fprintf(env.stderr, "toolselect %s: warning: held: %s\n", name, c.Message(pins.Flag()))
			default:
				if len(c.Flags) > 0 {
					fmt.Fprintf(env.stderr, "toolselect %s: warning: tool %q: its description (or title or schema text) carries %s\n", name, t.Name, strings.Join(c.Flags, ", "))
				}
				kept = append(kept, t)
			}
		}
		tools = kept
		if save {
			if err := pins.Save(); err != nil {
				return nil, fail(env, name, exitUsage, "--pins: %v", err), false
			}
		}
	}
	reg := registry.New(nil)
	if strict {
		if err := reg.RegisterAll(tools); err != nil {
			return nil, fail(env, name, exitUsage, "%s: %s (without --skip-invalid=false, refused tools are left out with a warning)", path, summarize(err, 3)), false
		}
		return reg, 0, true
	}
	refused := reg.RegisterValid(tools)
	if reg.Len() == 0 && len(refused) > 0 {
		return nil, fail(env, name, exitUsage, "%s: no valid tool: %s", path, summarize(errors.Join(refused...), 3)), false
	}
	for _, err := range refused {
		fmt.Fprintf(env.stderr, "toolselect %s: warning: skipped %v\n", name, err)
	}
	return reg, 0, true
}

// skipInvalidUsage is the help of --skip-invalid, shared by every command that loads a catalog.
const skipInvalidUsage = "leave out tools the registry refuses, with a warning on stderr naming each (false: refuse the whole catalog)"

// readCatalog reads the tools of --catalog: a file in any format the registry
// detects, or standard input for "-".
func readCatalog(env *cmdEnv, path string) ([]registry.Tool, error) {
	if path == "" {
		return nil, errors.New("--catalog is required")
	}
	if path == "-" {
		b, err := readAllLimited(env.stdin)
		if err != nil {
			return nil, err
		}
		tools, _, err := registry.ParseCatalog(b)
		return tools, err
	}
	tools, _, err := registry.LoadCatalogFile(path)
	return tools, err
}

// summarize flattens a joined error into one line, keeping the first n parts.
func summarize(err error, n int) string {
	var parts []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			parts = append(parts, e.Error())
		}
	} else {
		parts = []string{err.Error()}
	}
	if len(parts) > n {
		more := len(parts) - n
		parts = append(parts[:n], fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// readArg returns a flag value, or the content of standard input for "-" or
// of a file for "@path".
func readArg(env *cmdEnv, v string) (string, error) {
	switch {
	case v == "-":
		b, err := io.ReadAll(io.LimitReader(env.stdin, int64(registry.Limits{}.WithDefaults().MaxArgsBytes)+1))
		return string(b), err
	case strings.HasPrefix(v, "@"):
		b, err := os.ReadFile(v[1:])
		return string(b), err
	}
	return v, nil
}

// readAllLimited reads at most MaxCatalogBytes from r.
func readAllLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, registry.MaxCatalogBytes+1))
	if err == nil && len(b) > registry.MaxCatalogBytes {
		err = fmt.Errorf("input is larger than %d bytes", registry.MaxCatalogBytes)
	}
	return b, err
}

// redactingWriter removes secrets from each write (slog handlers write one
// record per call, so a secret is never split across writes).
type redactingWriter struct {
	w       io.Writer
	secrets []string
}

func (r redactingWriter) Write(p []byte) (int, error) {
	s := string(p)
	for _, k := range r.secrets {
		s = strings.ReplaceAll(s, k, "[REDACTED]")
	}
	if _, err := io.WriteString(r.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// pinFlags are --pins and --strict-descriptions, for the commands that load
// a catalog to rank or select from it.
type pinFlags struct {
	file   string
	strict bool
}

func (p *pinFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.file, "pins", "", "pin each tool's definition in `FILE` on first sight; leave out (with a warning) a tool whose definition changed until approved (\"toolselect mcp pins approve\")")
	fs.BoolVar(&p.strict, "strict-descriptions", false, "with --pins: also leave out tools whose description, title or schema text carries invisible or bidirectional characters or an HTML comment")
}
