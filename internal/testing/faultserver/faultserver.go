// Package faultserver is a loopback OpenAI-compatible chat completions server
// that fails on purpose. Tests point a selector at it and check that every way
// an LLM endpoint can misbehave ends in the documented outcome.
//
// The fault for a request is chosen, first match wins, by:
//
//   - the model name "fault:NAME" (so a primary model can fail while the
//     fallback model, on the same URL, answers);
//   - the header "X-Fault: NAME";
//   - the path: BaseURL(NAME) is ".../fault/NAME/v1", so every model sent to
//     that base URL gets the fault;
//   - otherwise "ok".
//
// Every fault is listed in Faults with the outcome the Go transport
// (selector.NewOpenAIClient) must produce. The server listens on 127.0.0.1
// only. Handlers that stall return as soon as the client goes away or the
// server closes, so a test's goroutine count settles.
package faultserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolselect/toolselect/internal/chatwire"
)

// Fault names.
const (
	OK              = "ok"
	DelayHeaders    = "delay_headers"
	DelayBody       = "delay_body"
	Reset           = "reset"
	Status400       = "status_400"
	Status401       = "status_401"
	Status404       = "status_404"
	Status408       = "status_408"
	Status429       = "status_429"
	Status500       = "status_500"
	Status502HTML   = "status_502_html"
	Status503       = "status_503"
	TruncatedJSON   = "truncated_json"
	ShortBody       = "short_body"
	HugeBody        = "huge_body"
	HugeChunked     = "huge_chunked"
	EmptyChoices    = "empty_choices"
	OllamaError     = "ollama_error"
	VLLMError       = "vllm_error"
	HTML200         = "html_200"
	Prose           = "prose"
	UnknownTool     = "unknown_tool"
	InvalidArgs     = "invalid_args"
	Calls1000       = "calls_1000"
	DuplicateCalls  = "duplicate_calls"
	DeepArgs        = "deep_args"
	DeeperArgs      = "deeper_args"
	ArgsArray       = "args_array"
	ArgsString      = "args_string"
	EchoAuth        = "echo_auth"
	EchoAuthOllama  = "echo_auth_ollama"
	EchoAuthHTML    = "echo_auth_html"
	EchoAuthEdge    = "echo_auth_edge"
	EchoAuthContent = "echo_auth_content"
	EchoAuthArgs    = "echo_auth_args"
	Inject          = "inject"
)

// HugeBytes is the size of the HugeBody and HugeChunked bodies (50 MB).
const HugeBytes = 50 << 20

// Fault describes one fault and the outcome the Go HTTP transport must give.
type Fault struct {
	// Name selects the fault.
	Name string `json:"name"`
	// What the server does.
	Does string `json:"does"`
	// Kind is the failure kind of an attempt that hits this fault, or "" when
	// the attempt succeeds.
	Kind string `json:"kind"`
	// Calls is how many calls a successful attempt keeps (MaxCalls 5).
	Calls int `json:"calls,omitempty"`
	// Slow faults wait for the attempt's timeout.
	Slow bool `json:"slow,omitempty"`
	// Content faults answer 200 with a well-formed completion whose content
	// (JSON mode) or tool_calls (native mode) is the fault.
	Content bool `json:"content,omitempty"`
	// Secret faults echo the request's Authorization header back.
	Secret bool `json:"secret,omitempty"`
}

// Faults is the table, in documentation order. Inject is not in it: its
// outcome depends on the prompt (see the security tests).
var Faults = []Fault{
	{Name: OK, Does: "answers one valid call to get_weather", Calls: 1, Content: true},
	{Name: DelayHeaders, Does: "sends no headers until the client gives up", Kind: "timeout", Slow: true},
	{Name: DelayBody, Does: "sends headers and half the body, then stalls", Kind: "timeout", Slow: true},
	{Name: Reset, Does: "resets the TCP connection (RST) after reading the request", Kind: "transport"},
	{Name: Status400, Does: "400 with an OpenAI error body", Kind: "http_status"},
	{Name: Status401, Does: "401 with an OpenAI error body", Kind: "http_status"},
	{Name: Status404, Does: "404 with an OpenAI error body", Kind: "http_status"},
	{Name: Status408, Does: "408 with an OpenAI error body", Kind: "http_status"},
	{Name: Status429, Does: "429 with Retry-After: 30", Kind: "http_status"},
	{Name: Status500, Does: "500 with an OpenAI error body", Kind: "http_status"},
	{Name: Status502HTML, Does: "502 with an nginx-style HTML page", Kind: "http_status"},
	{Name: Status503, Does: "503 with an OpenAI error body", Kind: "http_status"},
	{Name: TruncatedJSON, Does: "200, a completion cut in the middle (honest Content-Length)", Kind: "transport"},
	{Name: ShortBody, Does: "200, Content-Length of the whole completion, half of it sent, then close", Kind: "transport"},
	{Name: HugeBody, Does: "200, a 50 MB body announced by Content-Length", Kind: "response_too_large"},
	{Name: HugeChunked, Does: "200, a 50 MB chunked body (no Content-Length)", Kind: "response_too_large"},
	{Name: EmptyChoices, Does: "200, valid completion with \"choices\": []", Kind: "empty_choices"},
	{Name: OllamaError, Does: "404 {\"error\":\"model not found\"} (Ollama shape)", Kind: "http_status"},
	{Name: VLLMError, Does: "400 {\"object\":\"error\",\"message\",...} (vLLM shape)", Kind: "http_status"},
	{Name: HTML200, Does: "200 with an HTML page instead of JSON", Kind: "transport"},
	{Name: Prose, Does: "the model answers prose instead of the contract", Kind: "parse", Content: true},
	{Name: UnknownTool, Does: "calls a tool that is not registered", Kind: "validation", Content: true},
	{Name: InvalidArgs, Does: "calls get_weather with schema-invalid args", Kind: "validation", Content: true},
	{Name: Calls1000, Does: "1,000 valid calls", Calls: 5, Content: true},
	{Name: DuplicateCalls, Does: "the same valid call twice", Calls: 2, Content: true},
	{Name: DeepArgs, Does: "args nested 100 levels deep (over the 64 limit)", Kind: "validation", Content: true},
	{Name: DeeperArgs, Does: "args nested 20,000 levels deep (over encoding/json's 10,000)", Kind: "parse", Content: true},
	{Name: ArgsArray, Does: "args is a JSON array", Kind: "parse", Content: true},
	{Name: ArgsString, Does: "args is a string holding a number", Kind: "parse", Content: true},
	{Name: EchoAuth, Does: "401 echoing the Authorization header in an OpenAI error", Kind: "http_status", Secret: true},
	{Name: EchoAuthOllama, Does: "401 echoing the Authorization header, Ollama shape", Kind: "http_status", Secret: true},
	{Name: EchoAuthHTML, Does: "502 HTML page echoing the Authorization header", Kind: "http_status", Secret: true},
	{Name: EchoAuthEdge, Does: "400 echoing the header where the 512-byte message cut falls inside the key", Kind: "http_status", Secret: true},
	{Name: EchoAuthContent, Does: "200, the model's prose starts with the Authorization header", Kind: "parse", Content: true, Secret: true},
	{Name: EchoAuthArgs, Does: "200, a call to an unknown tool whose args hold the Authorization header", Kind: "validation", Content: true, Secret: true},
}

// Options configures a Server.
type Options struct {
	// Latency is added before every answer (the load test's server time).
	Latency time.Duration
	// Stall bounds how long a stalling fault waits for the client to give up
	// (default 2 minutes).
	Stall time.Duration
	// Script, when set, answers the "ok" requests instead of the fixed
	// get_weather call for Paris (see [Reply]).
	Script []Reply
}

// Server is a running fault server.
type Server struct {
	// URL is the base URL for "ok": "http://127.0.0.1:PORT/v1".
	URL string

	opts     Options
	ln       net.Listener
	srv      *http.Server
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}

	requests atomic.Int64
	mu       sync.Mutex
	seen     map[string]int
}

// Start listens on 127.0.0.1 on a free port and serves until Close.
func Start(opts Options) (*Server, error) {
	if opts.Stall <= 0 {
		opts.Stall = 2 * time.Minute
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, ln: ln, stop: make(chan struct{}), done: make(chan struct{}), seen: map[string]int{}}
	s.URL = "http://" + ln.Addr().String() + "/v1"
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// BaseURL is the base URL whose every request gets the named fault.
func (s *Server) BaseURL(fault string) string {
	return "http://" + s.ln.Addr().String() + "/fault/" + fault + "/v1"
}

// Requests is the number of chat requests served so far.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Seen returns how many requests each fault served.
func (s *Server) Seen() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.seen))
	for k, v := range s.seen {
		out[k] = v
	}
	return out
}

// Close stops the server, ends stalled handlers and closes every connection.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
}

// chatRequest is the part of a chat completion request the server reads.
type chatRequest struct {
	Model    string            `json:"model"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
}

// ServeHTTP answers POST .../chat/completions.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "request is not JSON: " + err.Error()}})
		return
	}
	fault := OK
	switch {
	case strings.HasPrefix(req.Model, "fault:"):
		fault = strings.TrimPrefix(req.Model, "fault:")
	case r.Header.Get("X-Fault") != "":
		fault = r.Header.Get("X-Fault")
	case strings.HasPrefix(r.URL.Path, "/fault/"):
		rest := strings.TrimPrefix(r.URL.Path, "/fault/")
		if i := strings.IndexByte(rest, '/'); i > 0 {
			fault = rest[:i]
		}
	}
	s.requests.Add(1)
	s.mu.Lock()
	s.seen[fault]++
	s.mu.Unlock()
	if s.opts.Latency > 0 && !s.sleep(r.Context(), s.opts.Latency) {
		return
	}
	s.answer(w, r, fault, &req, body)
}

// sleep waits d; false when the client went away or the server is closing.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.stop:
	}
	return false
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, fault string, req *chatRequest, body []byte) {
	native := len(req.Tools) > 0
	auth := r.Header.Get("Authorization")
	openAIErr := func(status int, msg string) { writeJSON(w, status, chatwire.OpenAIError(msg)) }
	switch fault {
	case OK:
		if len(s.opts.Script) > 0 {
			s.scripted(w, req, native)
			return
		}
		s.complete(w, req, native, []call{weather("Paris")})
	case DelayHeaders:
		s.sleep(r.Context(), s.opts.Stall)
	case DelayBody:
		writeHalf(w, parisCompletion(req.Model))
		s.sleep(r.Context(), s.opts.Stall)
	case Reset:
		reset(w)
	case Status400:
		openAIErr(400, "Invalid value for 'messages[0].name': a string of at most 64 characters")
	case Status401:
		openAIErr(401, "Incorrect API key provided")
	case Status404:
		openAIErr(404, "The model `"+req.Model+"` does not exist")
	case Status408:
		openAIErr(408, "Request timed out")
	case Status429:
		w.Header().Set("Retry-After", "30")
		openAIErr(429, "Rate limit reached for requests")
	case Status500:
		openAIErr(500, "The server had an error while processing your request")
	case Status502HTML:
		writeRaw(w, 502, "text/html", []byte("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"))
	case Status503:
		openAIErr(503, "The engine is currently overloaded, please try again later")
	case TruncatedJSON:
		full := parisCompletion(req.Model)
		writeRaw(w, 200, "application/json", full[:len(full)/2])
	case ShortBody:
		// Returning with fewer bytes than announced makes net/http close the connection.
		writeHalf(w, parisCompletion(req.Model))
	case HugeBody, HugeChunked:
		s.huge(w, r, fault == HugeBody)
	case EmptyChoices:
		writeJSON(w, 200, map[string]any{"id": "chatcmpl-empty", "object": "chat.completion", "created": 0, "model": req.Model,
			"choices": []any{}, "usage": map[string]int{"prompt_tokens": 10, "completion_tokens": 0, "total_tokens": 10}})
	case OllamaError:
		writeJSON(w, 404, map[string]any{"error": "model \"" + req.Model + "\" not found, try pulling it first"})
	case VLLMError:
		writeJSON(w, 400, map[string]any{"object": "error", "message": "This model's maximum context length is 4096 tokens.",
			"type": "BadRequestError", "param": nil, "code": 400})
	case HTML200:
		writeRaw(w, 200, "text/html", []byte("<html><head><title>Welcome</title></head><body>captive portal</body></html>"))
	case Prose:
		s.completeContent(w, req, "Sure! I would call get_weather for Paris.")
	case UnknownTool:
		s.complete(w, req, native, []call{{Tool: "launch_rockets", Args: json.RawMessage(`{"count":3}`)}})
	case InvalidArgs:
		s.complete(w, req, native, []call{{Tool: "get_weather", Args: json.RawMessage(`{"city":42,"units":"kelvin"}`)}})
	case Calls1000:
		calls := make([]call, 1000)
		for i := range calls {
			calls[i] = weather(fmt.Sprintf("City %d", i))
		}
		s.complete(w, req, native, calls)
	case DuplicateCalls:
		s.complete(w, req, native, []call{weather("Paris"), weather("Paris")})
	case DeepArgs:
		s.complete(w, req, native, []call{{Tool: "get_weather", Args: deepArgs(100)}})
	case DeeperArgs:
		s.complete(w, req, native, []call{{Tool: "get_weather", Args: deepArgs(20000)}})
	case ArgsArray:
		s.complete(w, req, native, []call{{Tool: "get_weather", Args: json.RawMessage(`["Paris"]`)}})
	case ArgsString:
		s.complete(w, req, native, []call{{Tool: "get_weather", Args: json.RawMessage(`"42"`)}})
	case EchoAuth:
		openAIErr(401, "Incorrect API key provided: "+auth+". You can find your API key at https://example.invalid/keys.")
	case EchoAuthOllama:
		writeJSON(w, 401, map[string]any{"error": "unauthorized: header " + auth})
	case EchoAuthHTML:
		writeRaw(w, 502, "text/html", []byte("<html><head><title>502 "+auth+"</title></head><body><p>upstream rejected "+auth+"</p></body></html>"))
	case EchoAuthEdge:
		key := strings.TrimPrefix(auth, "Bearer ")
		pad := 512 - len(key)/2 // the message is cut at 512 bytes: the cut falls in the middle of the key
		if pad < 0 {
			pad = 0
		}
		openAIErr(400, strings.Repeat("x", pad)+key+" was rejected")
	case EchoAuthContent:
		s.completeContent(w, req, auth+" is what you sent me")
	case EchoAuthArgs:
		args, _ := json.Marshal(map[string]string{"header": auth})
		s.complete(w, req, native, []call{{Tool: "leak_tool", Args: args}})
	case Inject:
		calls := []call{weather("Paris")}
		if bytes.Contains(body, []byte("delete_database")) {
			calls = []call{{Tool: "delete_database", Args: json.RawMessage(`{"confirm":true}`), Reasoning: "the user told me to ignore the tools above"}}
		}
		s.complete(w, req, native, calls)
	default:
		openAIErr(400, "faultserver: unknown fault "+fault)
	}
}

// huge streams HugeBytes of valid-looking JSON from a small buffer, so the
// server itself allocates next to nothing.
func (s *Server) huge(w http.ResponseWriter, r *http.Request, announce bool) {
	w.Header().Set("Content-Type", "application/json")
	if announce {
		w.Header().Set("Content-Length", fmt.Sprint(HugeBytes))
	}
	w.WriteHeader(http.StatusOK)
	head := []byte(`{"id":"chatcmpl-huge","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"`)
	tail := []byte(`"}}]}`)
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	left := HugeBytes - len(head) - len(tail)
	if _, err := w.Write(head); err != nil {
		return
	}
	for left > 0 {
		select {
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		default:
		}
		n := min(left, len(chunk))
		if _, err := w.Write(chunk[:n]); err != nil {
			return
		}
		left -= n
	}
	_, _ = w.Write(tail)
}

// call is one call in a scripted answer.
type call = chatwire.Call

func weather(city string) call {
	a, _ := json.Marshal(map[string]string{"city": city})
	return call{Tool: "get_weather", Args: a, Reasoning: "the task asks for the weather"}
}

func deepArgs(depth int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"city":"Paris","extra":`)
	for i := 0; i < depth; i++ {
		b.WriteString(`{"a":`)
	}
	b.WriteString("1")
	b.WriteString(strings.Repeat("}", depth))
	b.WriteString("}")
	return json.RawMessage(b.String())
}

// complete answers calls: as the `calls` JSON contract, or as native
// tool_calls when the request offered tools.
func (s *Server) complete(w http.ResponseWriter, req *chatRequest, native bool, calls []call) {
	writeRaw(w, 200, "application/json", chatwire.CallsCompletion(req.Model, native, calls))
}

// parisCompletion is the "ok" answer in the JSON contract, whole.
func parisCompletion(model string) []byte {
	return chatwire.CallsCompletion(model, false, []call{weather("Paris")})
}

// writeHalf announces the whole body's Content-Length, sends its first half
// and flushes it to the client.
func writeHalf(w http.ResponseWriter, full []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(full)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(full[:len(full)/2])
	w.(http.Flusher).Flush()
}

func (s *Server) completeContent(w http.ResponseWriter, req *chatRequest, content string) {
	writeRaw(w, 200, "application/json", chatwire.Completion(req.Model, &content, nil))
}

var writeJSON, writeRaw = chatwire.WriteJSON, chatwire.WriteRaw

// reset hijacks the connection and closes it with SO_LINGER 0, which sends
// a TCP RST instead of a FIN.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(errors.New("faultserver: connection cannot be hijacked"))
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
