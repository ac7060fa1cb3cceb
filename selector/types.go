package selector

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolselect/toolselect/registry"
)

// SubTask is one step of a Task.
type SubTask struct {
	ID          string `json:"id,omitempty"`
	Description string `json:"description"`
}

// Task is what the caller wants done.
type Task struct {
	ID          string    `json:"id,omitempty"`
	Description string    `json:"description"`
	SubTasks    []SubTask `json:"sub_tasks,omitempty"`
}

// ToolCall is one call selected by the model and checked by the selector:
// Tool is the canonical registered name (even when the model answered with a
// provider-mapped name) and Args is a JSON object that validated against the
// tool's schema.
type ToolCall struct {
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Reasoning string          `json:"reasoning,omitempty"`
}

// Request is one selection: the task, the registry to choose from, and the
// filters that decide which tools may be offered at all.
type Request struct {
	// Task is required: a description, or at least a Query.
	Task Task `json:"task"`
	// Registry holds the candidate tools. Required.
	Registry *registry.Registry `json:"-"`
	// Query is an optional free-text query (also what a Prefilter ranks by).
	Query string `json:"query,omitempty"`
	// Context is optional caller state, shown to the model as JSON.
	Context map[string]any `json:"context,omitempty"`
	// Caller is who asks: the same value rank.Options.Caller and
	// executor.Options.Caller take. Roles, AllowUnsafe and Capabilities
	// below are shorthands for its fields and add to it.
	Caller registry.Eligibility `json:"-"`
	// Roles the caller holds; a tool with roles is offered only to one of them.
	Roles []string `json:"roles,omitempty"`
	// AllowUnsafe lets tools marked safe=false be offered.
	AllowUnsafe bool `json:"allow_unsafe,omitempty"`
	// Capabilities every offered tool must declare (e.g. "readOnly").
	Capabilities []string `json:"capabilities,omitempty"`
	// Prefilter, if set, narrows the eligible tools for this request instead
	// of the selector's own ([Config.Prefilter]).
	Prefilter Prefilter `json:"-"`
}

// Prefilter narrows the eligible tools (already filtered for safety, roles and
// capabilities, in catalog order) to the ones offered to the model. The rank
// package provides one; nil offers every eligible tool. query is
// [Request.Query], or the task and sub-task descriptions when the query is
// empty. Entries a Prefilter returns that were not eligible are ignored: a
// prefilter can only narrow, never widen.
type Prefilter func(ctx context.Context, query string, eligible []*registry.Entry) ([]*registry.Entry, error)

// Ranker is what the offer budget and the search round need from a ranking
// package: the selector declares it and does not import one (a *rank.Offering
// is one). Give it in [Config.Ranker].
type Ranker interface {
	// Rank returns the eligible tools that fit query best, about k of them
	// (rank adds prerequisites and always-active tools), in any order; it
	// may return none. reg is the request's registry, for rankers that keep
	// an index per registry. Entries not in eligible are ignored.
	Rank(ctx context.Context, reg *registry.Registry, query string, eligible []*registry.Entry, k int) ([]*registry.Entry, error)
	// Fits reports whether entries written in format f (the view the
	// request carries) take at most budget tokens.
	Fits(entries []*registry.Entry, f registry.Format, budget int) (bool, error)
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ReasoningContent is an assistant turn's reasoning, sent back where the
	// dialect requires it (DeepSeek, thinking on, a continued tool loop).
	ReasoningContent string `json:"reasoning_content,omitempty"`
	// ToolCalls are an assistant turn's native calls, in a continued conversation.
	ToolCalls []NativeCall `json:"tool_calls,omitempty"`
	// ToolCallID answers a call, on a "tool" message.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ChatRequest is what the selector asks a ChatClient to send.
type ChatRequest struct {
	// Model to ask.
	Model string
	// Messages: the system prompt and the user prompt.
	Messages []Message
	// Temperature must reach the wire as given, 0 included.
	Temperature float64
	// ResponseFormat is "json_object" (JSON mode), "json_schema" (JSON mode
	// where the dialect takes only that; Params["response_format"] holds the
	// whole value with the calls schema) or "" (native mode, or a dialect
	// that takes no format).
	ResponseFormat string
	// Dialect names the provider dialect the request was shaped for; empty
	// for the plain OpenAI chat request (the generic dialect, and OpenAI's
	// chat models). See docs/providers.md.
	Dialect string
	// OmitTemperature: the dialect (or an adaptation) sends no temperature,
	// as OpenAI's reasoning models take only their default.
	OmitTemperature bool
	// Params are further OpenAI request fields the dialect sends, as JSON by
	// name: max_tokens or max_completion_tokens, reasoning_effort, a
	// json_schema response_format.
	Params map[string]json.RawMessage
	// ExtraBody are provider fields outside OpenAI's API (DeepSeek's and
	// Z.ai's "thinking", DashScope's "enable_thinking", vLLM's and
	// llama.cpp's "chat_template_kwargs", OpenRouter's "reasoning"): what
	// the OpenAI SDKs call extra_body. They go at the top level of the body.
	ExtraBody map[string]json.RawMessage
	// Tools are OpenAI chat `tools` entries (native mode only), names provider-mapped.
	Tools []json.RawMessage
	// Timeout bounds this attempt: the smaller of Config.Timeout and the time
	// left before the caller's deadline.
	Timeout time.Duration
}

// NativeCall is one provider tool call: arguments arrive as a JSON string.
type NativeCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// MarshalJSON writes the call as an OpenAI assistant message's tool call:
// {"id","type":"function","function":{"name","arguments"}}.
func (c NativeCall) MarshalJSON() ([]byte, error) {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	return json.Marshal(struct {
		ID       string `json:"id,omitempty"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}{c.ID, "function", fn{c.Name, c.Arguments}})
}

// ChatResponse is the first choice of a chat completion.
type ChatResponse struct {
	// Content is the assistant message text.
	Content string
	// ToolCalls are the provider tool calls (native mode).
	ToolCalls []NativeCall
	// PromptTokens and CompletionTokens report usage when the server does.
	PromptTokens, CompletionTokens int
	// Reasoning is the model's reasoning text (reasoning_content, reasoning,
	// thinking parts, a think block): kept apart, never read for calls.
	Reasoning string
	// FinishReason is the choice's finish_reason ("stop", "length", ...).
	FinishReason string
	// Filtered lists the categories a content filter flagged, with their
	// severity, where the provider says (Azure's content_filter_results).
	Filtered []string
}

// ChatClient sends one chat completion. Implementations report failures with
// a *ChatError where they can (so the failure kind is exact); other errors are
// classified as timeout, canceled or transport. The go-openai adapter from
// NewOpenAIClient is one implementation.
type ChatClient interface {
	Chat(ctx context.Context, req ChatRequest) (ChatResponse, error)
}
