package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
}

// DefaultLimits are the limits a zero Limits stands for.
var DefaultLimits = Limits{
	MaxSchemaBytes: 1 << 20,
	MaxSchemaDepth: 64,
	MaxEnum:        10000,
	MaxArgsBytes:   1 << 20,
	MaxArgsDepth:   64,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
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
	return d
}

// ErrExternalRef marks a schema refused because a reference points outside it.
var ErrExternalRef = errors.New("reference outside the schema document")

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

// compileSchema checks and compiles one tool schema. raw is kept verbatim by
// the caller; this only reads it.
func compileSchema(raw []byte, lim Limits) (*jsonschema.Schema, error) {
	if len(raw) > lim.MaxSchemaBytes {
		return nil, fmt.Errorf("schema is %d bytes, over the limit of %d", len(raw), lim.MaxSchemaBytes)
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("schema must be a JSON object, got %s", jsonKind(trimmed))
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(trimmed))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %v", err)
	}
	if err := checkSchemaShape(doc, lim, 1); err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	const url = schemaBase + "tool.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema does not compile: %v", err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, compileError(err)
	}
	return sch, nil
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
				parts = append(parts, l.String())
			}
			if len(parts) > 0 {
				return fmt.Errorf("schema is not a valid JSON Schema (draft 2020-12 unless $schema says otherwise): %s", strings.Join(parts, "; "))
			}
		}
	}
	return fmt.Errorf("schema does not compile: %s", strings.ReplaceAll(err.Error(), schemaBase, ""))
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

func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		if b[0] == '-' || (b[0] >= '0' && b[0] <= '9') {
			return "a number"
		}
	}
	return "something that is not JSON"
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

// DecodeValue decodes one JSON document the way ValidateArgs does before
// validating it: numbers become json.Number, so integers and decimals keep
// their exact value, and trailing data is an error. Use it to prepare values
// for Entry.ValidateValue.
func DecodeValue(b []byte) (any, error) { return decodeJSON(b) }

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
