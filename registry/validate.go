package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolselect/toolselect/internal/jsonscan"
)

var printer = message.NewPrinter(language.English)

// Violation is one broken rule in an argument document.
type Violation struct {
	// Pointer is the JSON pointer of the offending value ("" is the whole document).
	Pointer string `json:"pointer"`
	// Rule is the schema keyword that failed, e.g. "required", "type", "enum".
	Rule string `json:"rule"`
	// Message says what was wrong in words a model can act on.
	Message string `json:"message"`
}

func (v Violation) String() string {
	p := v.Pointer
	if p == "" {
		p = "/"
	}
	return fmt.Sprintf("at %s: %s (%s)", p, v.Message, v.Rule)
}

// ValidationError lists every violation found in one argument document.
type ValidationError struct {
	Tool       string      `json:"tool"`
	Violations []Violation `json:"violations"`
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return fmt.Sprintf("invalid arguments for tool %q: %s", e.Tool, strings.Join(parts, "; "))
}

// Is makes errors.Is(err, ErrInvalidArgs) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidArgs }

// validateArgs checks one raw argument document against a compiled schema
// and returns the value it checked, encoded again (reencode). sch may be nil for a schema-less tool:
// then only the document's shape is checked.
func validateArgs(tool string, sch *jsonschema.Schema, raw []byte, lim Limits) (json.RawMessage, error) {
	fail := func(pointer, rule, msg string) error {
		return &ValidationError{Tool: tool, Violations: []Violation{{Pointer: pointer, Rule: rule, Message: msg}}}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if len(raw) > lim.MaxArgsBytes {
		return nil, fail("", "maxBytes", fmt.Sprintf("the arguments are %d bytes, over the limit of %d", len(raw), lim.MaxArgsBytes))
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, fail("", "json", "the arguments are not valid JSON: "+err.Error())
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fail("", "type", "the arguments must be a JSON object, got "+jsonscan.Kind(raw))
	}
	if deeperThan(v, lim.MaxArgsDepth) {
		return nil, fail("", "maxDepth", fmt.Sprintf("the arguments nest deeper than %d levels", lim.MaxArgsDepth))
	}
	checked, pointer, key, dup, rounded, tooBig := reencode(raw)
	if dup {
		return nil, fail(pointer, "duplicateKey", fmt.Sprintf("the key %q appears more than once in one object; give it once", key))
	}
	if tooBig {
		return nil, fail(pointer, "number", tooBigMessage(key))
	}
	if rounded {
		// What is validated is what is passed on: the numbers as a
		// receiver's float reads them (see reencode).
		if v, err = decodeJSON(checked); err != nil {
			return nil, fail("", "json", "the arguments are not valid JSON: "+err.Error())
		}
	}
	if err := validateValue(tool, sch, v); err != nil {
		return nil, err
	}
	return checked, nil
}

// tooBigMessage says why the number text is refused.
func tooBigMessage(text string) string {
	return fmt.Sprintf("the number %s is beyond the range of a 64-bit float, what a receiver reads it as", text)
}

// validateValue checks an already decoded value (numbers as json.Number or float64).
func validateValue(tool string, sch *jsonschema.Schema, v any) error {
	if sch == nil {
		return nil
	}
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ValidationError{Tool: tool, Violations: []Violation{{Rule: "schema", Message: err.Error()}}}
	}
	out := &ValidationError{Tool: tool}
	collectViolations(ve, &out.Violations)
	if len(out.Violations) == 0 {
		out.Violations = []Violation{{Pointer: jsonPointer(ve.InstanceLocation), Rule: "schema", Message: ve.ErrorKind.LocalizedString(printer)}}
	}
	sort.SliceStable(out.Violations, func(i, j int) bool {
		a, b := out.Violations[i], out.Violations[j]
		if a.Pointer != b.Pointer {
			return a.Pointer < b.Pointer
		}
		return a.Rule < b.Rule
	})
	return out
}

// collectViolations flattens the validator's error tree into its leaves, the
// places where a rule actually failed, dropping duplicates.
func collectViolations(e *jsonschema.ValidationError, out *[]Violation) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collectViolations(c, out)
		}
		return
	}
	if _, ok := e.ErrorKind.(*kind.Group); ok {
		return
	}
	if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
		// The validator lists them in map order; keep messages reproducible.
		sorted := append([]string(nil), ap.Properties...)
		sort.Strings(sorted)
		e.ErrorKind = &kind.AdditionalProperties{Properties: sorted}
	}
	v := Violation{
		Pointer: jsonPointer(e.InstanceLocation),
		Rule:    ruleOf(e.ErrorKind),
		Message: e.ErrorKind.LocalizedString(printer),
	}
	for _, have := range *out {
		if have == v {
			return
		}
	}
	*out = append(*out, v)
}

func ruleOf(k jsonschema.ErrorKind) string {
	path := k.KeywordPath()
	if len(path) == 0 {
		switch k.(type) {
		case *kind.FalseSchema:
			return "false"
		case *kind.Reference:
			return "$ref"
		}
		return "schema"
	}
	if path[0] == "dependency" { // draft-07 "dependencies", reported per property
		return "dependencies"
	}
	return path[0]
}

func jsonPointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		sb.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return sb.String()
}
