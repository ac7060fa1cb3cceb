package selector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// feedError is a driver's report of a failed chat:
// {"kind","message","status_code","body","retry_after","source"}. For an
// HTTP status, "body" is the error body the driver's client kept (JSON as
// sent, or its text) and "retry_after" the Retry-After header: both are read
// by the one error-body reader, as the Go transport reads them, and the
// message then starts with "source" (what raised it, e.g. the client's
// exception type) when given.
type feedError struct {
	Kind       string          `json:"kind"`
	Message    string          `json:"message"`
	StatusCode int             `json:"status_code"`
	Body       json.RawMessage `json:"body"`
	RetryAfter string          `json:"retry_after"`
	Source     string          `json:"source"`
}

// parseFeed reads a chat outcome given as JSON: the short form
// {"content":...,"tool_calls":[...],"reasoning_content":...,"finish_reason":...,"usage":{...}},
// a driver's failure {"error":{"kind","message","status_code"}} (kind one of
// the FailureKinds; anything else counts as transport), or a whole chat
// completion as the provider sent it (read by the one reply reader,
// readCompletion: an "error" without a "kind" is the provider's own). chatErr
// is the failure the document reports; err is non-nil only when data is not
// such a document.
func parseFeed(data []byte) (resp ChatResponse, chatErr error, err error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return ChatResponse{}, nil, fmt.Errorf("feed is not a JSON object: %w", err)
	}
	if e, ok := keys["error"]; ok && !isNull(e) {
		var fe feedError
		var probe map[string]json.RawMessage
		if json.Unmarshal(e, &probe) == nil && probe["kind"] != nil {
			if err := json.Unmarshal(e, &fe); err != nil {
				return ChatResponse{}, nil, fmt.Errorf("feed is not a chat outcome: %w", err)
			}
			if u, ok := keys["usage"]; ok {
				_ = json.Unmarshal(u, &struct {
					P *int `json:"prompt_tokens"`
					C *int `json:"completion_tokens"`
				}{&resp.PromptTokens, &resp.CompletionTokens})
			}
			k := FailureKind(strings.TrimSpace(fe.Kind))
			if !k.known() {
				k = KindTransport
			}
			msg := fe.Message
			if msg == "" {
				msg = "the driver reported a failure without a message"
			}
			if k == KindHTTPStatus && fe.StatusCode >= 400 && (len(fe.Body) > 0 || fe.RetryAfter != "") {
				body := []byte(fe.Body)
				var text string
				if json.Unmarshal(fe.Body, &text) == nil {
					body = []byte(text) // the body as text
				}
				wait, ok := parseRetryAfter(fe.RetryAfter, time.Now())
				e := httpFailure(fe.StatusCode, body, msg, wait, ok)
				if src := strings.TrimSpace(fe.Source); src != "" {
					e.Message = clipMiddle(truncate(src, 64)+": "+e.Message, maxErrorMessage)
				}
				return resp, e, nil
			}
			return resp, &ChatError{Kind: k, StatusCode: fe.StatusCode, Message: msg}, nil
		}
	}
	_, hasChoices := keys["choices"]
	_, hasErr := keys["error"]
	if hasChoices || hasErr {
		var c wireCompletion
		if err := json.Unmarshal(data, &c); err != nil {
			return ChatResponse{}, nil, fmt.Errorf("feed is not a chat outcome: %w", err)
		}
		resp, chatErr := c.response()
		return resp, chatErr, nil
	}
	_, hasContent := keys["content"]
	_, hasCalls := keys["tool_calls"]
	if !hasContent && !hasCalls {
		return ChatResponse{}, nil, errors.New(`feed has none of "content", "tool_calls", "error", "choices"`)
	}
	var short struct {
		replyMessage
		FinishReason string `json:"finish_reason"`
		Usage        *struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(data, &short); err != nil {
		return ChatResponse{}, nil, fmt.Errorf("feed is not a chat outcome: %w", err)
	}
	if short.Usage != nil {
		resp.PromptTokens, resp.CompletionTokens = short.Usage.PromptTokens, short.Usage.CompletionTokens
	}
	resp.FinishReason = short.FinishReason
	if err := short.replyMessage.into(&resp); err != nil {
		var ce *ChatError
		if errors.As(err, &ce) {
			return ChatResponse{}, nil, fmt.Errorf("feed %s", ce.Message)
		}
		return ChatResponse{}, nil, err
	}
	return resp, nil, nil
}

// FeedJSON is Feed with the outcome of the pending chat given as JSON:
//
//	{"content":"...","usage":{"prompt_tokens":1,"completion_tokens":2}}
//	{"tool_calls":[{"id":"c1","type":"function","function":{"name":"...","arguments":"{...}"}}]}
//	{"error":{"kind":"timeout","message":"...","status_code":0}}
//	{"error":{"kind":"http_status","message":"...","status_code":429,"body":{...},"retry_after":"30"}}
//
// or a whole OpenAI chat completion object ({"choices":[...],"usage":{...}};
// no choices is an empty_choices failure). Tool calls may also be flat
// ({"id","name","arguments"}) and arguments an object instead of a string.
// An error kind outside FailureKinds counts as transport. A document that
// cannot be read is an error and leaves the session unchanged.
func (ss *Session) FeedJSON(ctx context.Context, data []byte) (Action, error) {
	resp, chatErr, err := parseFeed(data)
	if err != nil {
		return ss.Next(), err
	}
	return ss.Feed(ctx, resp, chatErr), nil
}
