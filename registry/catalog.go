package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolselect/toolselect/internal/strictjson"
	"io"
	"os"
	"reflect"

	"github.com/toolselect/toolselect/internal/jsonscan"
	"github.com/toolselect/toolselect/internal/par"
)

// readCatalog reads at most max bytes of a catalog and parses it (see
// ParseCatalog).
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

// LoadCatalogFile reads a catalog file (see ParseCatalog).
func LoadCatalogFile(path string) ([]Tool, Format, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	var tools []Tool
	var format Format
	if st, serr := f.Stat(); serr == nil && st.Mode().IsRegular() {
		// A regular file is read into one buffer of its size, not grown.
		if st.Size() > MaxCatalogBytes {
			return nil, "", fmt.Errorf("%s: catalog is larger than %d bytes", path, MaxCatalogBytes)
		}
		data := make([]byte, st.Size())
		if _, err = io.ReadFull(f, data); err != nil {
			return nil, "", fmt.Errorf("%s: reading catalog: %w", path, err)
		}
		tools, format, err = ParseCatalog(data)
	} else {
		tools, format, err = readCatalog(f, MaxCatalogBytes)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return tools, format, nil
}

// ParseCatalog reads a catalog and detects its format: the canonical form (a
// JSON array or JSON Lines), an OpenAI `tools` array (Chat Completions or
// Responses), an Anthropic tools array, an MCP tools/list result (bare, or
// inside a JSON-RPC response), or an object with a "tools" array of any of
// these. It returns the tools and the format of the first tool (FormatCanonical
// for an empty catalog). Nothing is registered. It reads in time linear in the
// input: one pass finds where each tool starts and ends, then the tools are
// decoded in parallel. Every error names the line and column (1-based, in
// characters) where the catalog goes wrong.
func ParseCatalog(data []byte) ([]Tool, Format, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	start := jsonscan.SkipSpace(data, 0)
	if start == len(data) {
		return nil, "", errors.New("catalog is empty")
	}
	var items []span
	var err error
	inArray := true
	switch data[start] {
	case '[':
		var end int
		items, end, err = splitArray(data, start)
		if err == nil && jsonscan.SkipSpace(data, end) != len(data) {
			err = syntaxAt(data, jsonscan.SkipSpace(data, end), "invalid JSON: unexpected data after the catalog's JSON array")
		}
	case '{':
		inArray = false
		items, err = splitValues(data, start)
		if err == nil && len(items) == 1 {
			var inner []span
			var ok bool
			inner, ok, err = unwrapToolsObject(data, items[0])
			if ok {
				items, inArray = inner, true
			}
		}
	default:
		return nil, "", fmt.Errorf("catalog must be a JSON array, JSON Lines or an object with \"tools\", got %s", jsonscan.Kind(data[start:]))
	}
	if err != nil {
		return nil, "", err
	}
	tools := make([]Tool, len(items))
	formats := make([]Format, len(items))
	errs := make([]error, len(items))
	par.For(len(items), 64, func(i int) {
		tools[i], formats[i], errs[i] = decodeTool(data[items[i].start:items[i].end])
	})
	for i, err := range errs {
		if err == nil {
			continue
		}
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, "", syntaxAt(data, items[i].start+int(max(syn.Offset-1, 0)), "invalid JSON: "+syn.Error())
		}
		line, col := position(data, items[i].start)
		if inArray {
			return nil, "", fmt.Errorf("catalog item #%d at line %d, column %d: %w", i, line, col, err)
		}
		return nil, "", fmt.Errorf("catalog line %d, column %d: %w", line, col, err)
	}
	first := FormatCanonical
	if len(formats) > 0 {
		first = formats[0]
	}
	return tools, first, nil
}

// unwrapToolsObject finds a tools array in {"tools":[...]} or a JSON-RPC
// {"result":{"tools":[...]}} and returns where its items are. ok is false
// for an object that is none of these (a single tool); a JSON-RPC error
// response or a "tools" member that is not an array is an error.
func unwrapToolsObject(data []byte, obj span) (tools []span, ok bool, err error) {
	members, err := objectMembers(data, obj)
	if err != nil {
		return nil, false, nil // not an object we can read: decodeTool says why
	}
	if _, twice := members[repeatedMember]; twice {
		return nil, false, fmt.Errorf("catalog: %w", catalogKeys(data[obj.start:obj.end], nil))
	}
	var probe struct {
		JSONRPC string `json:"jsonrpc"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	for _, k := range []string{"jsonrpc", "error"} {
		if m, found := members[k]; found {
			if json.Unmarshal(bytes.Join([][]byte{[]byte(`{"`), []byte(k), []byte(`":`), data[m.start:m.end], []byte(`}`)}, nil), &probe) != nil {
				return nil, false, nil
			}
		}
	}
	if probe.JSONRPC != "" && probe.Error != nil {
		return nil, false, fmt.Errorf("catalog is a JSON-RPC error response (code %d): %s", probe.Error.Code, probe.Error.Message)
	}
	list, found := members["tools"]
	where := `"tools"`
	if !found {
		res, hasResult := members["result"]
		if !hasResult {
			return nil, false, nil
		}
		inner, err := objectMembers(data, res)
		if err == nil {
			list, found = inner["tools"]
		}
		if !found {
			if probe.JSONRPC != "" {
				return nil, false, errors.New(`catalog is a JSON-RPC response without "result.tools" (not a tools/list result)`)
			}
			return nil, false, nil
		}
		where = `"result.tools"`
	}
	if string(data[list.start:list.end]) == "null" {
		return nil, true, nil
	}
	if data[list.start] != '[' {
		return nil, false, fmt.Errorf("catalog member %s must be an array of tools, got %s", where, jsonscan.Kind(data[list.start:list.end]))
	}
	items, _, err := splitArray(data, list.start)
	if err != nil {
		return nil, false, err
	}
	return items, true, nil
}

// decodeTool converts one catalog item of any supported shape to a Tool.
// The item's top-level members are found by the catalog scanner; only the
// ones its shape needs are decoded, and the item is decoded once (a syntax
// error comes back as a *json.SyntaxError with its offset in raw).
func decodeTool(raw []byte) (Tool, Format, error) {
	members, err := objectMembers(raw, span{0, len(raw)})
	if err != nil {
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(raw, &probe); err != nil {
			return Tool{}, "", fmt.Errorf("a tool must be a JSON object: %w", err)
		}
		return Tool{}, "", fmt.Errorf("a tool must be a JSON object")
	}
	if _, twice := members[repeatedMember]; twice {
		return Tool{}, "", catalogKeys(raw, nil) // names it
	}
	has := func(key string) bool { _, ok := members[key]; return ok }
	str := func(key string) string {
		m, ok := members[key]
		if !ok {
			return ""
		}
		s, plain := plainString(raw[m.start:m.end])
		if !plain {
			_ = json.Unmarshal(raw[m.start:m.end], &s)
		}
		return s
	}
	typ := str("type")
	nameOf := func() string {
		if n := str("name"); n != "" {
			return n
		}
		return "(no name)"
	}
	switch {
	case has("function") && typ == "function":
		// OpenAI Chat Completions (or Ollama): {"type":"function","function":{...}}.
		var o openAIShape
		if err := catalogKeys(raw, &o); err != nil {
			return Tool{}, "", fmt.Errorf("openai tool %q: %w", nameOf(), err)
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				return Tool{}, "", syn
			}
			return Tool{}, "", fmt.Errorf("openai tool: \"function\" is not an object: %w", err)
		}
		if o.Function == nil {
			return Tool{}, "", errors.New(`openai tool: "function" is not an object: got null`)
		}
		fn := o.Function
		t := NewTool(fn.Name, fn.Description, nullToNil(fn.Parameters))
		t.Strict = fn.Strict != nil && *fn.Strict
		return t, FormatOpenAI, nil
	case has("input_schema"):
		var a anthropicShape
		if err := catalogKeys(raw, &a); err != nil {
			return Tool{}, "", fmt.Errorf("anthropic tool %q: %w", nameOf(), err)
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return Tool{}, "", fmt.Errorf("anthropic tool %q: %w", nameOf(), err)
		}
		return NewTool(a.Name, a.Description, nullToNil(a.InputSchema)), FormatAnthropic, nil
	case has("inputSchema"):
		var m mcpShape
		if err := catalogKeys(raw, &m); err != nil {
			return Tool{}, "", fmt.Errorf("mcp tool %q: %w", nameOf(), err)
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return Tool{}, "", fmt.Errorf("mcp tool %q: %w", nameOf(), err)
		}
		t := NewTool(m.Name, m.Description, nullToNil(m.InputSchema))
		if m.Title != "" {
			t.Metadata = map[string]any{"title": m.Title}
		}
		m.Annotations.Apply(&t)
		return t, FormatMCP, nil
	case typ != "" && typ != "function":
		return Tool{}, "", fmt.Errorf("tool %q has type %q: only function tools can be registered (provider built-in tools have no schema to check calls against)", nameOf(), typ)
	}
	if err := catalogKeys(raw, (*toolFields)(nil)); err != nil {
		return Tool{}, "", fmt.Errorf("tool %q: %w", nameOf(), err)
	}
	t, ok := fastCanonical(raw, members)
	if !ok {
		type plain Tool // Tool without its UnmarshalJSON: decode once, Safe defaulting to true
		p := plain{Safe: true}
		if err := json.Unmarshal(raw, &p); err != nil {
			return Tool{}, "", fmt.Errorf("tool %q: %w", nameOf(), err)
		}
		t = Tool(p)
	}
	t.Parameters = nullToNil(t.Parameters)
	if typ == "function" && has("strict") && !has("safe") {
		return t, FormatOpenAIResponses, nil
	}
	return t, FormatCanonical, nil
}

// The shapes decodeTool reads a catalog item as, one per format.
type (
	openAIShape struct {
		Function *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      *bool           `json:"strict"`
		} `json:"function"`
	}
	anthropicShape struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	mcpShape struct {
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations *MCPAnnotations `json:"annotations"`
	}
	// toolFields is Tool without its UnmarshalJSON, for its keys.
	toolFields Tool
)

// catalogKeys refuses a catalog item read as shape (a pointer to one of the
// shapes; nil: any) in which a key the shape reads is written in another
// case, or a name is given twice at any depth: encoding/json would read the
// last, or the other case, where a person reading the catalog sees the
// first. Keys for other programs are left alone (strictjson.Check); the
// parameters schema is checked when it is compiled.
func catalogKeys(raw []byte, shape any) error {
	var t reflect.Type
	if shape != nil {
		t = reflect.TypeOf(shape)
	}
	var refused *strictjson.KeyError
	if err := strictjson.Check(raw, t); errors.As(err, &refused) {
		return err
	}
	return nil // anything else (a syntax error) is the decoding's to say, with its position
}

// MCPAnnotations are the hints an MCP server attaches to a tool.
type MCPAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Destructive reports whether the hints make a tool destructive, with the
// MCP specification's defaults for what they leave out (ToolAnnotations:
// readOnlyHint false, destructiveHint true, the latter meaningful only when
// the tool is not read-only): a tool is destructive unless it says
// readOnlyHint: true or destructiveHint: false. No annotations at all is
// destructive too.
func (a *MCPAnnotations) Destructive() bool {
	if a == nil {
		return true
	}
	if a.ReadOnlyHint != nil && *a.ReadOnlyHint {
		return false
	}
	return a.DestructiveHint == nil || *a.DestructiveHint
}

// Apply maps the hints onto a tool: a destructive one (Destructive, which
// follows the MCP defaults: not read-only and no destructiveHint: false)
// becomes unsafe, readOnlyHint adds the readOnly capability, and the title
// goes into the metadata. A nil *MCPAnnotations is a tool that gave none.
func (a *MCPAnnotations) Apply(t *Tool) {
	if a.Destructive() {
		t.Safe = false
	}
	if a == nil {
		return
	}
	readOnly := a.ReadOnlyHint != nil && *a.ReadOnlyHint
	if readOnly && !t.ReadOnly() {
		t.Capabilities = append(t.Capabilities, CapabilityReadOnly)
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
