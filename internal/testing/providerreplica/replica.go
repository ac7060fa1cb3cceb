// Package providerreplica serves loopback replicas of what model providers
// document: each case in testdata/providers/ says what a provider refuses
// (a request field it answers 400 for, with its documented error body) and
// what it replies, with the public source that shows it. The Go selector
// tests, the CLI tests and the Python tests (through cmd/) replay the same
// files against the real clients.
package providerreplica

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Case is one provider behaviour.
type Case struct {
	// Name is the file's name without .json.
	Name string `json:"-"`
	// Behaviour says what the provider does, in a sentence.
	Behaviour string `json:"behaviour"`
	// Sources are the public documents or issue threads that show it.
	Sources []string `json:"sources"`
	// Config is the selector configuration of the case, as JSON settings
	// (provider, model, mode, reasoning, max_tokens, ...).
	Config map[string]any `json:"config"`
	// Endpoint is the path, and query, the replica serves under (the base
	// URL's; "/v1" when empty): "/v1beta/openai" for Gemini's, or Azure's
	// classic "/openai/deployments/NAME?api-version=V", whose requests must
	// carry the query (a 404 otherwise, as Azure answers).
	Endpoint string `json:"endpoint,omitempty"`
	// Client is "" when the behaviour is the provider's, replayed by every
	// driver; "go-openai" when it is the go-openai client's own (a refusal
	// before sending): only drivers that send through go-openai (the Go
	// transport, the CLI, Python's client=None) replay it. See ViaGoOpenAIOnly.
	Client string `json:"client,omitempty"`
	// Refuse lists what the provider answers with an error instead of a reply.
	Refuse []Rule `json:"refuse"`
	// Reply is what the provider answers otherwise (or Replies, in turn).
	Reply   Reply   `json:"reply"`
	Replies []Reply `json:"replies"`
	// Request says what every request must carry (Has, by dotted path) and
	// must not (Absent).
	Request struct {
		Has    map[string]any `json:"has"`
		Absent []string       `json:"absent"`
		// Headers the requests must carry and must not (a 401 otherwise,
		// as the provider answers a key it cannot find).
		Headers struct {
			Has    []string `json:"has"`
			Absent []string `json:"absent"`
		} `json:"headers"`
	} `json:"request"`
	// Expect is the outcome: the calls, or the failure kind of the last
	// attempt (and words its message contains); Adapted and Requests when set.
	Expect Expect `json:"expect"`
}

// Rule is a request the provider refuses: Path present (and equal to Equals
// when set, or not equal to NotEquals when set).
type Rule struct {
	Path      string `json:"path"`
	Equals    any    `json:"equals,omitempty"`
	NotEquals any    `json:"not_equals,omitempty"`
	// Absent refuses a request where Path is absent instead.
	Absent bool `json:"absent,omitempty"`
	// FromRequest applies the rule from the FromRequest-th request the
	// replica receives on (1-based); 0 applies it to every request. A rule
	// about a continued conversation starts at the request that continues it.
	FromRequest int   `json:"from_request,omitempty"`
	Reply       Reply `json:"reply"`
}

// Reply is one HTTP answer: a JSON body, or Raw text with ContentType, and
// any Headers (Retry-After).
type Reply struct {
	Status      int               `json:"status"`
	Headers     map[string]string `json:"headers,omitempty"`
	ContentType string            `json:"content_type,omitempty"`
	Body        json.RawMessage   `json:"body,omitempty"`
	Raw         string            `json:"raw,omitempty"`
}

// Expect is a case's outcome.
type Expect struct {
	Calls           []map[string]any `json:"calls,omitempty"`
	Kind            string           `json:"kind,omitempty"`
	MessageContains []string         `json:"message_contains,omitempty"`
	Adapted         []string         `json:"adapted,omitempty"`
	// Forgotten says the adaptation is tried once and not remembered for
	// the next selection (the server accepted the field; the model failed).
	Forgotten bool `json:"forgotten,omitempty"`
	// Repaired is the last attempt's record of what the reader repaired.
	Repaired []string `json:"repaired,omitempty"`
	Dialect  string   `json:"dialect,omitempty"`
	// Requests is how many requests reach the replica, when set (0: the
	// client refused the request before sending it).
	Requests *int `json:"requests,omitempty"`
}

// ViaGoOpenAIOnly reports a case that only drivers sending through the
// go-openai client replay (Client "go-openai").
func (c Case) ViaGoOpenAIOnly() bool { return c.Client == "go-openai" }

// Reaches reports whether the case expects a request to reach the replica.
func (c Case) Reaches() bool { return c.Expect.Requests == nil || *c.Expect.Requests > 0 }

// Load reads every case in dir.
func Load(dir string) ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Case
	for _, f := range files {
		c, err := LoadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("providerreplica: no cases in %s", dir)
	}
	return out, nil
}

// LoadFile reads one case.
func LoadFile(path string) (Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Case{}, err
	}
	var c Case
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Case{}, fmt.Errorf("providerreplica: %s: %w", path, err)
	}
	c.Name = strings.TrimSuffix(filepath.Base(path), ".json")
	if len(c.Sources) == 0 {
		return Case{}, fmt.Errorf("providerreplica: %s names no source", path)
	}
	if c.Reply.Status == 0 && len(c.Replies) == 0 {
		return Case{}, fmt.Errorf("providerreplica: %s has no reply", path)
	}
	if c.Client != "" && c.Client != "go-openai" {
		return Case{}, fmt.Errorf("providerreplica: %s: client %q is not \"\" or \"go-openai\"", path, c.Client)
	}
	return c, nil
}

// Server is a running replica on 127.0.0.1.
type Server struct {
	// URL is the base URL to configure (ending in /v1).
	URL string
	c   Case
	ln  net.Listener
	srv *http.Server

	mu     sync.Mutex
	bodies []map[string]any
	served int
}

// Serve starts the case's replica.
func (c Case) Serve() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	endpoint := c.Endpoint
	if endpoint == "" {
		endpoint = "/v1"
	}
	s := &Server{URL: "http://" + ln.Addr().String() + endpoint, c: c, ln: ln}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle)}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { _ = s.srv.Close() }

// Requests returns the request bodies received, decoded.
func (s *Server) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.bodies...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	endpoint := s.c.Endpoint
	if endpoint == "" {
		endpoint = "/v1"
	}
	path, query, _ := strings.Cut(endpoint, "?")
	if r.URL.Path != strings.TrimRight(path, "/")+"/chat/completions" {
		write(w, Reply{Status: 404, Body: json.RawMessage(`{"error":{"code":"404","message":"Resource not found"}}`)})
		return
	}
	want, _ := url.ParseQuery(query)
	for k := range want {
		if r.URL.Query().Get(k) != want.Get(k) {
			write(w, Reply{Status: 404, Body: json.RawMessage(`{"error":{"code":"404","message":"Resource not found"}}`)})
			return
		}
	}
	for _, h := range s.c.Request.Headers.Has {
		if r.Header.Get(h) == "" {
			write(w, Reply{Status: 401, Body: json.RawMessage(fmt.Sprintf(`{"error":{"code":"401","message":"the request has no %s header"}}`, h))})
			return
		}
	}
	for _, h := range s.c.Request.Headers.Absent {
		if r.Header.Get(h) != "" {
			write(w, Reply{Status: 401, Body: json.RawMessage(fmt.Sprintf(`{"error":{"code":"401","message":"the request carries a %s header it must not"}}`, h))})
			return
		}
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		write(w, Reply{Status: 400, Body: json.RawMessage(`{"error":{"message":"the body is not JSON"}}`)})
		return
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	n := len(s.bodies)
	s.mu.Unlock()
	for _, rule := range s.c.Refuse {
		if n >= rule.FromRequest && rule.matches(body) {
			write(w, rule.Reply)
			return
		}
	}
	s.mu.Lock()
	reply := s.c.Reply
	if len(s.c.Replies) > 0 {
		reply = s.c.Replies[min(s.served, len(s.c.Replies)-1)]
	}
	s.served++
	s.mu.Unlock()
	write(w, reply)
}

func write(w http.ResponseWriter, r Reply) {
	ct := r.ContentType
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	for k, v := range r.Headers {
		w.Header().Set(k, v)
	}
	status := r.Status
	if status == 0 {
		status = 200
	}
	w.WriteHeader(status)
	if r.Raw != "" {
		_, _ = io.WriteString(w, r.Raw)
		return
	}
	_, _ = w.Write(r.Body)
}

// Lookup returns the value at a dotted path of a decoded body; a part that
// is a number indexes an array ("messages.2.reasoning_content").
func Lookup(body map[string]any, path string) (any, bool) {
	var cur any = body
	for _, part := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			var ok bool
			if cur, ok = v[part]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Same compares a decoded value with an expected one as JSON.
func Same(got, want any) bool {
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	var gv, wv any
	_ = json.Unmarshal(g, &gv)
	_ = json.Unmarshal(w, &wv)
	g, _ = json.Marshal(gv)
	w, _ = json.Marshal(wv)
	return bytes.Equal(g, w)
}

func (r Rule) matches(body map[string]any) bool {
	v, ok := Lookup(body, r.Path)
	switch {
	case r.Absent:
		return !ok
	case !ok:
		return false
	case r.Equals != nil:
		return Same(v, r.Equals)
	case r.NotEquals != nil:
		return !Same(v, r.NotEquals)
	}
	return true
}

// Check reports what a received request lacks or carries against the case.
func (c Case) Check(body map[string]any) []string {
	var out []string
	keys := make([]string, 0, len(c.Request.Has))
	for k := range c.Request.Has {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := Lookup(body, k)
		if !ok || !Same(v, c.Request.Has[k]) {
			out = append(out, fmt.Sprintf("%s: want %v, got %v (present %v)", k, c.Request.Has[k], v, ok))
		}
	}
	for _, k := range c.Request.Absent {
		if v, ok := Lookup(body, k); ok {
			out = append(out, fmt.Sprintf("%s must be absent, got %v", k, v))
		}
	}
	return out
}
