package modeltest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/toolselect/toolselect/internal/chatwire"
)

// Call is one tool call a [Reply] answers.
type Call struct {
	// Tool is the tool's name.
	Tool string
	// Args is marshalled to JSON as the call's arguments: a map, a struct,
	// or a json.RawMessage sent as it is (nil: {}).
	Args any
	// Reasoning is the model's one-line reason (JSON contract only).
	Reasoning string
}

// Reply is one scripted answer.
type Reply struct {
	// Calls are the tool calls the model answers (none: it chose none).
	Calls []Call
	// Content, when set, is sent as the message content instead of Calls:
	// prose, or a contract reply written by hand.
	Content string
	// Status, when set and not 200, answers an HTTP error with an OpenAI
	// error body whose message is Content.
	Status int
}

// Message is one chat message of a recorded request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one chat completion request the server got.
type Request struct {
	// Model is the request's model.
	Model string
	// Messages are the request's messages, in order.
	Messages []Message
	// Tools are the names of the tools offered, in order: the request's
	// native "tools" (search_tools included when offered), or in the JSON
	// mode the tools listed in the system prompt.
	Tools []string
	// Header is the request's HTTP header (Authorization included).
	Header http.Header
	// Body is the request's JSON body, as sent.
	Body []byte
}

// Server is a running fake model. Its methods may be called from any
// goroutine.
type Server struct {
	// URL is the base URL to configure: "http://127.0.0.1:PORT/v1".
	URL string

	srv      *http.Server
	done     chan struct{}
	mu       sync.Mutex
	replies  []Reply
	requests []Request
}

// NewServer starts a fake model on 127.0.0.1 answering replies in order
// (see the package documentation). Like httptest.NewServer, it panics when
// it cannot listen. Unlike it, it registers no command-line flag, so a
// program may use it too.
func NewServer(replies ...Reply) *Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("modeltest: listening on 127.0.0.1: %v", err))
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1", replies: replies, done: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s
}

// Close stops the server: it waits up to 2 seconds for the requests being
// answered, then closes every connection. Closing twice is harmless.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
}

// Requests returns a copy of the chat requests served so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// wireRequest is the part of a chat completion request the server reads.
type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		chatwire.WriteJSON(w, http.StatusNotFound, chatwire.OpenAIError("modeltest: only POST .../chat/completions is served, not "+r.Method+" "+r.URL.Path))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return
	}
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		chatwire.WriteJSON(w, http.StatusBadRequest, chatwire.OpenAIError("modeltest: the request is not JSON: "+err.Error()))
		return
	}
	req := Request{Model: wr.Model, Header: r.Header.Clone(), Body: body}
	for _, m := range wr.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			text = string(m.Content) // content parts, kept as JSON
		}
		req.Messages = append(req.Messages, Message{Role: m.Role, Content: text})
	}
	for _, t := range wr.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	native := len(req.Tools) > 0
	if !native {
		for _, m := range req.Messages {
			if m.Role == "system" {
				req.Tools = chatwire.PromptTools(m.Content)
				break
			}
		}
	}
	s.mu.Lock()
	reply := Reply{}
	if n := len(s.replies); n > 0 {
		reply = s.replies[min(len(s.requests), n-1)]
	}
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	s.answer(w, &req, native, reply)
}

// answer writes reply: calls as native tool calls when the request offered
// tools natively, else as the JSON contract in the content.
func (s *Server) answer(w http.ResponseWriter, req *Request, native bool, reply Reply) {
	switch {
	case reply.Status != 0 && reply.Status != http.StatusOK:
		chatwire.WriteJSON(w, reply.Status, chatwire.OpenAIError(reply.Content))
		return
	case reply.Content != "":
		content := reply.Content
		chatwire.WriteRaw(w, http.StatusOK, "application/json", chatwire.Completion(req.Model, &content, nil))
		return
	}
	calls := make([]chatwire.Call, len(reply.Calls))
	for i, c := range reply.Calls {
		args, err := marshalArgs(c.Args)
		if err != nil {
			chatwire.WriteJSON(w, http.StatusInternalServerError, chatwire.OpenAIError(fmt.Sprintf("modeltest: the scripted arguments of %s: %v", c.Tool, err)))
			return
		}
		calls[i] = chatwire.Call{Tool: c.Tool, Args: args, Reasoning: c.Reasoning}
	}
	chatwire.WriteRaw(w, http.StatusOK, "application/json", chatwire.CallsCompletion(req.Model, native, calls))
}

func marshalArgs(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage(`{}`), nil
	}
	return json.Marshal(v)
}
