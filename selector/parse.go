package selector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/toolselect/toolselect/internal/jsonscan"
)

// rawCall is a call as the model wrote it, before any check.
type rawCall struct {
	Tool      string
	Args      json.RawMessage // a compact JSON object
	Reasoning string
}

// parseError is a reply that is not the contract.
type parseError struct{ msg string }

func (e *parseError) Error() string { return e.msg }

func parseErrorf(format string, a ...any) error { return &parseError{fmt.Sprintf(format, a...)} }

// stripFence removes one Markdown code fence around the whole reply
// ("```" or "```json" ... "```"); anything else is returned unchanged.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	body := s[3 : len(s)-3]
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return s
	}
	info := strings.TrimSpace(body[:nl])
	if info != "" && !strings.EqualFold(info, "json") {
		return s
	}
	return strings.TrimSpace(body[nl+1:])
}

// parseReply reads the JSON-mode answer: one JSON object {"calls":[...]},
// optionally in a Markdown code fence. Each call has a string "tool", "args"
// as a JSON object or a JSON-encoded object string (absent or null means {}),
// and an optional string "reasoning". An optional string "search" (null or
// blank: none) asks for a search round. Unknown keys are ignored. Anything
// else is a parse error.
//
// Exactly one such object may also sit among prose, or in a closed fence
// followed by prose: it is read when the whole reply is not the contract.
// Two or more candidates stay a parse error (never guess).
func parseReply(content string) ([]rawCall, string, error) {
	calls, search, _, err := readCalls(content)
	return calls, search, err
}

// readCalls is parseReply, with the one repair it makes: trailing commas
// before "}" or "]" outside JSON strings (dropTrailingCommas) are removed
// from an object that is not valid JSON without them; repaired counts them.
// The repaired object must still be the contract. Nothing else is guessed.
func readCalls(content string) (calls []rawCall, search string, repaired int, err error) {
	calls, search, err = parseContract(content)
	if err == nil || strings.TrimSpace(content) == "" {
		return calls, search, 0, err
	}
	if body := stripFence(content); strings.HasPrefix(body, "{") && objectEnd(body, 0) == len(body) {
		if fixed, n := dropTrailingCommas(body); n > 0 {
			if c, s, e := parseContract(fixed); e == nil {
				return c, s, n, nil
			}
		}
	}
	cands, searched := callsCandidates(content)
	if !searched {
		return nil, "", 0, parseErrorf("the reply has too many unbalanced braces to look for one JSON object with \"calls\" in it; want {\"calls\":[...]}")
	}
	switch len(cands) {
	case 0:
		return nil, "", 0, err
	case 1:
		if strings.TrimSpace(stripFence(content)) == cands[0].text {
			return nil, "", 0, err // the whole reply is that object: its own error stands
		}
		calls, search, err = parseContract(cands[0].json)
		if err != nil {
			return nil, "", 0, err
		}
		return calls, search, cands[0].repaired, nil
	default:
		return nil, "", 0, parseErrorf("the reply holds %d JSON objects with \"calls\"; want exactly one (toolselect does not guess which)", len(cands))
	}
}

// dropTrailingCommas removes each comma of the object s (starting at its
// "{") that is followed, past white space, by "}" or "]", outside JSON
// strings: {"city": "Paris",} -> {"city": "Paris"}. It returns the result
// and how many it removed.
func dropTrailingCommas(s string) (string, int) {
	var b strings.Builder
	n := 0
	var str jsonString
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case str.step(c):
		case c == ',':
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
				j++
			}
			if j < len(s) && (s[j] == '}' || s[j] == ']') {
				n++
				continue
			}
		}
		b.WriteByte(c)
	}
	if n == 0 {
		return s, 0
	}
	return b.String(), n
}

// parseContract reads a reply that is exactly the contract (optionally fenced).
func parseContract(content string) ([]rawCall, string, error) {
	body := stripFence(content)
	if body == "" {
		return nil, "", parseErrorf("the reply is empty; want a JSON object {\"calls\":[...]}")
	}
	if body[0] != '{' {
		return nil, "", parseErrorf("the reply is not a JSON object (it starts with %q); want {\"calls\":[...]}", truncate(body, 40))
	}
	dec := json.NewDecoder(strings.NewReader(body))
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil, "", parseErrorf("the reply is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, "", parseErrorf("the reply has text after the JSON object")
	}
	callsRaw, ok := top["calls"]
	if !ok {
		return nil, "", parseErrorf("the reply has no \"calls\" key; want {\"calls\":[...]}")
	}
	var search string
	if r, ok := top["search"]; ok && !isNull(r) {
		if err := json.Unmarshal(r, &search); err != nil || !isJSONString(r) {
			return nil, "", parseErrorf("\"search\" must be a string, got %s", jsonscan.Kind(r))
		}
		search = strings.TrimSpace(search)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(callsRaw, &items); err != nil || items == nil {
		return nil, "", parseErrorf("\"calls\" must be an array, got %s", jsonscan.Kind(callsRaw))
	}
	out := make([]rawCall, 0, len(items))
	for i, item := range items {
		c, err := parseCall(item)
		if err != nil {
			return nil, "", parseErrorf("calls[%d]: %v", i, err)
		}
		out = append(out, c)
	}
	return out, search, nil
}

func parseCall(item json.RawMessage) (rawCall, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(item, &fields); err != nil || fields == nil {
		return rawCall{}, fmt.Errorf("a call must be a JSON object, got %s", jsonscan.Kind(item))
	}
	var c rawCall
	toolRaw, ok := fields["tool"]
	if !ok {
		return rawCall{}, errors.New("\"tool\" is missing")
	}
	if err := json.Unmarshal(toolRaw, &c.Tool); err != nil || !isJSONString(toolRaw) {
		return rawCall{}, fmt.Errorf("\"tool\" must be a string, got %s", jsonscan.Kind(toolRaw))
	}
	if strings.TrimSpace(c.Tool) == "" {
		return rawCall{}, errors.New("\"tool\" is empty")
	}
	args, err := argsObject(fields["args"])
	if err != nil {
		return rawCall{}, err
	}
	c.Args = args
	if r, ok := fields["reasoning"]; ok && !isNull(r) {
		if err := json.Unmarshal(r, &c.Reasoning); err != nil || !isJSONString(r) {
			return rawCall{}, fmt.Errorf("\"reasoning\" must be a string, got %s", jsonscan.Kind(r))
		}
	}
	return c, nil
}

// argsObject accepts args as a JSON object, a string holding a JSON object,
// or absent/null (an empty object), and returns the compact object.
func argsObject(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return json.RawMessage("{}"), nil
	}
	if isJSONString(raw) {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("\"args\" is not a valid JSON string: %w", err)
		}
		return decodeArgsString(s)
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("\"args\" must be a JSON object or a string holding one, got %s", jsonscan.Kind(raw))
	}
	return compactObject(raw)
}

// decodeArgsString reads arguments given as a JSON-encoded string ("" is {}).
func decodeArgsString(s string) (json.RawMessage, error) {
	b := bytes.TrimSpace([]byte(s))
	if len(b) == 0 {
		return json.RawMessage("{}"), nil
	}
	if b[0] != '{' {
		return nil, fmt.Errorf("the arguments string must hold a JSON object, got %s", jsonscan.Kind(b))
	}
	return compactObject(b)
}

func compactObject(b []byte) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %w", err)
	}
	return json.RawMessage(buf.Bytes()), nil
}

// hydrateNative turns provider tool_calls into calls.
func hydrateNative(calls []NativeCall) ([]rawCall, error) {
	out := make([]rawCall, 0, len(calls))
	for i, nc := range calls {
		if strings.TrimSpace(nc.Name) == "" {
			return nil, parseErrorf("tool_calls[%d]: the function name is empty", i)
		}
		args, err := decodeArgsString(nc.Arguments)
		if err != nil {
			// Some servers double-encode: a JSON string holding the object.
			var inner string
			if json.Unmarshal([]byte(nc.Arguments), &inner) == nil {
				args, err = decodeArgsString(inner)
			}
		}
		if err != nil {
			return nil, parseErrorf("tool_calls[%d] (%s): %v", i, nc.Name, err)
		}
		out = append(out, rawCall{Tool: nc.Name, Args: args})
	}
	return out, nil
}

// splitSearch takes native mode's search_tools calls out of calls: it returns
// the other calls and the query of the first search (blank when there was
// none). A registered tool named search_tools is a call like any other when
// it is offered (isTool says so); the search round is then not offered.
func splitSearch(calls []rawCall, isTool func(string) bool) ([]rawCall, string) {
	out := calls[:0:0]
	search := ""
	for _, c := range calls {
		if c.Tool != SearchToolName || isTool(c.Tool) {
			out = append(out, c)
			continue
		}
		var args struct {
			Query string `json:"query"`
		}
		_ = json.Unmarshal(c.Args, &args)
		if search == "" {
			search = strings.TrimSpace(args.Query)
		}
	}
	return out, search
}

func isNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

func isJSONString(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '"'
}
