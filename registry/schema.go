package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolselect/toolselect/internal/strictjson"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/toolselect/toolselect/internal/jsonscan"
)

// Limits bounds what registration and validation accept. The zero value of a
// field means the default.
type Limits struct {
	// MaxSchemaBytes caps a tool's parameters schema (default 1 MiB).
	MaxSchemaBytes int
	// MaxSchemaDepth caps how many objects and arrays a schema nests inside
	// one another; a flat object is 1 (default 64).
	MaxSchemaDepth int
	// MaxEnum caps the number of values in one enum (default 10,000).
	MaxEnum int
	// MaxArgsBytes caps an argument document (default 1 MiB).
	MaxArgsBytes int
	// MaxArgsDepth caps how many objects and arrays an argument document nests
	// inside one another; a flat object is 1 (default 64).
	MaxArgsDepth int
	// MaxPatternSize caps the compiled size (Go regexp program instructions)
	// of one "pattern" or "patternProperties" regular expression (default
	// 10,000). Compiling and matching cost grow with it.
	MaxPatternSize int
	// MaxPatternWork caps the work of one pattern match: the string's length
	// in bytes times the pattern's compiled size (default 10,000,000, well
	// under a second). Go's regexp is linear in the input, but a 100-instruction
	// unanchored pattern over a 1 MiB string still takes seconds; a string over
	// the budget fails the pattern (fail-closed) instead.
	MaxPatternWork int
	// MaxDescriptionBytes caps a tool's description (default 64 KiB); a
	// description is sent to the model with every selection.
	MaxDescriptionBytes int
}

// defaultLimits are the limits a zero Limits stands for.
var defaultLimits = Limits{
	MaxSchemaBytes: 1 << 20,
	MaxSchemaDepth: 64,
	MaxEnum:        10000,
	MaxArgsBytes:   1 << 20,
	MaxArgsDepth:   64,

	MaxPatternSize:      10000,
	MaxPatternWork:      10_000_000,
	MaxDescriptionBytes: 64 << 10,
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	d := defaultLimits
	if l.MaxSchemaBytes > 0 {
		d.MaxSchemaBytes = l.MaxSchemaBytes
	}
	if l.MaxSchemaDepth > 0 {
		d.MaxSchemaDepth = l.MaxSchemaDepth
	}
	if l.MaxEnum > 0 {
		d.MaxEnum = l.MaxEnum
	}
	if l.MaxArgsBytes > 0 {
		d.MaxArgsBytes = l.MaxArgsBytes
	}
	if l.MaxArgsDepth > 0 {
		d.MaxArgsDepth = l.MaxArgsDepth
	}
	if l.MaxPatternSize > 0 {
		d.MaxPatternSize = l.MaxPatternSize
	}
	if l.MaxPatternWork > 0 {
		d.MaxPatternWork = l.MaxPatternWork
	}
	if l.MaxDescriptionBytes > 0 {
		d.MaxDescriptionBytes = l.MaxDescriptionBytes
	}
	return d
}

// refusingLoader is installed in every compiler: toolselect never loads a
// schema from a file, a URL or anything else outside the document at hand.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, ErrExternalRef
}

// schemaBase is the base URI each tool schema is compiled under. Relative
// references resolve against it, so a "$ref": "other.json" shows up at the
// loader as schemaBase+"other.json" and is refused there.
const schemaBase = "http://toolselect.invalid/schema/"

func displayURL(u string) string {
	return strings.TrimPrefix(u, schemaBase)
}

// checkSchema checks one tool schema and compiles it, or leaves the
// compiling to the first validation when precheck decides it valid (sch is
// nil then, and required holds its top-level "required"). raw is kept
// verbatim by the caller; this only reads it.
func checkSchema(raw []byte, lim Limits) (sch *jsonschema.Schema, deferred bool, required []string, err error) {
	if ok, required := decidedValid(raw, lim); ok {
		return nil, true, required, nil
	}
	sch, err = compileSchema(raw, lim)
	return sch, false, nil, err
}

// decidedValid reports whether precheck decides raw valid (within the size
// limit, valid JSON) and its top-level "required".
func decidedValid(raw []byte, lim Limits) (bool, []string) {
	if len(raw) > lim.MaxSchemaBytes || !validJSON(raw) {
		return false, nil
	}
	return precheck(raw, lim)
}

// compileSchema checks and compiles one tool schema.
func compileSchema(raw []byte, lim Limits) (*jsonschema.Schema, error) {
	doc, err := decodeSchema(raw, lim)
	if err != nil {
		return nil, err
	}
	return compileDoc(doc, lim)
}

// decodeSchema decodes a schema and enforces the size and shape limits.
func decodeSchema(raw []byte, lim Limits) (any, error) {
	if len(raw) > lim.MaxSchemaBytes {
		return nil, fmt.Errorf("schema is %d bytes, over the limit of %d", len(raw), lim.MaxSchemaBytes)
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("schema must be a JSON object, got %s", jsonscan.Kind(trimmed))
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(trimmed))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	// {"type": "string", "type": "integer"} is one schema to the validator
	// (the last) and another to a reader or a provider keeping the first.
	if err := strictjson.Check(trimmed, nil); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if err := checkSchemaShape(doc, lim, 1); err != nil {
		return nil, err
	}
	return doc, nil
}

// compileDoc compiles a decoded schema with the library: the meta-schema
// check, references (none outside the document), bounded patterns.
func compileDoc(doc any, lim Limits) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	c.UseRegexpEngine(boundedRegexpEngine(lim))
	if err := useFormats(c); err != nil {
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	const url = schemaBase + "tool.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, compileError(err)
	}
	if err := refCycleAtRoot(sch); err != nil {
		return nil, err
	}
	return sch, nil
}

// refCycleAtRoot refuses a schema whose $refs loop back to where they
// started without reading any of the instance ({"$ref":"#"}, a -> b -> a):
// every argument document would fail it. Loops below a property (a tree
// schema) are fine and are bounded by MaxArgsDepth.
func refCycleAtRoot(sch *jsonschema.Schema) error {
	err := sch.Validate(map[string]any{})
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return nil
	}
	var found func(e *jsonschema.ValidationError) bool
	found = func(e *jsonschema.ValidationError) bool {
		if _, ok := e.ErrorKind.(*kind.RefCycle); ok {
			return true
		}
		for _, c := range e.Causes {
			if found(c) {
				return true
			}
		}
		return false
	}
	if found(ve) {
		return errors.New("schema's $ref loops back to itself without reading any of the arguments")
	}
	return nil
}

// boundedRegexp is Go's regexp (linear in the input) with a work budget per
// match: a string longer than MaxPatternWork / size fails the pattern.
type boundedRegexp struct {
	re      *regexp.Regexp
	maxLen  int
	pattern string
}

func (b *boundedRegexp) MatchString(s string) bool {
	if len(s) > b.maxLen {
		return false
	}
	return b.re.MatchString(s)
}

func (b *boundedRegexp) String() string { return b.pattern }

// boundedRegexpEngine compiles patterns with Go's regexp, refusing those
// whose program exceeds lim.MaxPatternSize instructions.
func boundedRegexpEngine(lim Limits) jsonschema.RegexpEngine {
	return func(pattern string) (jsonschema.Regexp, error) {
		parsed, err := syntax.Parse(pattern, syntax.Perl)
		if err != nil {
			return nil, err
		}
		prog, err := syntax.Compile(parsed.Simplify())
		if err != nil {
			return nil, err
		}
		size := len(prog.Inst)
		if size > lim.MaxPatternSize {
			return nil, fmt.Errorf("the pattern compiles to %d instructions, over the limit of %d", size, lim.MaxPatternSize)
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return nil, err
		}
		return &boundedRegexp{re: re, maxLen: lim.MaxPatternWork / max(size, 1), pattern: pattern}, nil
	}
}

// compileError turns the compiler's error into one line that says where the
// schema is wrong.
func compileError(err error) error {
	var load *jsonschema.LoadURLError
	if errors.As(err, &load) {
		return fmt.Errorf("%w: %q cannot be resolved inside the document (toolselect loads no files or URLs)", ErrExternalRef, displayURL(load.URL))
	}
	var meta *jsonschema.SchemaValidationError
	if errors.As(err, &meta) {
		var ve *jsonschema.ValidationError
		if errors.As(meta.Err, &ve) {
			var leaves []Violation
			collectViolations(ve, &leaves)
			parts := make([]string, 0, len(leaves))
			for _, l := range leaves {
				parts = append(parts, clip(l.String(), 512))
			}
			if len(parts) > 0 {
				return fmt.Errorf("schema is not a valid JSON Schema (draft 2020-12 unless $schema says otherwise): %s", strings.Join(parts, "; "))
			}
		}
	}
	return fmt.Errorf("schema does not compile: %s", clip(strings.ReplaceAll(err.Error(), schemaBase, ""), 2048))
}

// clip bounds a message that may quote a schema's own (possibly huge)
// content: it keeps the head and the tail (where the reason is), cut on rune
// boundaries.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/2, len(s)-n/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + " … " + s[tail:]
}

// checkSchemaShape walks a decoded schema and enforces the structural limits
// before the compiler sees it. depth is the nesting level of v, counting
// objects and arrays only: the root object is level 1.
func checkSchemaShape(v any, lim Limits, depth int) error {
	switch x := v.(type) {
	case map[string]any:
		if depth > lim.MaxSchemaDepth {
			return fmt.Errorf("schema nests deeper than %d levels", lim.MaxSchemaDepth)
		}
		for k, child := range x {
			if k == "enum" {
				if arr, ok := child.([]any); ok && len(arr) > lim.MaxEnum {
					return fmt.Errorf("an enum lists %d values, over the limit of %d", len(arr), lim.MaxEnum)
				}
			}
			if err := checkSchemaShape(child, lim, depth+1); err != nil {
				return err
			}
		}
	case []any:
		if depth > lim.MaxSchemaDepth {
			return fmt.Errorf("schema nests deeper than %d levels", lim.MaxSchemaDepth)
		}
		for _, child := range x {
			if err := checkSchemaShape(child, lim, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// deeperThan reports whether a decoded JSON value nests more than max
// objects and arrays inside one another (a flat object is 1 level).
func deeperThan(v any, max int) bool {
	switch x := v.(type) {
	case map[string]any:
		if max <= 0 {
			return true
		}
		for _, c := range x {
			if deeperThan(c, max-1) {
				return true
			}
		}
	case []any:
		if max <= 0 {
			return true
		}
		for _, c := range x {
			if deeperThan(c, max-1) {
				return true
			}
		}
	}
	return false
}

// decodeJSON decodes with json.Number so integers keep their precision,
// which is what the schema validator expects.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	// More is false before a stray '}' or ']', so ask for the next token:
	// only the end of the input may follow the value.
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}
