package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolselect/toolselect/registry"
)

// loadRegistry reads a catalog file (any format the registry detects) and
// registers all of it: a catalog with a refused tool is a usage error, so the
// commands never act on half a catalog. "-" reads standard input.
func loadRegistry(env *cmdEnv, path string) (*registry.Registry, error) {
	tools, err := readCatalog(env, path)
	if err != nil {
		return nil, err
	}
	reg := registry.New(nil)
	if err := reg.RegisterAll(tools); err != nil {
		return nil, fmt.Errorf("%s: %s", path, summarize(err, 3))
	}
	return reg, nil
}

// readCatalog reads the tools of --catalog: a file in any format the registry
// detects, or standard input for "-".
func readCatalog(env *cmdEnv, path string) ([]registry.Tool, error) {
	if path == "" {
		return nil, errors.New("--catalog is required")
	}
	if path == "-" {
		tools, _, err := registry.ReadCatalog(env.stdin)
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
		b, err := io.ReadAll(io.LimitReader(env.stdin, int64(registry.DefaultLimits.MaxArgsBytes)+1))
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
