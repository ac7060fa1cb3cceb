package selector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// feedDoc is the JSON a non-Go driver feeds back. Either the short form
//
//	{"content":"...","tool_calls":[...],"usage":{...}} or {"error":{"kind","message","status_code"}}
//
// or a whole OpenAI chat completion ({"choices":[{"message":{...}}],"usage":{...}}).
type feedDoc struct {
	Content   *string           `json:"content"`
	ToolCalls []json.RawMessage `json:"tool_calls"`
	Usage     *feedUsage        `json:"usage"`
	Error     *feedError        `json:"error"`
	Choices   *[]feedChoice     `json:"choices"`
	Object    string            `json:"object"`
}

type feedUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

type feedError struct {
	Kind       string `json:"kind"`
	Message    string `json:"message"`
	StatusCode int    `json:"status_code"`
}

type feedChoice struct {
	Message struct {
		Content   *string           `json:"content"`
		ToolCalls []json.RawMessage `json:"tool_calls"`
	} `json:"message"`
}

// feedToolCall accepts the OpenAI shape {"id","type","function":{"name","arguments"}}
// and the flat {"id","name","arguments"}; arguments may be a JSON string or an object.
type feedToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Function  *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// parseFeed reads a chat outcome given as JSON: {"content":"..."},
// {"tool_calls":[...]} (OpenAI or flat shape, arguments as a JSON string or
// an object), {"error":{"kind","message","status_code"}} (kind one of the
// FailureKinds; anything else counts as transport), or a whole OpenAI chat
// completion object. "usage" is read when present. chatErr is the failure the
// document reports; err is non-nil only when data is not such a document.
func parseFeed(data []byte) (resp ChatResponse, chatErr error, err error) {
	var d feedDoc
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return ChatResponse{}, nil, fmt.Errorf("selector: feed is not a JSON object: %v", err)
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return ChatResponse{}, nil, fmt.Errorf("selector: feed is not a chat outcome: %v", err)
	}
	_, hasContent := keys["content"]
	_, hasCalls := keys["tool_calls"]
	if d.Usage != nil {
		resp.PromptTokens, resp.CompletionTokens = d.Usage.PromptTokens, d.Usage.CompletionTokens
	}
	if d.Error != nil {
		k := FailureKind(strings.TrimSpace(d.Error.Kind))
		if !k.known() {
			k = KindTransport
		}
		msg := d.Error.Message
		if msg == "" {
			msg = "the driver reported a failure without a message"
		}
		return resp, &ChatError{Kind: k, StatusCode: d.Error.StatusCode, Message: msg}, nil
	}
	content, calls := d.Content, d.ToolCalls
	if d.Choices != nil {
		if len(*d.Choices) == 0 {
			return resp, &ChatError{Kind: KindEmptyChoices, Message: ErrEmptyChoices.Error(), Err: ErrEmptyChoices}, nil
		}
		m := (*d.Choices)[0].Message
		content, calls = m.Content, m.ToolCalls
	} else if !hasContent && !hasCalls {
		return ChatResponse{}, nil, errors.New(`selector: feed has none of "content", "tool_calls", "error", "choices"`)
	}
	if content != nil {
		resp.Content = *content
	}
	for i, raw := range calls {
		var tc feedToolCall
		if err := json.Unmarshal(raw, &tc); err != nil {
			return ChatResponse{}, nil, fmt.Errorf("selector: feed tool_calls[%d]: %v", i, err)
		}
		name, args := tc.Name, tc.Arguments
		if tc.Function != nil {
			name, args = tc.Function.Name, tc.Function.Arguments
		}
		nc := NativeCall{ID: tc.ID, Name: name}
		args = bytes.TrimSpace(args)
		switch {
		case len(args) == 0 || isNull(args):
		case isJSONString(args):
			if err := json.Unmarshal(args, &nc.Arguments); err != nil {
				return ChatResponse{}, nil, fmt.Errorf("selector: feed tool_calls[%d].arguments: %v", i, err)
			}
		default:
			nc.Arguments = string(args)
		}
		resp.ToolCalls = append(resp.ToolCalls, nc)
	}
	return resp, nil, nil
}

// FeedJSON is Feed with the outcome of the pending chat given as JSON:
//
//	{"content":"...","usage":{"prompt_tokens":1,"completion_tokens":2}}
//	{"tool_calls":[{"id":"c1","type":"function","function":{"name":"...","arguments":"{...}"}}]}
//	{"error":{"kind":"timeout","message":"...","status_code":0}}
//
// or a whole OpenAI chat completion object ({"choices":[...],"usage":{...}};
// no choices is an empty_choices failure). Tool calls may also be flat
// ({"id","name","arguments"}) and arguments an object instead of a string.
// An error kind outside FailureKinds counts as transport. A document that
// cannot be read is an error and leaves the session unchanged.
func (ss *Session) FeedJSON(data []byte) (Action, error) {
	resp, chatErr, err := parseFeed(data)
	if err != nil {
		return ss.Next(), err
	}
	return ss.Feed(resp, chatErr), nil
}
