package selector

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// This file is the one reader of what a provider sends back: the Go
// transport hands it the raw body of a 2xx response, and a non-Go driver
// (Python) feeds it the completion its own client returned. Every provider
// difference in reply shape is settled here, before the `calls` contract is
// checked (docs/providers.md lists each with its source):
//
//   - "content" as a string, or as a list of parts (Mistral's
//     [{"type":"thinking",...},{"type":"text","text":"..."}]): the text parts
//     are joined; thinking parts go to Reasoning;
//   - the reasoning fields "reasoning_content" (DeepSeek, Z.ai, Qwen, vLLM,
//     llama.cpp) and "reasoning" (OpenRouter, Ollama) go to Reasoning, never
//     to the answer;
//   - "error" in a 200 body, top-level or in the first choice (OpenRouter):
//     a failure carrying the provider's message and code;
//   - tool_calls[].function.arguments as a JSON string or an object
//     (llama.cpp builds that return objects);
//   - a body streamed as server-sent events although none was asked for:
//     its deltas are put back together;
//   - "finish_reason" and "usage" are kept, and the categories a content
//     filter flagged ("content_filter_results", Azure).

// wireCompletion is a chat completion as providers write it, read leniently.
type wireCompletion struct {
	Choices *[]struct {
		Message      *replyMessage              `json:"message"`
		Delta        *replyMessage              `json:"delta"`
		FinishReason *string                    `json:"finish_reason"`
		Error        json.RawMessage            `json:"error"`
		Filter       map[string]json.RawMessage `json:"content_filter_results"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type replyMessage struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ToolCalls        []struct {
		Index    *int            `json:"index"`
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Args     json.RawMessage `json:"arguments"`
		Function *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// readCompletion reads a 2xx response body: a chat completion, or one sent as
// a stream of server-sent events. The error is a *ChatError.
func readCompletion(body []byte) (ChatResponse, error) {
	body = bytes.TrimSpace(body)
	if isEventStream(body) {
		return readStream(body)
	}
	var c wireCompletion
	if err := json.Unmarshal(body, &c); err != nil {
		// One whole completion framed as a stream: the object, then only
		// "data: [DONE]" (routers that stream a non-streamed answer).
		dec := json.NewDecoder(bytes.NewReader(body))
		var c2 wireCompletion
		if dec.Decode(&c2) == nil && onlyDone(body[dec.InputOffset():]) {
			return c2.response()
		}
		return ChatResponse{}, &ChatError{Kind: KindTransport, Message: "the response is not a chat completion: " + err.Error()}
	}
	return c.response()
}

// onlyDone reports whether rest holds nothing but stream terminators.
func onlyDone(rest []byte) bool {
	for _, line := range bytes.Split(rest, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) != 0 && string(line) != "data: [DONE]" && string(line) != "data:[DONE]" {
			return false
		}
	}
	return true
}

// response turns a decoded completion into the first choice's answer.
func (c *wireCompletion) response() (ChatResponse, error) {
	var out ChatResponse
	if c.Usage != nil {
		out.PromptTokens, out.CompletionTokens = c.Usage.PromptTokens, c.Usage.CompletionTokens
	}
	if err := providerError(c.Error); err != nil {
		return out, err
	}
	if c.Choices == nil || len(*c.Choices) == 0 {
		return out, &ChatError{Kind: KindEmptyChoices, Message: "the completion has no choices", Err: ErrEmptyChoices}
	}
	ch := (*c.Choices)[0]
	if err := providerError(ch.Error); err != nil {
		return out, err
	}
	if ch.FinishReason != nil {
		out.FinishReason = *ch.FinishReason
	}
	out.Filtered = flaggedCategories(ch.Filter)
	m := ch.Message
	if m == nil {
		m = ch.Delta
	}
	if m == nil {
		return out, nil
	}
	if err := m.into(&out); err != nil {
		return out, err
	}
	return out, nil
}

// into adds the message's answer, reasoning and tool calls to out.
func (m *replyMessage) into(out *ChatResponse) error {
	text, thinking, err := contentText(m.Content)
	if err != nil {
		return &ChatError{Kind: KindTransport, Message: "the completion's content: " + err.Error()}
	}
	out.Content += text
	for _, r := range []json.RawMessage{m.ReasoningContent, m.Reasoning} {
		s, _, _ := contentText(r)
		thinking += s
	}
	out.Reasoning += thinking
	for i, tc := range m.ToolCalls {
		name, args := tc.Name, tc.Args
		if tc.Function != nil {
			name, args = tc.Function.Name, tc.Function.Arguments
		}
		s, err := argumentsText(args)
		if err != nil {
			return &ChatError{Kind: KindTransport, Message: fmt.Sprintf("tool_calls[%d].function.arguments: %v", i, err)}
		}
		out.ToolCalls = append(out.ToolCalls, NativeCall{ID: tc.ID, Name: name, Arguments: s})
	}
	return nil
}

// argumentsText returns native arguments as the JSON text of the object: a
// JSON string is unquoted, an object is kept as written, absent or null is "".
func argumentsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || isNull(raw):
		return "", nil
	case isJSONString(raw):
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	return string(raw), nil
}

// contentText reads "content" (or a reasoning field): a string, null, or a
// list of parts. Text parts ({"type":"text","text":...}, or bare strings)
// are the answer; thinking parts ({"type":"thinking","thinking":...} with
// text or a list of text parts) are reasoning; other parts are ignored.
func contentText(raw json.RawMessage) (text, thinking string, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return "", "", nil
	}
	switch raw[0] {
	case '"':
		err = json.Unmarshal(raw, &text)
		return text, "", err
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", "", err
		}
		var tb, rb strings.Builder
		for _, p := range parts {
			var part struct {
				Type     string          `json:"type"`
				Text     json.RawMessage `json:"text"`
				Thinking json.RawMessage `json:"thinking"`
			}
			if isJSONString(p) {
				var s string
				_ = json.Unmarshal(p, &s)
				tb.WriteString(s)
				continue
			}
			if json.Unmarshal(p, &part) != nil {
				continue
			}
			switch part.Type {
			case "text", "output_text", "":
				s, _, _ := contentText(part.Text)
				tb.WriteString(s)
			case "thinking", "reasoning":
				s, inner, _ := contentText(part.Thinking)
				rb.WriteString(s + inner)
				if len(part.Thinking) == 0 {
					s, _, _ = contentText(part.Text)
					rb.WriteString(s)
				}
			}
		}
		return tb.String(), rb.String(), nil
	}
	return "", "", fmt.Errorf("want a string or a list of parts, got %s", jsonKindOf(raw))
}

// isEventStream reports whether a body is server-sent events ("data: ..." lines).
func isEventStream(body []byte) bool {
	return bytes.HasPrefix(body, []byte("data:")) || bytes.HasPrefix(body, []byte("event:")) || bytes.HasPrefix(body, []byte(":"))
}

// readStream puts a streamed completion back together: content and reasoning
// deltas are concatenated, tool calls are assembled by index (name, and
// argument fragments in order), the last finish_reason and usage are kept.
func readStream(body []byte) (ChatResponse, error) {
	var out ChatResponse
	type call struct {
		id, name string
		args     strings.Builder
	}
	var calls []*call
	byIndex := map[int]*call{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), len(body)+1)
	chunks := 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" || len(data) == 0 {
			continue
		}
		var c wireCompletion
		if err := json.Unmarshal(data, &c); err != nil {
			return out, &ChatError{Kind: KindTransport, Message: fmt.Sprintf("the response was streamed (not asked for) and event %d is not JSON: %v", chunks+1, err)}
		}
		chunks++
		if c.Usage != nil {
			out.PromptTokens, out.CompletionTokens = c.Usage.PromptTokens, c.Usage.CompletionTokens
		}
		if err := providerError(c.Error); err != nil {
			return out, err
		}
		if c.Choices == nil || len(*c.Choices) == 0 {
			continue
		}
		ch := (*c.Choices)[0]
		if err := providerError(ch.Error); err != nil {
			return out, err
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			out.FinishReason = *ch.FinishReason
		}
		if f := flaggedCategories(ch.Filter); len(f) > 0 {
			out.Filtered = f
		}
		m := ch.Delta
		if m == nil {
			m = ch.Message
		}
		if m == nil {
			continue
		}
		text, thinking, _ := contentText(m.Content)
		out.Content += text
		out.Reasoning += thinking
		for _, r := range []json.RawMessage{m.ReasoningContent, m.Reasoning} {
			s, _, _ := contentText(r)
			out.Reasoning += s
		}
		for i, tc := range m.ToolCalls {
			idx := i
			if tc.Index != nil {
				idx = *tc.Index
			}
			cl := byIndex[idx]
			if cl == nil {
				cl = &call{}
				byIndex[idx] = cl
				calls = append(calls, cl)
			}
			name, args := tc.Name, tc.Args
			if tc.Function != nil {
				name, args = tc.Function.Name, tc.Function.Arguments
			}
			if tc.ID != "" {
				cl.id = tc.ID
			}
			if name != "" {
				cl.name = name
			}
			s, err := argumentsText(args)
			if err != nil {
				return out, &ChatError{Kind: KindTransport, Message: fmt.Sprintf("streamed tool_calls[%d].function.arguments: %v", idx, err)}
			}
			cl.args.WriteString(s)
		}
	}
	if chunks == 0 {
		return out, &ChatError{Kind: KindTransport, Message: "the response was streamed (not asked for) and holds no completion event"}
	}
	for _, cl := range calls {
		out.ToolCalls = append(out.ToolCalls, NativeCall{ID: cl.id, Name: cl.name, Arguments: cl.args.String()})
	}
	return out, nil
}

// jsonKindOf names a JSON value's kind for messages.
func jsonKindOf(raw json.RawMessage) string {
	switch {
	case len(raw) == 0:
		return "nothing"
	case raw[0] == '{':
		return "an object"
	case raw[0] == '[':
		return "an array"
	case raw[0] == '"':
		return "a string"
	case isNull(raw):
		return "null"
	case string(raw) == "true" || string(raw) == "false":
		return "a boolean"
	}
	return "a number"
}

// The answer inside a reply's text (JSON mode).

// reasoningWrappers are the ways a model's reasoning arrives in the content
// ahead of its answer, one table (sources in docs/providers.md, "Reading
// replies"): a leading block between open and close is reasoning; where
// lone is set, so is the text up to a closing tag with no opening one
// (Qwen3's templates open the block in the prompt). Harmony's channels
// (gpt-oss) are read by splitHarmony.
var reasoningWrappers = []struct {
	open, close string
	lone        bool
}{
	{"<think>", "</think>", true},          // Qwen3, DeepSeek-R1 and others behind vLLM, Cerebras, Ollama
	{"<thinking>", "</thinking>", false},   // Claude-style chain of thought before a tool call
	{"<reasoning>", "</reasoning>", false}, // gpt-oss on Amazon Bedrock
}

// splitThinking sets aside the reasoning ahead of the answer: a leading
// block of one of the reasoningWrappers, the text up to a lone closing
// "</think>", or Harmony's analysis and commentary channels (splitHarmony).
// It returns the answer and the reasoning set aside. An opening tag that is
// never closed means the whole reply is reasoning (cut off, or thinking
// without an answer). Drafts inside the reasoning are never candidates.
//
// A closing tag inside a JSON object of the reply (a string of the answer
// itself, as in {"calls":[{"tool":"search","args":{"query":"what does
// </think> mean"}}]}) closes nothing: only a tag outside every well-formed
// JSON object counts (closingTag). So a reply that begins as JSON, bare or
// in a fence, is never split inside one of its strings.
func splitThinking(content string) (answer, reasoning string) {
	s := strings.TrimLeft(content, " \t\r\n")
	if a, r, ok := splitHarmony(s); ok {
		return a, r
	}
	for _, w := range reasoningWrappers {
		if rest, ok := strings.CutPrefix(s, w.open); ok {
			if i := closingTag(rest, w.close); i >= 0 {
				return rest[i+len(w.close):], rest[:i]
			}
			return "", rest
		}
	}
	for _, w := range reasoningWrappers {
		if !w.lone {
			continue
		}
		if i := closingTag(s, w.close); i >= 0 && !strings.Contains(s[:i], w.open) {
			return s[i+len(w.close):], s[:i]
		}
	}
	return content, ""
}

// Harmony's special tokens (github.com/openai/harmony, docs/format.md).
const (
	harmonyChannel = "<|channel|>"
	harmonyMessage = "<|message|>"
	harmonyStart   = "<|start|>"
)

// harmonyEnds end a Harmony message.
var harmonyEnds = []string{"<|end|>", "<|return|>", "<|call|>", harmonyStart, harmonyChannel}

// splitHarmony reads a reply in OpenAI's Harmony format, as gpt-oss writes it
// when a server passes it through: with its special tokens
// ("<|channel|>analysis<|message|>...<|end|><|start|>assistant<|channel|>final<|message|>{...}"),
// or with them stripped ("analysis...assistantfinal{...}"). The final
// channel is the answer; analysis and commentary are reasoning. ok is false
// for a reply that is not Harmony.
func splitHarmony(s string) (answer, reasoning string, ok bool) {
	if strings.HasPrefix(s, harmonyChannel) || strings.HasPrefix(s, harmonyStart) {
		var rb strings.Builder
		final, found := "", false
		for rest := s; ; {
			i := strings.Index(rest, harmonyChannel)
			if i < 0 {
				break
			}
			rest = rest[i+len(harmonyChannel):]
			header, body, hasBody := strings.Cut(rest, harmonyMessage)
			if !hasBody {
				break
			}
			end := len(body)
			for _, e := range harmonyEnds {
				if j := strings.Index(body, e); j >= 0 && j < end {
					end = j
				}
			}
			name, _, _ := strings.Cut(strings.TrimSpace(header), " ")
			if name, _, _ = strings.Cut(name, "<|"); name == "final" {
				final, found = body[:end], true
			} else {
				rb.WriteString(body[:end])
				rb.WriteString("\n")
			}
			rest = body[end:]
		}
		if !found {
			return "", rb.String(), true
		}
		return final, rb.String(), true
	}
	// The tokens stripped: the channel names run into the text.
	const final = "assistantfinal"
	if strings.HasPrefix(s, "analysis") || strings.HasPrefix(s, "commentary") {
		if i := closingTag(s, final); i >= 0 {
			return s[i+len(final):], s[:i], true
		}
	}
	return "", "", false
}

// closingTag returns the index of the first tag in s that lies outside
// every well-formed JSON object of s, or -1. An object counts when its
// braces balance (outside its strings) and it is valid JSON; a stray brace
// of prose reasoning does not hide the tag.
//
// Looking for the end of an object from each brace is quadratic in the worst
// case (a reply of unbalanced braces): the bytes scanned are bounded by a
// budget, past which the first tag counts, as a plain search would have it.
func closingTag(s, tag string) int {
	budget := 16*len(s) + 4096
	from := 0
	for {
		i := strings.Index(s[from:], tag)
		if i < 0 {
			return -1
		}
		i += from
		next := -1 // past the object that holds the tag, if one does
		for j := from; j < i; j++ {
			if s[j] != '{' {
				continue
			}
			if budget <= 0 {
				return i
			}
			end := objectEnd(s, j)
			if end < 0 {
				budget -= len(s) - j
				continue
			}
			budget -= end - j
			if !json.Valid([]byte(s[j:end])) {
				continue
			}
			if end > i {
				next = end
				break
			}
			j = end - 1 // the object closes before the tag: look past it
		}
		if next < 0 {
			return i
		}
		from = next
	}
}

// candidate is one JSON object holding "calls" among a reply's text: the
// text as written, and the JSON read (the text, or it with trailing commas
// removed: repaired counts them).
type candidate struct {
	text, json string
	repaired   int
}

// callsCandidates returns every top-level JSON object in s (outside JSON
// strings, balanced braces) that decodes as an object with a "calls" member,
// as written or once its trailing commas are removed (dropTrailingCommas).
//
// Looking for the end of an object from each brace is quadratic in the worst
// case (a reply of many unbalanced braces, up to the body limit): the bytes
// scanned are bounded by a budget, and a reply that exhausts it reports
// ok=false, a parse failure, rather than a guess from a partial search.
func callsCandidates(s string) (out []candidate, ok bool) {
	budget := 16*len(s) + 4096
	for i := 0; i < len(s); i++ {
		if s[i] != '{' {
			continue
		}
		if budget <= 0 {
			return nil, false
		}
		end := objectEnd(s, i)
		if end < 0 {
			budget -= len(s) - i
			continue
		}
		budget -= end - i
		c := candidate{text: s[i:end], json: s[i:end]}
		var top map[string]json.RawMessage
		err := json.Unmarshal([]byte(c.json), &top)
		if err != nil {
			if fixed, n := dropTrailingCommas(c.text); n > 0 && json.Unmarshal([]byte(fixed), &top) == nil {
				c.json, c.repaired, err = fixed, n, nil
			}
		}
		if err == nil {
			if _, ok := top["calls"]; ok {
				out = append(out, c)
			}
			i = end - 1 // an object's members are not candidates of their own
		}
	}
	return out, true
}

// objectEnd returns the index just past the object starting at s[i] ('{'),
// or -1 when its braces never balance.
func objectEnd(s string, i int) int {
	depth := 0
	var str jsonString
	for j := i; j < len(s); j++ {
		switch c := s[j]; {
		case str.step(c):
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// jsonString follows JSON string boundaries one byte at a time, for the
// scanners that must not read braces or commas inside strings.
type jsonString struct{ in, esc bool }

// step consumes c and reports whether it belongs to a string (its quotes
// included).
func (st *jsonString) step(c byte) bool {
	switch {
	case st.in:
		switch {
		case st.esc:
			st.esc = false
		case c == '\\':
			st.esc = true
		case c == '"':
			st.in = false
		}
		return true
	case c == '"':
		st.in = true
		return true
	}
	return false
}
