package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Call is one requested tool call, from any source: the selector, a
// provider's tool_calls, an MCP tools/call, or hand-written.
type Call struct {
	// ID is the caller's identifier for the call (e.g. an OpenAI tool_call id); optional.
	ID string `json:"id,omitempty"`
	// Tool is the tool's name: canonical, or as a provider view mapped it.
	Tool string `json:"tool"`
	// Args is a JSON object, or a JSON string holding one (the OpenAI
	// "arguments" form). Empty or null means {}.
	Args json.RawMessage `json:"args,omitempty"`
	// Reasoning is why the model chose the call; carried, never interpreted.
	Reasoning string `json:"reasoning,omitempty"`
}

// ParseToolCalls reads provider tool calls from JSON: an array (or a single
// object, or an object with a "tool_calls" field such as an OpenAI assistant
// message) of any of
//
//	{"id","type":"function","function":{"name","arguments"}}   OpenAI Chat Completions
//	{"type":"function_call","call_id","name","arguments"}       OpenAI Responses
//	{"type":"tool_use","id","name","input"}                     Anthropic
//	{"name","arguments"}                                        MCP tools/call params, Ollama
//	{"tool","args","reasoning"}                                 toolselect's own calls
//
// Arguments may be an object or a JSON string holding one. Content blocks of
// other types in an Anthropic message (e.g. "text") are skipped.
func ParseToolCalls(data []byte) ([]Call, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("tool calls: empty input")
	}
	var items []json.RawMessage
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &items); err != nil {
			return nil, fmt.Errorf("tool calls: %w", err)
		}
	case '{':
		var wrapper struct {
			ToolCalls json.RawMessage `json:"tool_calls"`
			Content   json.RawMessage `json:"content"`
			Calls     json.RawMessage `json:"calls"`
		}
		if err := json.Unmarshal(data, &wrapper); err != nil {
			return nil, fmt.Errorf("tool calls: %w", err)
		}
		switch {
		case isArray(wrapper.ToolCalls):
			return ParseToolCalls(wrapper.ToolCalls)
		case isArray(wrapper.Calls):
			return ParseToolCalls(wrapper.Calls)
		case isArray(wrapper.Content):
			return ParseToolCalls(wrapper.Content)
		}
		items = []json.RawMessage{data}
	default:
		return nil, errors.New("tool calls: want a JSON array or object")
	}
	out := make([]Call, 0, len(items))
	for i, raw := range items {
		c, skip, err := parseOne(raw)
		if err != nil {
			return nil, fmt.Errorf("tool calls: item #%d: %w", i, err)
		}
		if !skip {
			out = append(out, c)
		}
	}
	return out, nil
}

func isArray(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '['
}

func parseOne(raw json.RawMessage) (Call, bool, error) {
	var v struct {
		ID        string          `json:"id"`
		CallID    string          `json:"call_id"`
		Type      string          `json:"type"`
		Name      string          `json:"name"`
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
		Args      json.RawMessage `json:"args"`
		Input     json.RawMessage `json:"input"`
		Reasoning string          `json:"reasoning"`
		Function  *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return Call{}, false, err
	}
	switch v.Type {
	case "", "function", "function_call", "tool_use", "tool_call":
	default:
		return Call{}, true, nil // another content block type, e.g. Anthropic "text"
	}
	c := Call{ID: v.ID, Reasoning: v.Reasoning}
	if v.CallID != "" {
		c.ID = v.CallID
	}
	switch {
	case v.Function != nil:
		c.Tool, c.Args = v.Function.Name, v.Function.Arguments
	case v.Tool != "":
		c.Tool, c.Args = v.Tool, v.Args
	default:
		c.Tool = v.Name
		c.Args = v.Arguments
		if c.Args == nil {
			c.Args = v.Input
		}
	}
	if c.Tool == "" {
		return Call{}, false, errors.New("no tool name")
	}
	return c, false, nil
}

// Arguments returns c.Args as the JSON text the executor validates: a JSON
// string is unquoted (its content may still be invalid JSON; validation
// reports that), empty and null become {}.
func (c Call) Arguments() json.RawMessage { return normalizeArgs(c.Args) }

// normalizeArgs turns the received arguments into the JSON text to validate:
// a JSON string is unquoted (its content may still be invalid JSON; the
// validator reports that), empty and null become {}.
func normalizeArgs(raw json.RawMessage) json.RawMessage {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return json.RawMessage("{}")
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err == nil {
			s = strings.TrimSpace(s)
			if s == "" || s == "null" {
				return json.RawMessage("{}")
			}
			return json.RawMessage(s)
		}
	}
	return json.RawMessage(b)
}

// compactArgs returns args compacted for the audit trail, or args unchanged
// when they are not valid JSON.
func compactArgs(args json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err != nil {
		// Not JSON: keep it as a JSON string so the record stays valid JSON.
		b, _ := json.Marshal(string(args))
		return b
	}
	return buf.Bytes()
}
