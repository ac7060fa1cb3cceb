package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxCatalogBytes caps what ReadCatalog reads (64 MiB).
const MaxCatalogBytes = 64 << 20

// ReadCatalog reads a catalog and detects its format: the canonical form (a
// JSON array or JSON Lines), an OpenAI `tools` array (Chat Completions or
// Responses), an Anthropic tools array, an MCP tools/list result (bare, or
// inside a JSON-RPC response), or an object with a "tools" array of any of
// these. It returns the tools and the format of the first tool (FormatCanonical
// for an empty catalog). Nothing is registered.
func ReadCatalog(r io.Reader) ([]Tool, Format, error) {
	return readCatalog(r, MaxCatalogBytes)
}

func readCatalog(r io.Reader, max int64) ([]Tool, Format, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, "", fmt.Errorf("reading catalog: %w", err)
	}
	if int64(len(data)) > max {
		return nil, "", fmt.Errorf("catalog is larger than %d bytes", max)
	}
	return ParseCatalog(data)
}

// LoadCatalogFile reads a catalog file (see ReadCatalog).
func LoadCatalogFile(path string) ([]Tool, Format, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	tools, format, err := ReadCatalog(f)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return tools, format, nil
}

// ParseCatalog is ReadCatalog over bytes.
func ParseCatalog(data []byte) ([]Tool, Format, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, "", errors.New("catalog is empty")
	}
	var items []json.RawMessage
	var lines []int // 1-based line of each item for JSON Lines, else nil
	switch trimmed[0] {
	case '[':
		if err := json.Unmarshal(trimmed, &items); err != nil {
			return nil, "", fmt.Errorf("catalog is not a valid JSON array: %w", err)
		}
	case '{':
		values, at, err := splitValues(data)
		if err != nil {
			return nil, "", err
		}
		if len(values) == 1 {
			inner, ok, err := unwrapToolsObject(values[0])
			if err != nil {
				return nil, "", err
			}
			if ok {
				items = inner
				break
			}
		}
		items, lines = values, at
	default:
		return nil, "", fmt.Errorf("catalog must be a JSON array, JSON Lines or an object with \"tools\", got %s", JSONKind(trimmed))
	}
	tools := make([]Tool, 0, len(items))
	var first Format
	for i, raw := range items {
		t, f, err := decodeTool(raw)
		if err != nil {
			if lines != nil {
				return nil, "", fmt.Errorf("catalog line %d: %w", lines[i], err)
			}
			return nil, "", fmt.Errorf("catalog item #%d: %w", i, err)
		}
		if i == 0 {
			first = f
		}
		tools = append(tools, t)
	}
	if first == "" {
		first = FormatCanonical
	}
	return tools, first, nil
}

// splitValues reads a stream of JSON values (JSON Lines or concatenated
// objects) and records the line each starts on.
func splitValues(data []byte) ([]json.RawMessage, []int, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []json.RawMessage
	var at []int
	for {
		offset := dec.InputOffset()
		var v json.RawMessage
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		start := int(offset) + len(data[offset:]) - len(bytes.TrimLeft(data[offset:], " \t\r\n"))
		line := 1 + bytes.Count(data[:start], []byte("\n"))
		if err != nil {
			return nil, nil, fmt.Errorf("catalog line %d: invalid JSON: %v", line, err)
		}
		out = append(out, v)
		at = append(at, line)
	}
	return out, at, nil
}

// unwrapToolsObject finds a tools array in {"tools":[...]} or a JSON-RPC
// {"result":{"tools":[...]}}. ok is false for an object that is none of
// these (a single tool); a JSON-RPC error response or a "tools" member that
// is not an array is an error.
func unwrapToolsObject(raw json.RawMessage) (tools []json.RawMessage, ok bool, err error) {
	var probe struct {
		Tools   json.RawMessage `json:"tools"`
		Result  json.RawMessage `json:"result"`
		JSONRPC string          `json:"jsonrpc"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return nil, false, nil
	}
	if probe.JSONRPC != "" && probe.Error != nil {
		return nil, false, fmt.Errorf("catalog is a JSON-RPC error response (code %d): %s", probe.Error.Code, probe.Error.Message)
	}
	list := probe.Tools
	where := `"tools"`
	if list == nil && probe.Result != nil {
		var res struct {
			Tools json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(probe.Result, &res) != nil || res.Tools == nil {
			if probe.JSONRPC != "" {
				return nil, false, errors.New(`catalog is a JSON-RPC response without "result.tools" (not a tools/list result)`)
			}
			return nil, false, nil
		}
		list, where = res.Tools, `"result.tools"`
	}
	if list == nil {
		return nil, false, nil
	}
	if err := json.Unmarshal(list, &tools); err != nil {
		return nil, false, fmt.Errorf("catalog member %s must be an array of tools, got %s", where, JSONKind(list))
	}
	return tools, true, nil
}

// decodeTool converts one catalog item of any supported shape to a Tool.
func decodeTool(raw json.RawMessage) (Tool, Format, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return Tool{}, "", fmt.Errorf("a tool must be a JSON object: %v", err)
	}
	str := func(key string) string {
		var s string
		_ = json.Unmarshal(probe[key], &s)
		return s
	}
	nameOf := func() string {
		if n := str("name"); n != "" {
			return n
		}
		return "(no name)"
	}
	switch {
	case probe["function"] != nil && str("type") == "function":
		// OpenAI Chat Completions (or Ollama): {"type":"function","function":{...}}.
		var fn struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      *bool           `json:"strict"`
		}
		if err := json.Unmarshal(probe["function"], &fn); err != nil {
			return Tool{}, "", fmt.Errorf("openai tool: \"function\" is not an object: %v", err)
		}
		t := NewTool(fn.Name, fn.Description, nullToNil(fn.Parameters))
		t.Strict = fn.Strict != nil && *fn.Strict
		return t, FormatOpenAI, nil
	case probe["input_schema"] != nil:
		var a struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return Tool{}, "", fmt.Errorf("anthropic tool %q: %v", nameOf(), err)
		}
		return NewTool(a.Name, a.Description, nullToNil(a.InputSchema)), FormatAnthropic, nil
	case probe["inputSchema"] != nil:
		var m struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations *MCPAnnotations `json:"annotations"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return Tool{}, "", fmt.Errorf("mcp tool %q: %v", nameOf(), err)
		}
		t := NewTool(m.Name, m.Description, nullToNil(m.InputSchema))
		if m.Title != "" {
			t.Metadata = map[string]any{"title": m.Title}
		}
		m.Annotations.Apply(&t)
		return t, FormatMCP, nil
	case str("type") != "" && str("type") != "function":
		return Tool{}, "", fmt.Errorf("tool %q has type %q: only function tools can be registered (provider built-in tools have no schema to check calls against)", nameOf(), str("type"))
	}
	var t Tool
	if err := json.Unmarshal(raw, &t); err != nil {
		return Tool{}, "", fmt.Errorf("tool %q: %v", nameOf(), err)
	}
	t.Parameters = nullToNil(t.Parameters)
	if str("type") == "function" && probe["strict"] != nil && probe["safe"] == nil {
		return t, FormatOpenAIResponses, nil
	}
	return t, FormatCanonical, nil
}

// MCPAnnotations are the hints an MCP server attaches to a tool.
type MCPAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Apply maps the hints onto a tool: an explicit destructiveHint (on a tool not
// marked read-only) makes it unsafe, readOnlyHint adds the readOnly capability.
// Absent hints leave the tool safe: the MCP default for destructiveHint is
// "true", but applied literally it would mark nearly every real tool unsafe,
// so only an explicit declaration counts.
func (a *MCPAnnotations) Apply(t *Tool) {
	if a == nil {
		return
	}
	readOnly := a.ReadOnlyHint != nil && *a.ReadOnlyHint
	if readOnly && !t.ReadOnly() {
		t.Capabilities = append(t.Capabilities, CapabilityReadOnly)
	}
	if !readOnly && a.DestructiveHint != nil && *a.DestructiveHint {
		t.Safe = false
	}
	if a.Title != "" {
		if t.Metadata == nil {
			t.Metadata = map[string]any{}
		}
		if _, ok := t.Metadata["title"]; !ok {
			t.Metadata["title"] = a.Title
		}
	}
}

func nullToNil(b json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 || string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	return b
}

// RegisterValid registers every tool that passes and returns the refusals,
// one *RegistrationError each, with the tool's catalog index. It is the
// lenient counterpart of RegisterAll for ranking messy catalogs; execution
// paths should use RegisterAll.
func (r *Registry) RegisterValid(tools []Tool) []error {
	var refused []error
	for i, t := range tools {
		if err := r.Register(t); err != nil {
			var re *RegistrationError
			if errors.As(err, &re) {
				re.Index = i
			}
			refused = append(refused, err)
		}
	}
	return refused
}

// LoadFile reads a catalog file and registers all of it atomically.
func (r *Registry) LoadFile(path string) error {
	tools, _, err := LoadCatalogFile(path)
	if err != nil {
		return err
	}
	if err := r.RegisterAll(tools); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
