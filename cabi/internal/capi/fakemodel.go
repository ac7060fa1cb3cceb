package capi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/toolselect/toolselect/modeltest"
)

// fakeReply is one scripted reply of FakeModelNew: modeltest.Reply in
// JSON. "calls" answers tool calls, "content" raw message text, and
// "status" (not 200) an HTTP error whose message is "content".
type fakeReply struct {
	Calls []struct {
		Tool      string          `json:"tool"`
		Args      json.RawMessage `json:"args"`
		Reasoning string          `json:"reasoning"`
	} `json:"calls"`
	Content string `json:"content"`
	Status  int    `json:"status"`
}

// FakeModelNew starts the Go modeltest fake model on 127.0.0.1, answering
// the replies (a JSON array of fakeReply) in order, the last one again
// when they run out: {"handle": H, "url": "http://127.0.0.1:PORT/v1"}. It
// lets a binding's users test against a model with no Go toolchain and no
// checkout: the server is the library's own.
func FakeModelNew(repliesJSON []byte, present bool) Result {
	var in []fakeReply
	if present && len(bytes.TrimSpace(repliesJSON)) > 0 {
		if r := Strict("replies_json", repliesJSON, true, &in); r != nil {
			return *r
		}
	}
	replies := make([]modeltest.Reply, len(in))
	for i, r := range in {
		if r.Status != 0 && (r.Status < 100 || r.Status > 599) {
			return Fail(ErrArgument, "replies_json: reply %d: status must be an HTTP status from 100 to 599, got %d", i, r.Status)
		}
		if r.Status != 0 && r.Status != http.StatusOK && len(r.Calls) > 0 {
			return Fail(ErrArgument, "replies_json: reply %d: an HTTP error status (%d) answers no calls; give its message as \"content\"", i, r.Status)
		}
		replies[i] = modeltest.Reply{Content: r.Content, Status: r.Status}
		for j, c := range r.Calls {
			if c.Tool == "" {
				return Fail(ErrArgument, "replies_json: reply %d, call %d: tool is empty", i, j)
			}
			var args any
			if len(c.Args) > 0 {
				args = c.Args
			}
			replies[i].Calls = append(replies[i].Calls, modeltest.Call{Tool: c.Tool, Args: args, Reasoning: c.Reasoning})
		}
	}
	s := modeltest.NewServer(replies...)
	return Ok(map[string]any{"handle": table.add(KindFakeModel, s), "url": s.URL})
}

// fakeRequest is one request FakeModelRequests reports.
type fakeRequest struct {
	Model    string              `json:"model"`
	Messages []modeltest.Message `json:"messages"`
	Tools    []string            `json:"tools"`
	Body     json.RawMessage     `json:"body"`
}

// FakeModelRequests returns the chat requests the fake model got, in order:
// {"requests": [{"model", "messages": [{"role","content"}], "tools", "body"}]},
// "body" the request's JSON body as sent.
func FakeModelRequests(h uint64) Result {
	v, r := table.get(h, KindFakeModel)
	if r != nil {
		return *r
	}
	reqs := v.(*modeltest.Server).Requests()
	out := make([]fakeRequest, len(reqs))
	for i, q := range reqs {
		out[i] = fakeRequest{Model: q.Model, Messages: q.Messages, Tools: q.Tools, Body: q.Body}
		if out[i].Messages == nil {
			out[i].Messages = []modeltest.Message{}
		}
		if out[i].Tools == nil {
			out[i].Tools = []string{}
		}
	}
	return Ok(map[string]any{"requests": out})
}

// FakeModelClose stops the fake model (waiting up to 2 seconds for the
// requests being answered) and releases its handle.
func FakeModelClose(h uint64) Result {
	v, r := table.get(h, KindFakeModel)
	if r != nil {
		return *r
	}
	res := table.remove(h, KindFakeModel)
	if res.Code == OK {
		v.(*modeltest.Server).Close()
	}
	return res
}
