package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// pinnedDefinition is what a pin and a change waiting for approval both
// record of one definition.
type pinnedDefinition struct {
	// SHA256 is the hash of the whole canonical definition.
	SHA256 string `json:"sha256"`
	// Description, Schema, Annotations, Title and OutputSchema are the
	// hashes of the parts, so a change can be named (Title and OutputSchema
	// are empty for a tool without them).
	Description  string `json:"description"`
	Schema       string `json:"schema"`
	Annotations  string `json:"annotations"`
	Title        string `json:"title,omitempty"`
	OutputSchema string `json:"outputSchema,omitempty"`
	// Definition is the definition itself (canonical JSON), to show what a
	// pending change changes; absent in pins written before it was kept.
	Definition json.RawMessage `json:"definition,omitempty"`
	// Flags name what is suspicious in the definition's text (the FlagInvisible... constants).
	Flags []string `json:"flags,omitempty"`
}

// toolPin is one tool's pinned definition.
type toolPin struct {
	pinnedDefinition
	// Reviewed is set by an approval: the flags above were looked at, so a
	// strict check no longer holds the tool for them.
	Reviewed bool `json:"reviewed,omitempty"`
	// Pending is the changed definition seen since, waiting for approval.
	Pending *pendingPin `json:"pending,omitempty"`
	// Changes counts the changed definitions seen since the pin that no
	// longer wait because the definition came back to the pin (A-B-A): the
	// next change's Seen starts above it, so an approval by name alone
	// cannot approve what arrives after a person reviewed another (A-B-A-C).
	Changes int `json:"changes,omitempty"`
}

// pendingPin is a changed definition held until approved.
type pendingPin struct {
	pinnedDefinition
	// Changed names the parts that differ from the pin: description,
	// schema, annotations, title, output schema (or name); "new" for a tool
	// held for review on first sight.
	Changed []string `json:"changed"`
	// Seen counts the different definitions that waited since the pin (1:
	// only this one), those that stopped waiting when the definition came
	// back to the pin included, so an approval by name alone cannot approve
	// one that arrived after the person looked.
	Seen int `json:"seen,omitempty"`
}

// seen is p's count of waiting definitions (0 in files written before it was kept: one).
func (p *pendingPin) seen() int { return max(p.Seen, 1) }

// pinOf is the pin an approval makes of d.
func (d *pendingPin) pinOf() toolPin {
	return toolPin{pinnedDefinition: d.pinnedDefinition, Reviewed: true}
}

// hashes are a definition's part and whole hashes, and the definition
// itself (canonical JSON).
type hashes struct {
	whole, desc, schema, ann, title, output string
	def                                     json.RawMessage
}

// definitionHashes hashes t's canonical definition. A tool without a title
// and an output schema hashes as it did before they were pinned, so only
// tools with them are held once (their pins lack the parts).
func definitionHashes(t Tool) (hashes, error) {
	canon := func(v any) (string, []byte, error) {
		b, err := canonicalJSON(v)
		if err != nil {
			return "", nil, err
		}
		s := sha256.Sum256(b)
		return hex.EncodeToString(s[:]), b, nil
	}
	var h hashes
	var err error
	var db, sb, ab, tb, ob []byte
	if h.desc, db, err = canon(t.Description); err != nil {
		return h, err
	}
	var schema any
	if len(bytes.TrimSpace(t.Parameters)) > 0 {
		schema = json.RawMessage(t.Parameters)
	}
	if h.schema, sb, err = canon(schema); err != nil {
		return h, fmt.Errorf("the input schema: %w", err)
	}
	ann := map[string]any{"safe": t.Safe, "roles": t.Roles, "capabilities": t.Capabilities}
	if t.RequiresApproval {
		// Only when set, so pins written before the annotation existed still
		// match; dropping it later changes the annotations' hash.
		ann["requiresApproval"] = true
	}
	if a, ok := t.Metadata["annotations"]; ok {
		ann["mcp"] = a
	}
	if h.ann, ab, err = canon(ann); err != nil {
		return h, fmt.Errorf("the annotations: %w", err)
	}
	doc := map[string]any{"name": t.Name, "description": t.Description, "inputSchema": schema, "annotations": ann}
	if kind, name := splitPinKey(t.Name); kind != "" {
		// A prompt's arguments, a resource's URI and MIME type, as the caller put them.
		doc = map[string]any{"kind": kind, "name": name, "description": t.Description, "definition": schema}
	}
	parts := [][]byte{nil, db, sb, ab}
	parts[0], _ = json.Marshal(t.Name)
	title, _ := t.Metadata["title"].(string)
	output := t.Metadata["outputSchema"]
	if title != "" || output != nil {
		if title != "" {
			doc["title"] = title
			if h.title, tb, err = canon(title); err != nil {
				return h, err
			}
		}
		if output != nil {
			doc["outputSchema"] = output
			if h.output, ob, err = canon(output); err != nil {
				return h, fmt.Errorf("the output schema: %w", err)
			}
		}
		parts = append(parts, tb, ob)
	}
	whole := sha256.Sum256(bytes.Join(parts, []byte{'\n'}))
	h.whole = hex.EncodeToString(whole[:])
	if h.def, err = canonicalJSON(doc); err != nil {
		return h, err
	}
	return h, nil
}

// canonicalJSON writes v with object keys sorted and no white space; numbers
// keep their text.
func canonicalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x) // maps marshal with sorted keys
}

// changedParts names the parts of h that differ from the pin.
func (pin *toolPin) changedParts(h hashes) []string {
	var parts []string
	for _, d := range []struct{ name, pinned, now string }{
		{"description", pin.Description, h.desc}, {"schema", pin.Schema, h.schema}, {"annotations", pin.Annotations, h.ann},
		{"title", pin.Title, h.title}, {"output schema", pin.OutputSchema, h.output},
	} {
		if d.pinned != d.now {
			parts = append(parts, d.name)
		}
	}
	if len(parts) == 0 {
		parts = []string{"name"}
	}
	return parts
}
