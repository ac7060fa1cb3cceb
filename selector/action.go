package selector

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ActionKind says what a Session wants next ([Action.Kind], "action" in JSON).
type ActionKind string

// Action kinds.
const (
	// ActionChat asks the driver to send [Action.Chat] and Feed the outcome back.
	ActionChat ActionKind = "chat"
	// ActionDone ends the session: [Action.Result] and [Action.Err] are final.
	ActionDone ActionKind = "done"
)

// Action is what a Session wants next: a chat completion to be performed by
// the driver, or the final outcome. It marshals to the JSON the C ABI hands
// to Python:
//
//	{"action":"chat","model":"...","messages":[{"role","content"}],
//	 "params":{"temperature":0,"response_format":{"type":"json_object"},"timeout_s":30,"tools":[...]}}
//	{"action":"done","calls":[...],"attempts":[...],"dropped":[...],"offered":[...],"error":null|{"kind","message"}}
type Action struct {
	// Kind is ActionChat or ActionDone.
	Kind ActionKind
	// Chat is the request to send (ActionChat only).
	Chat *ChatRequest
	// Result is the outcome (ActionDone only; never nil then, Calls empty on failure).
	Result *Result
	// Err is nil on success, else a *SelectionError (ActionDone only).
	Err error
}

// Result is the outcome of a selection.
type Result struct {
	// Calls are the checked calls, at most Config.MaxCalls, in the model's order.
	Calls []ToolCall `json:"calls"`
	// Attempts lists every model call, in order.
	Attempts []Attempt `json:"attempts"`
	// Dropped lists the calls of the successful attempt that were not returned
	// (invalid ones when fail-open, and any beyond MaxCalls).
	Dropped []DroppedCall `json:"dropped,omitempty"`
	// Offered are the canonical names of the tools offered to the model.
	Offered []string `json:"offered"`
	// FeedbackError says why recording the selection as feedback failed
	// ([Config.Recorder]); the calls stand.
	FeedbackError string `json:"feedback_error,omitempty"`
	// FeedbackQuery is the text a selection with calls is learned under (the
	// task description and its sub-tasks, one per line, or the query): the
	// value to withdraw it with ([ToolSelector.Withdraw] takes the Result
	// itself). "" when no call was returned.
	FeedbackQuery string `json:"feedback_query,omitempty"`
}

type chatJSON struct {
	Action   ActionKind `json:"action"`
	Model    string     `json:"model"`
	Dialect  string     `json:"dialect,omitempty"`
	Messages []Message  `json:"messages"`
	Params   chatParams `json:"params"`
}

type chatParams struct {
	Temperature    *float64          `json:"temperature,omitempty"`
	ResponseFormat any               `json:"response_format,omitempty"`
	TimeoutS       float64           `json:"timeout_s"`
	Tools          []json.RawMessage `json:"tools,omitempty"`
	// The dialect's fields (docs/providers.md): OpenAI's own as keywords,
	// the provider's in extra_body, as the OpenAI SDKs take them.
	MaxTokens           json.RawMessage            `json:"max_tokens,omitempty"`
	MaxCompletionTokens json.RawMessage            `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     json.RawMessage            `json:"reasoning_effort,omitempty"`
	ExtraBody           map[string]json.RawMessage `json:"extra_body,omitempty"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type doneJSON struct {
	Action ActionKind `json:"action"`
	*Result
	Error *ErrorInfo `json:"error"`
}

// MarshalJSON writes the action as documented on Action.
func (a Action) MarshalJSON() ([]byte, error) {
	switch a.Kind {
	case ActionChat:
		if a.Chat == nil {
			return nil, errors.New("chat action without a request")
		}
		c := a.Chat
		p := chatParams{
			TimeoutS:            c.Timeout.Seconds(),
			Tools:               c.Tools,
			MaxTokens:           c.Params["max_tokens"],
			MaxCompletionTokens: c.Params["max_completion_tokens"],
			ReasoningEffort:     c.Params["reasoning_effort"],
			ExtraBody:           c.ExtraBody,
		}
		if !c.OmitTemperature {
			t := c.Temperature
			p.Temperature = &t
		}
		if rf, ok := c.Params["response_format"]; ok {
			p.ResponseFormat = rf
		} else if c.ResponseFormat != "" {
			p.ResponseFormat = &responseFormat{Type: c.ResponseFormat}
		}
		return json.Marshal(chatJSON{Action: ActionChat, Model: c.Model, Dialect: c.Dialect, Messages: c.Messages, Params: p})
	case ActionDone:
		r := a.Result
		if r == nil {
			r = &Result{}
		}
		r2 := *r
		if r2.Calls == nil {
			r2.Calls = []ToolCall{}
		}
		if r2.Attempts == nil {
			r2.Attempts = []Attempt{}
		}
		if r2.Offered == nil {
			r2.Offered = []string{}
		}
		return json.Marshal(doneJSON{Action: ActionDone, Result: &r2, Error: newErrorInfo(a.Err)})
	}
	return nil, fmt.Errorf("unknown action kind %q", a.Kind)
}

// JSON is MarshalJSON for callers that cannot handle an error: an action that
// cannot be marshaled (none the Session produces) yields an error document.
func (a Action) JSON() []byte {
	b, err := a.MarshalJSON()
	if err != nil {
		b, _ = json.Marshal(map[string]any{"action": ActionDone, "calls": []any{}, "attempts": []any{},
			"error": ErrorInfo{Kind: "internal", Message: err.Error()}})
	}
	return b
}
