// Package chatwire renders OpenAI chat completion responses: the bytes the
// public fake model (package modeltest) and the fault server of the
// hardening tests send, written once so both speak the same wire format.
package chatwire

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Call is one tool call in a scripted answer.
type Call struct {
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Reasoning string          `json:"reasoning,omitempty"`
}

// CallsJSON is calls in toolselect's JSON contract: {"calls":[...]}.
func CallsJSON(calls []Call) []byte {
	if calls == nil {
		calls = []Call{}
	}
	b, _ := json.Marshal(map[string]any{"calls": calls})
	return b
}

// Completion renders a chat completion whose message has content (nil:
// JSON null) and, when given, native tool_calls.
func Completion(model string, content *string, toolCalls []map[string]any) []byte {
	msg := map[string]any{"role": "assistant", "content": content}
	if len(toolCalls) > 0 {
		msg["tool_calls"] = toolCalls
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
		"usage":   map[string]int{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
	return b
}

// CallsCompletion renders calls as a completion: native tool_calls when the
// request offered tools (native), else the JSON contract as content.
func CallsCompletion(model string, native bool, calls []Call) []byte {
	if !native {
		s := string(CallsJSON(calls))
		return Completion(model, &s, nil)
	}
	tcs := make([]map[string]any, len(calls))
	for i, c := range calls {
		tcs[i] = map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": c.Tool, "arguments": string(c.Args)}}
	}
	return Completion(model, nil, tcs)
}

// OpenAIError is an error body in OpenAI's shape.
func OpenAIError(msg string) map[string]any {
	return map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": nil}}
}

// WriteJSON writes v as JSON with the status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	WriteRaw(w, status, "application/json", b)
}

// WriteRaw writes b with the status, content type and an honest
// Content-Length.
func WriteRaw(w http.ResponseWriter, status int, ctype string, b []byte) {
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ToolsHeading opens the list of offered tools at the end of the selector's
// JSON-mode system prompt: the heading, then the tools' schema view (a JSON
// array of {"name",...}). The selector writes it and the fake model reads
// it (PromptTools), so the two cannot drift apart.
const ToolsHeading = "\n\nTools:\n"

// PromptTools returns the names of the tools a JSON-mode system prompt
// offers, in order: those of the JSON array after ToolsHeading. It returns
// nil when the prompt has no heading or what follows it is not such an array.
func PromptTools(system string) []string {
	i := strings.Index(system, ToolsHeading)
	if i < 0 {
		return nil
	}
	var tools []struct {
		Name string `json:"name"`
	}
	if json.Unmarshal([]byte(system[i+len(ToolsHeading):]), &tools) != nil {
		return nil
	}
	names := make([]string, len(tools))
	for k, t := range tools {
		names[k] = t.Name
	}
	return names
}
