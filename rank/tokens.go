package rank

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/toolselect/toolselect/rank/internal/bpe"
	"github.com/toolselect/toolselect/registry"
)

// Token encodings TokenCounter knows: OpenAI's vocabularies, embedded as
// text by rank/internal/bpe (its counts are checked against
// tiktoken-go's; tiktoken-go's own map literals were 9.4 MB of the command).
const (
	EncodingCl100k = "cl100k_base" // GPT-4, GPT-3.5, text-embedding-3
	EncodingO200k  = "o200k_base"  // GPT-4o, GPT-4.1, o-series, GPT-5
)

// TokenCounter counts tokens offline with an embedded BPE vocabulary.
type TokenCounter struct {
	enc *bpe.Encoding
}

var (
	countersMu sync.Mutex
	counters   = map[string]*TokenCounter{}
)

// NewTokenCounter returns a counter for an encoding ("" means o200k_base).
// Counters are shared; the vocabulary is loaded once per process.
func NewTokenCounter(encoding string) (*TokenCounter, error) {
	if encoding == "" {
		encoding = EncodingO200k
	}
	countersMu.Lock()
	defer countersMu.Unlock()
	if c, ok := counters[encoding]; ok {
		return c, nil
	}
	var c *bpe.Encoding
	switch encoding {
	case EncodingCl100k:
		c = bpe.Cl100k()
	case EncodingO200k:
		c = bpe.O200k()
	default:
		return nil, fmt.Errorf("unknown token encoding %q (want %s or %s)", encoding, EncodingCl100k, EncodingO200k)
	}
	tc := &TokenCounter{enc: c}
	counters[encoding] = tc
	return tc, nil
}

var o200k struct {
	sync.Once
	c *TokenCounter
}

// o200kCounter is NewTokenCounter(EncodingO200k) for code that must not link
// the cl100k vocabulary too (the C library, through Offering): each
// vocabulary adds megabytes to a binary that references it.
func o200kCounter() *TokenCounter {
	o200k.Do(func() {
		countersMu.Lock()
		defer countersMu.Unlock()
		if c, ok := counters[EncodingO200k]; ok {
			o200k.c = c
			return
		}
		o200k.c = &TokenCounter{enc: bpe.O200k()}
		counters[EncodingO200k] = o200k.c
	})
	return o200k.c
}

// Encoding names the counter's encoding.
func (t *TokenCounter) Encoding() string { return t.enc.Name() }

// Count returns the number of tokens of s.
func (t *TokenCounter) Count(s string) int {
	n, err := t.enc.Count(s)
	if err != nil {
		// Only the split pattern can fail, and no input seen makes it.
		return len(s) / 3
	}
	return n
}

// CountTools returns the tokens of entries written in a provider format (the
// JSON the provider receives as its tools list).
func (t *TokenCounter) CountTools(entries []*registry.Entry, f registry.Format) (int, error) {
	if len(entries) == 0 {
		return 0, nil
	}
	b, err := registry.MarshalView(entries, f, nil)
	if err != nil {
		return 0, err
	}
	return t.Count(string(b)), nil
}

// CountEach returns the tokens of each entry written alone in format f.
func (t *TokenCounter) CountEach(entries []*registry.Entry, f registry.Format) ([]int, error) {
	out := make([]int, len(entries))
	for i, e := range entries {
		n, err := t.CountTools([]*registry.Entry{e}, f)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// FitBudget keeps picks, in order, while their tool definitions (format f)
// fit in budget tokens; a pick that does not fit is skipped and later, smaller
// ones may still be kept. It returns the kept picks and their tokens.
func (t *TokenCounter) FitBudget(picks []Pick, f registry.Format, budget int) ([]Pick, int, error) {
	var kept []Pick
	total := 0
	for _, p := range picks {
		if p.Entry == nil {
			continue
		}
		n, err := t.CountTools([]*registry.Entry{p.Entry}, f)
		if err != nil {
			return nil, 0, err
		}
		if total+n > budget {
			continue
		}
		total += n
		kept = append(kept, p)
	}
	return kept, total, nil
}

// The meta-tools let a model search a large catalog itself instead of
// receiving it: find_tool(query, limit) returns matching tools' names,
// descriptions, parameters and scores; call_tool(name, arguments) validates
// and runs one (arguments may be omitted, as in MCP's tools/call: missing
// means {}, still checked against the tool's own schema). The executor implements them; their definitions live here so
// every layer (token accounting, executor, MCP proxy) shares one text.
const (
	FindToolName = "find_tool"
	CallToolName = "call_tool"
	// DefaultFindLimit is how many tools find_tool returns when no limit is given.
	DefaultFindLimit = 5
	// MaxFindLimit is the most tools one find_tool call returns.
	MaxFindLimit = 50
)

// findToolTool is the definition of find_tool.
func findToolTool() registry.Tool {
	return registry.NewTool(FindToolName,
		"Search the tool catalog for tools that can do a task. Returns up to `limit` tools, best first, each with its name, description, the JSON Schema of its arguments and a relevance score from 0 to 1. Call it before call_tool when you do not know which tool to use.",
		json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What you want to do, in a few words (e.g. \"convert a Word document to PDF\")."},"limit":{"type":"integer","minimum":1,"maximum":50,"default":5,"description":"How many tools to return (default 5)."}},"required":["query"],"additionalProperties":false}`))
}

// callToolTool is the definition of call_tool.
func callToolTool() registry.Tool {
	return registry.NewTool(CallToolName,
		"Call a tool found with find_tool. The arguments are checked against the tool's schema before the tool runs; an invalid call returns the violations to fix.",
		json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The tool's name exactly as find_tool returned it."},"arguments":{"type":"object","description":"The tool's arguments, matching its schema; omitted means {}.","additionalProperties":true}},"required":["name"],"additionalProperties":false}`))
}

// metaTools returns the definitions of find_tool and call_tool.
func metaTools() []registry.Tool { return []registry.Tool{findToolTool(), callToolTool()} }

var metaOnce struct {
	sync.Once
	entries []*registry.Entry
	err     error
}

// MetaToolEntries returns find_tool and call_tool registered in a registry of
// their own, for views and token counts.
func MetaToolEntries() ([]*registry.Entry, error) {
	metaOnce.Do(func() {
		reg := registry.New(nil)
		if err := reg.RegisterAll(metaTools()); err != nil {
			metaOnce.err = err
			return
		}
		metaOnce.entries = reg.Entries()
	})
	return metaOnce.entries, metaOnce.err
}
