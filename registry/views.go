package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Format names a JSON shape tools can be written in (and read from).
type Format string

// The formats. Every one of them can be produced by View and read back by the catalog loader.
const (
	// FormatCanonical is toolselect's own definition, every field included.
	FormatCanonical Format = "canonical"
	// FormatSchema is `{"name","description","parameters"}`, what get_tools_schema() returns.
	FormatSchema Format = "schema"
	// FormatOpenAI is the Chat Completions `tools` entry: {"type":"function","function":{...}}.
	FormatOpenAI Format = "openai"
	// FormatOpenAIResponses is the Responses API's flat function tool.
	FormatOpenAIResponses Format = "openai-responses"
	// FormatAnthropic is the Messages API tool: {"name","description","input_schema"}.
	FormatAnthropic Format = "anthropic"
	// FormatOllama is Ollama's /api/chat tool, shaped like OpenAI's.
	FormatOllama Format = "ollama"
	// FormatMCP is an MCP Tool: {"name","description","inputSchema","annotations"}.
	FormatMCP Format = "mcp"
)

// formats lists every output format, in documentation order.
var formats = []Format{FormatCanonical, FormatSchema, FormatOpenAI, FormatOpenAIResponses, FormatAnthropic, FormatOllama, FormatMCP}

// Formats lists every output format, in documentation order.
func Formats() []Format { return slices.Clone(formats) }

// ParseFormat accepts a format name (case-insensitive).
func ParseFormat(s string) (Format, error) {
	f := Format(strings.ToLower(strings.TrimSpace(s)))
	for _, have := range formats {
		if f == have {
			return f, nil
		}
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (want one of %s)", s, strings.Join(names, ", "))
}

// nameRule is the set of names a provider accepts; nil accepts any registered name.
func nameRule(f Format) (*regexp.Regexp, int) {
	switch f {
	case FormatOpenAI, FormatOpenAIResponses, FormatAnthropic:
		return openAIName, 64
	case FormatMCP:
		return mcpName, 128
	}
	return nil, 0
}

var (
	openAIName  = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	mcpName     = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,128}$`)
	openAIBad   = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)
	mcpBad      = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)
	emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)
)

// nameMaps holds, for each provider format, canonical -> provider name, and
// one reverse table from every mapped name back to its canonical name.
type nameMaps struct {
	forward map[Format]map[string]string
	reverse map[string]string
}

// mapName turns a canonical name into one the provider accepts. A name that
// already fits is kept as is; otherwise invalid runs become '_' ("math.factorial"
// -> "math_factorial"), and when that is too long or already taken a short hash
// of the original keeps the result unique. The registry's reverse table makes
// every mapped name resolvable back to its tool.
func mapName(name string, f Format, taken func(string) bool) string {
	rule, max := nameRule(f)
	if rule == nil || rule.MatchString(name) {
		return name
	}
	bad := openAIBad
	if f == FormatMCP {
		bad = mcpBad
	}
	base := strings.Trim(bad.ReplaceAllString(name, "_"), "_")
	// The plain sanitised name reads best to a model and costs the fewest
	// tokens; a hash suffix is added only when it is too long or taken.
	if base != "" && len(base) <= max && !taken(base) {
		return base
	}
	sum := sha256.Sum256([]byte(name))
	hexsum := hex.EncodeToString(sum[:])
	for n := 8; n <= len(hexsum) && n+2 <= max; n += 4 { // room for "_"+hash and one more byte
		suffix := "_" + hexsum[:n]
		b := base
		if len(b) > max-len(suffix) {
			b = strings.TrimRight(b[:max-len(suffix)], "_")
		}
		cand := b + suffix
		if b == "" {
			cand = "t" + suffix
		}
		if !taken(cand) {
			return cand
		}
	}
	// Every hashed candidate is taken (a catalog can name its tools after
	// them): count upwards until a free name turns up.
	for i := 0; ; i++ {
		if cand := fmt.Sprintf("t_%s_%d", hexsum[:8], i); !taken(cand) {
			return cand
		}
	}
}

func (r *Registry) nameMaps() *nameMaps {
	r.mu.RLock()
	m := r.names
	r.mu.RUnlock()
	if m != nil {
		return m
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.names != nil {
		return r.names
	}
	m = &nameMaps{forward: map[Format]map[string]string{}, reverse: map[string]string{}}
	for _, f := range []Format{FormatOpenAI, FormatMCP} {
		fwd := map[string]string{}
		for _, e := range r.entries {
			n := e.tool.Name
			mapped := mapName(n, f, func(c string) bool {
				_, canon := r.byName[c]
				owner, used := m.reverse[c]
				return canon || (used && owner != n)
			})
			fwd[n] = mapped
			if mapped != n {
				m.reverse[mapped] = n
			}
		}
		m.forward[f] = fwd
	}
	// The OpenAI rule also governs the Responses API and Anthropic.
	m.forward[FormatOpenAIResponses] = m.forward[FormatOpenAI]
	m.forward[FormatAnthropic] = m.forward[FormatOpenAI]
	r.names = m
	return m
}

// ProviderName returns the name the tool carries in format f. A name the
// provider accepts is kept; any other is mapped to a valid one that Lookup
// resolves back. Formats without a name rule (canonical, schema, ollama) keep
// every name.
func (r *Registry) ProviderName(f Format, canonical string) string {
	if rule, _ := nameRule(f); rule == nil || rule.MatchString(canonical) {
		return canonical
	}
	if fwd, ok := r.nameMaps().forward[f]; ok {
		if n, ok := fwd[canonical]; ok {
			return n
		}
	}
	// Not registered (e.g. an entry from an older snapshot): still give a
	// valid name, though Lookup will not resolve it.
	return mapName(canonical, f, func(string) bool { return false })
}

// View returns every tool in format f as a JSON array.
func (r *Registry) View(f Format) ([]byte, error) {
	return r.ViewOf(r.Entries(), f)
}

// ViewOf returns the given entries (e.g. the tools offered for one request) in
// format f, with names mapped as this registry maps them.
func (r *Registry) ViewOf(entries []*Entry, f Format) ([]byte, error) {
	return MarshalView(entries, f, func(name string) string { return r.ProviderName(f, name) })
}

// ViewItems returns each entry's view as its own JSON object.
func (r *Registry) ViewItems(entries []*Entry, f Format) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(entries))
	var w viewWriter
	for i, e := range entries {
		if err := w.view(e, f, r.ProviderName(f, e.tool.Name)); err != nil {
			return nil, err
		}
		out[i] = bytes.Clone(w.buf.Bytes())
		w.buf.Reset()
	}
	return out, nil
}

// MarshalView writes entries in format f. rename maps canonical names to the
// provider's (nil keeps names). Parameter schemas are embedded compacted.
func MarshalView(entries []*Entry, f Format, rename func(string) string) ([]byte, error) {
	var w viewWriter
	w.buf.WriteByte('[')
	for i, e := range entries {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		name := e.tool.Name
		if rename != nil {
			name = rename(name)
		}
		if err := w.view(e, f, name); err != nil {
			return nil, err
		}
	}
	w.buf.WriteByte(']')
	return w.buf.Bytes(), nil
}

// object is a JSON object as ordered key/value pairs; a nil value is skipped.
type object []kv

type kv struct {
	k string
	v any
}

// viewWriter writes views into one buffer, through one encoder.
type viewWriter struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// object writes o. A json.RawMessage value is written as is: it is a schema
// compacted at registration (Entry.params).
func (w *viewWriter) object(o object) error {
	w.buf.WriteByte('{')
	first := true
	for _, p := range o {
		if p.v == nil {
			continue
		}
		if !first {
			w.buf.WriteByte(',')
		}
		first = false
		if err := w.plain(p.k); err != nil {
			return err
		}
		w.buf.WriteByte(':')
		switch v := p.v.(type) {
		case json.RawMessage:
			w.buf.Write(v)
		case object:
			if err := w.object(v); err != nil {
				return err
			}
		default:
			if err := w.plain(v); err != nil {
				return fmt.Errorf("field %q: %w", p.k, err)
			}
		}
	}
	w.buf.WriteByte('}')
	return nil
}

// plain writes v as json.Marshal would, without HTML escaping: views go to
// models and people, for whom "&" reads better than "\u0026" (and costs fewer
// tokens).
func (w *viewWriter) plain(v any) error {
	if w.enc == nil {
		w.enc = json.NewEncoder(&w.buf)
		w.enc.SetEscapeHTML(false)
	}
	// Encode writes nothing on error, and ends the value with a newline.
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	w.buf.Truncate(w.buf.Len() - 1)
	return nil
}

// view writes one entry in format f under name.
func (w *viewWriter) view(e *Entry, f Format, name string) error {
	t := &e.tool
	params := e.params
	if params == nil {
		params = emptySchema
	}
	var o object
	switch f {
	case FormatCanonical:
		var p any
		if e.params != nil {
			p = e.params
		}
		o = object{
			{"type", "function"}, {"name", t.Name}, {"description", t.Description}, {"parameters", p},
			{"strict", omitFalse(t.Strict)}, {"allowNoSchema", omitFalse(t.AllowNoSchema)},
			{"noSchemaMode", omitEmpty(string(t.NoSchemaMode))}, {"safe", t.Safe},
			{"requiresApproval", omitFalse(t.RequiresApproval)},
			{"tags", omitNil(t.Tags)}, {"roles", omitNil(t.Roles)}, {"capabilities", omitNil(t.Capabilities)},
			{"metadata", omitNilMap(t.Metadata)},
		}
	case FormatSchema:
		o = object{{"name", name}, {"description", t.Description}, {"parameters", params}}
	case FormatOpenAI:
		o = object{{"type", "function"}, {"function", object{
			{"name", name}, {"description", t.Description}, {"parameters", params}, {"strict", omitFalse(t.Strict)},
		}}}
	case FormatOpenAIResponses:
		o = object{{"type", "function"}, {"name", name}, {"description", t.Description}, {"parameters", params}, {"strict", t.Strict}}
	case FormatAnthropic:
		o = object{{"name", name}, {"description", t.Description}, {"input_schema", params}}
	case FormatOllama:
		o = object{{"type", "function"}, {"function", object{
			{"name", name}, {"description", t.Description}, {"parameters", params},
		}}}
	case FormatMCP:
		// MCP readers ignore destructiveHint when readOnlyHint is true (so does
		// MCPAnnotations.Apply): an unsafe tool is never advertised as
		// read-only, or it would read back as safe.
		ann := object{{"readOnlyHint", t.ReadOnly() && t.Safe}, {"destructiveHint", !t.Safe}}
		if title, ok := t.Metadata["title"].(string); ok && title != "" {
			o = object{{"name", name}, {"title", title}, {"description", t.Description}, {"inputSchema", params}, {"annotations", ann}}
		} else {
			o = object{{"name", name}, {"description", t.Description}, {"inputSchema", params}, {"annotations", ann}}
		}
	default:
		return fmt.Errorf("unknown format %q", f)
	}
	return w.object(o)
}

func omitFalse(b bool) any {
	if !b {
		return nil
	}
	return b
}

func omitEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func omitNil(s []string) any {
	if len(s) == 0 {
		return nil
	}
	return s
}

func omitNilMap(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}
