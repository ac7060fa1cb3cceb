package registry

import (
	"encoding/json"
	"fmt"
	"github.com/toolselect/toolselect/internal/strictjson"
)

// NoSchemaMode says how a tool registered without a schema may be run.
type NoSchemaMode string

// The no-schema modes. The executor enforces them.
const (
	// NoSchemaReadOnly runs the tool only if it declares the readOnly capability.
	NoSchemaReadOnly NoSchemaMode = "read-only"
	// NoSchemaHumanApproval runs the tool only after an approver says yes.
	NoSchemaHumanApproval NoSchemaMode = "human-approval"
	// NoSchemaFull runs the tool like any other; its calls are audited as unvalidated.
	NoSchemaFull NoSchemaMode = "full"
)

// Valid reports whether m is one of the three defined modes.
func (m NoSchemaMode) Valid() bool {
	switch m {
	case NoSchemaReadOnly, NoSchemaHumanApproval, NoSchemaFull:
		return true
	}
	return false
}

// Well-known capability names. Capabilities are free-form strings; these are
// the ones toolselect itself reads.
const (
	CapabilityReadOnly  = "readOnly"
	CapabilityStreaming = "streaming"
)

// Tool is the canonical definition of one tool.
//
// Parameters holds the JSON Schema of the tool's arguments exactly as given;
// it is never rewritten. Safe defaults to true when the field is absent from
// JSON; a Tool built in Go must set it explicitly (use NewTool or set Safe).
type Tool struct {
	// Type is always "function"; empty is read as "function".
	Type string `json:"type,omitempty"`
	// Name identifies the tool: 1 to 256 bytes, no control characters.
	Name string `json:"name"`
	// Description tells a model what the tool does.
	Description string `json:"description"`
	// Parameters is the JSON Schema of the arguments, verbatim.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Strict asks providers that support it for strict schema adherence.
	Strict bool `json:"strict,omitempty"`
	// AllowNoSchema lets a tool register without Parameters (requires NoSchemaMode).
	AllowNoSchema bool `json:"allowNoSchema,omitempty"`
	// NoSchemaMode says how a schema-less tool may run.
	NoSchemaMode NoSchemaMode `json:"noSchemaMode,omitempty"`
	// Safe is false for a tool that must never be offered unless unsafe tools are allowed.
	Safe bool `json:"safe"`
	// RequiresApproval says every call must be approved by someone before
	// it runs, whatever else the caller allows: without an approver it is
	// refused ([RuleApprovalRequired]). Pinned with the annotations.
	RequiresApproval bool `json:"requiresApproval,omitempty"`
	// Tags are free-form labels used by ranking.
	Tags []string `json:"tags,omitempty"`
	// Roles lists who may use the tool; empty means everyone.
	Roles []string `json:"roles,omitempty"`
	// Capabilities lists abilities such as "streaming" or "readOnly".
	Capabilities []string `json:"capabilities,omitempty"`
	// Metadata is free-form and carried through untouched.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// NewTool returns a safe function tool with the given name, description and schema.
func NewTool(name, description string, parameters json.RawMessage) Tool {
	return Tool{Type: "function", Name: name, Description: description, Parameters: parameters, Safe: true}
}

// UnmarshalJSON decodes a canonical tool, defaulting Safe to true when
// absent. Keys another program may have added are left alone, but one that
// matches a field only in case ("Safe": true beside "safe": false) and a name
// given twice at any depth are refused (strictjson).
func (t *Tool) UnmarshalJSON(data []byte) error {
	type plain Tool
	p := plain{Safe: true}
	if err := strictjson.UnmarshalKnown(data, &p); err != nil {
		return err
	}
	*t = Tool(p)
	return nil
}

// HasSchema reports whether the tool carries a parameters schema.
func (t *Tool) HasSchema() bool {
	return len(t.Parameters) > 0 && string(t.Parameters) != "null"
}

// HasCapability reports whether the tool declares capability c.
func (t *Tool) HasCapability(c string) bool {
	for _, have := range t.Capabilities {
		if have == c {
			return true
		}
	}
	return false
}

// ApprovalRequired reports whether every call of the tool needs an
// approver's yes, whoever calls it: it is marked RequiresApproval, or it has
// no schema and runs in human-approval mode.
func (t *Tool) ApprovalRequired() bool {
	return t.RequiresApproval || (!t.HasSchema() && t.NoSchemaMode == NoSchemaHumanApproval)
}

// ReadOnly reports whether the tool declares the readOnly capability.
func (t *Tool) ReadOnly() bool { return t.HasCapability(CapabilityReadOnly) }

// AllowedFor reports whether a caller holding roles may use the tool. A tool
// with no roles is open to everyone; otherwise the caller needs one of them.
func (t *Tool) AllowedFor(roles []string) bool {
	if len(t.Roles) == 0 {
		return true
	}
	for _, want := range t.Roles {
		for _, have := range roles {
			if want == have {
				return true
			}
		}
	}
	return false
}

// clone returns a deep copy so callers cannot reach the registry's own slices.
func (t Tool) clone() Tool {
	c := t
	c.Parameters = append(json.RawMessage(nil), t.Parameters...)
	c.Tags = append([]string(nil), t.Tags...)
	c.Roles = append([]string(nil), t.Roles...)
	c.Capabilities = append([]string(nil), t.Capabilities...)
	if t.Metadata != nil {
		// Metadata is JSON-shaped; a JSON round trip is the simplest deep copy.
		if b, err := json.Marshal(t.Metadata); err == nil {
			var m map[string]any
			if json.Unmarshal(b, &m) == nil {
				c.Metadata = m
			}
		}
	}
	return c
}

// RegistrationError says which tool was refused and why.
type RegistrationError struct {
	Tool   string // the tool's name as given (may be empty)
	Index  int    // position in a batch or catalog, -1 when registered alone
	Reason string
	Err    error // underlying cause, if any
	// Rule names the rule the definition broke, for the refusals a front
	// door words in its own names ([RuleNoSchema], [RuleNoSchemaMode]); ""
	// for the others, whose Reason needs no other words.
	Rule Rule
}

func (e *RegistrationError) Error() string {
	where := fmt.Sprintf("tool %q", e.Tool)
	if e.Index >= 0 {
		where = fmt.Sprintf("tool #%d %q", e.Index, e.Tool)
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", where, e.Reason, e.Err)
	}
	return fmt.Sprintf("%s: %s", where, e.Reason)
}

func (e *RegistrationError) Unwrap() error { return e.Err }
