package capi

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"

	"github.com/toolselect/toolselect/registry"
)

// RegistryOptions is the JSON accepted by RegistryNew (every field optional).
type RegistryOptions struct {
	Limits registry.Limits `json:"limits"`
}

// RegistryNew creates a registry. opts may be absent (defaults).
func RegistryNew(opts []byte, present bool) Result {
	var o RegistryOptions
	if present && len(bytes.TrimSpace(opts)) > 0 {
		if r := JSON("options_json", opts, true, &o); r != nil {
			return *r
		}
	}
	h := table.add(KindRegistry, registry.New(&registry.Options{Limits: o.Limits}))
	return Ok(map[string]uint64{"handle": h})
}

func getRegistry(h uint64) (*registry.Registry, *Result) {
	v, r := table.get(h, KindRegistry)
	if r != nil {
		return nil, r
	}
	return v.(*registry.Registry), nil
}

// refusal is one refused tool in an ErrRejected detail.
type refusal struct {
	Tool    string `json:"tool"`
	Index   int    `json:"index"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Rule is the registry.Rule of a refusal a binding words in its own
	// names (no_schema, no_schema_mode); absent for the others.
	Rule string `json:"rule,omitempty"`
}

func rejected(err error) Result {
	var list []refusal
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var re *registry.RegistrationError
		if errors.As(err, &re) {
			list = append(list, refusal{Tool: re.Tool, Index: re.Index, Reason: re.Reason, Message: re.Error(), Rule: string(re.Rule)})
			return
		}
		list = append(list, refusal{Index: -1, Message: err.Error()})
	}
	walk(err)
	return failDetail(ErrRejected, map[string]any{"refused": list}, "%v", err)
}

// RegistryRegister registers one tool (a JSON object) or a batch (a JSON
// array, atomically: all or none). It returns {"registered": n}.
func RegistryRegister(h uint64, toolJSON []byte, present bool) Result {
	reg, r := getRegistry(h)
	if r != nil {
		return *r
	}
	if r := JSON("tool_json", toolJSON, present, nil); r != nil {
		return *r
	}
	trimmed := bytes.TrimSpace(toolJSON)
	var tools []registry.Tool
	switch trimmed[0] {
	case '{':
		var t registry.Tool
		if err := json.Unmarshal(trimmed, &t); err != nil {
			return Fail(ErrArgument, "tool_json: %v", err)
		}
		if err := reg.Register(t); err != nil {
			return rejected(err)
		}
		return Ok(map[string]int{"registered": 1})
	case '[':
		if err := json.Unmarshal(trimmed, &tools); err != nil {
			return Fail(ErrArgument, "tool_json: %v", err)
		}
	default:
		return Fail(ErrArgument, "tool_json must be a JSON object (one tool) or array (a batch)")
	}
	if err := reg.RegisterAll(tools); err != nil {
		return rejected(err)
	}
	return Ok(map[string]int{"registered": len(tools)})
}

// RegistryLoadCatalog parses a catalog in any format the registry reads
// (canonical JSON array or JSON Lines, OpenAI, Anthropic, MCP tools/list) and
// registers every tool atomically. It returns {"registered": n, "format": f}.
func RegistryLoadCatalog(h uint64, data []byte, present bool) Result {
	reg, r := getRegistry(h)
	if r != nil {
		return *r
	}
	if r := checkText("catalog", data, present); r != nil {
		return *r
	}
	tools, format, err := registry.ParseCatalog(data)
	return registerCatalog(reg, tools, format, err)
}

// registerCatalog registers a parsed catalog, all or none: the one ending of
// both catalog loads.
func registerCatalog(reg *registry.Registry, tools []registry.Tool, format registry.Format, err error) Result {
	if err != nil {
		return Fail(ErrArgument, "catalog: %v", err)
	}
	if err := reg.RegisterAll(tools); err != nil {
		return rejected(err)
	}
	return Ok(map[string]any{"registered": len(tools), "format": format})
}

// RegistryLoadCatalogFile is RegistryLoadCatalog for a file the library
// reads itself: the text crosses no boundary (one read into Go memory instead
// of a read by the caller, a copy in and a UTF-8 pass), and errors name the
// file. A file that is not there or not readable is ErrArgument.
func RegistryLoadCatalogFile(h uint64, path []byte, present bool) Result {
	reg, r := getRegistry(h)
	if r != nil {
		return *r
	}
	// A path is bytes, as the file system has it (not necessarily UTF-8).
	if !present {
		return Fail(ErrArgument, "path is NULL")
	}
	if len(path) == 0 {
		return Fail(ErrArgument, "path is empty")
	}
	tools, format, err := registry.LoadCatalogFile(string(path))
	return registerCatalog(reg, tools, format, err)
}

// RegistrySchema returns `[{"name","description","parameters"}]`.
func RegistrySchema(h uint64) Result {
	reg, r := getRegistry(h)
	if r != nil {
		return *r
	}
	b, err := reg.View(registry.FormatSchema)
	if err != nil {
		return Fail(ErrInternal, "schema: %v", err)
	}
	return Ok(json.RawMessage(b))
}

// RegistryView returns every tool in a provider format (canonical, schema,
// openai, openai-responses, anthropic, ollama, mcp).
func RegistryView(h uint64, format []byte, present bool) Result {
	reg, r := getRegistry(h)
	if r != nil {
		return *r
	}
	s, r := Text("format", format, present)
	if r != nil {
		return *r
	}
	f, err := registry.ParseFormat(s)
	if err != nil {
		return Fail(ErrArgument, "%v", err)
	}
	b, err := reg.View(f)
	if err != nil {
		return Fail(ErrInternal, "view: %v", err)
	}
	return Ok(json.RawMessage(b))
}

// ValidateResult is the body of RegistryValidate: a verdict, never an error,
// when the tool exists.
type ValidateResult struct {
	Valid      bool                 `json:"valid"`
	Tool       string               `json:"tool"`
	Validated  bool                 `json:"validated"` // false for a tool registered without a schema
	Violations []registry.Violation `json:"violations"`
	Message    string               `json:"message,omitempty"`
}

// RegistryValidate checks a JSON argument document for a tool (canonical or
// provider-mapped name). An unknown tool is ErrNotFound; invalid arguments are
// a successful call whose body says {"valid": false, "violations": [...]}.
// The arguments are passed through as given: malformed JSON is a violation
// (rule "json"), because validating model output is the point of the call.
func RegistryValidate(h uint64, tool []byte, toolPresent bool, args []byte, argsPresent bool) Result {
	reg, r := getRegistry(h)
	if r != nil {
		return *r
	}
	name, r := Text("tool", tool, toolPresent)
	if r != nil {
		return *r
	}
	if r := checkText("args_json", args, argsPresent); r != nil {
		return *r
	}
	e, ok := reg.Lookup(name)
	if !ok {
		return Fail(ErrNotFound, "unknown tool %q", name)
	}
	out := ValidateResult{Valid: true, Tool: e.Name(), Validated: e.Validated(), Violations: []registry.Violation{}}
	if err := e.ValidateArgs(args); err != nil {
		var ve *registry.ValidationError
		if !errors.As(err, &ve) {
			return Fail(ErrInternal, "validate: %v", err)
		}
		out.Valid = false
		out.Violations = ve.Violations
		out.Message = ve.Error()
	}
	return Ok(out)
}

// RegistryClose releases a registry handle. Objects already using the
// registry (a running selection, an open session) keep working.
func RegistryClose(h uint64) Result { return table.remove(h, KindRegistry) }

// Version reports the library and Go versions.
func Version(version, goVersion string) Result {
	return Ok(map[string]any{"version": version, "go": goVersion, "abi": ABIVersion})
}

// ABIVersion is the C ABI's version: it changes whenever an export is added
// or removed, or an export's signature or meaning changes, so that a host
// that compares it (the Python package does, at load) knows every export it
// was written for is there. cabi/testdata/abi_exports.txt records the
// prototypes of each version, and a test fails when they differ from the
// header's without a new version.
//
//	1: the first exports.
//	2: toolselect_registry_load_catalog_file, toolselect_registry_authorize
//	   and toolselect_telemetry_flush added; the Python package calls all
//	   three, so a library without them is not one it can use.
const ABIVersion = 3

// Stats reports open handles per kind, returned strings not yet freed, and
// the number of goroutines (leak checks from the host language).
func Stats() Result {
	return Ok(map[string]any{"handles": Live(), "strings": Outstanding(), "goroutines": goroutines()})
}

// goroutines counts live goroutines from a full stack dump, leaving out
// those parked "[syscall, locked to thread]": the runtime keeps one for each
// C thread that has called into the library, so runtime.NumGoroutine grows
// with the host's thread pool while nothing leaks.
func goroutines() int {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		count := 0
		for _, block := range bytes.Split(buf[:n], []byte("\n\n")) {
			header, _, _ := bytes.Cut(block, []byte("\n"))
			if bytes.HasPrefix(header, []byte("goroutine ")) && !bytes.Contains(header, []byte("[syscall, locked to thread]")) {
				count++
			}
		}
		return count
	}
}

// Echo returns a JSON document compacted. It exists to measure the cost of a
// round trip through the ABI with JSON parsed on the Go side.
func Echo(b []byte, present bool) Result {
	if r := JSON("json", b, present, nil); r != nil {
		return *r
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return Fail(ErrArgument, "json: %v", err)
	}
	return Result{Code: OK, Body: buf.Bytes()}
}
