package selector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// The fuzz targets of the model-response side: the JSON `calls` contract
// (FuzzParseReply), a driver's feed document and the native tool_calls it
// carries (FuzzParseFeed), and the JSON configuration (FuzzConfigFromJSON).
// Seed corpora live in testdata/fuzz/<Target>/; tests/fuzz.sh runs them all.

// maxErrorLen bounds every parse error: messages go into attempts, logs and
// Python exceptions, so hostile input must not make them grow with its size.
const maxErrorLen = 4096

// encodeNoHTML marshals like json.Marshal without HTML escaping, so embedded
// raw arguments are copied byte for byte.
func encodeNoHTML(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encode %#v: %v", v, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// sameJSON reports whether two JSON documents hold the same value.
func sameJSON(a, b []byte) bool {
	decode := func(b []byte) (any, error) {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		return v, err
	}
	x, errA := decode(a)
	y, errB := decode(b)
	return errA == nil && errB == nil && reflect.DeepEqual(x, y)
}

func sameCalls(a, b []rawCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Tool != b[i].Tool || a[i].Reasoning != b[i].Reasoning || !sameJSON(a[i].Args, b[i].Args) {
			return false
		}
	}
	return true
}

// checkArgs asserts what every accepted call's arguments are: a compact JSON object.
func checkArgs(t *testing.T, where string, args json.RawMessage) {
	t.Helper()
	if !json.Valid(args) || len(args) == 0 || args[0] != '{' {
		t.Fatalf("%s: args %q are not a JSON object", where, args)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, args); err != nil || !bytes.Equal(c.Bytes(), args) {
		t.Fatalf("%s: args %q are not compact", where, args)
	}
}

func checkParseError(t *testing.T, err error) {
	t.Helper()
	var pe *parseError
	if !errors.As(err, &pe) {
		t.Fatalf("error is %T, not a *parseError: %v", err, err)
	}
	if msg := err.Error(); strings.TrimSpace(msg) == "" || len(msg) > maxErrorLen {
		t.Fatalf("parse error message is empty or unbounded (%d bytes): %.200q", len(msg), msg)
	}
}

// FuzzParseReply: the JSON-mode reply parser. Any reply is either a list of
// calls (each with a non-blank tool and a compact JSON object as args) or a
// bounded *parseError. Accepted replies round-trip: re-encoded with args as
// an object, with args as a JSON string, and inside a ```json fence, they
// parse to the same calls.
func FuzzParseReply(f *testing.F) {
	for _, seed := range []string{
		`{"calls":[]}`,
		`{"calls":[{"tool":"get_weather","args":{"city":"Paris"},"reasoning":"weather"}]}`,
		`{"calls":[{"tool":"search","args":"{\"query\":\"x\"}"}]}`,
		`{"calls":[{"tool":"search","args":null},{"tool":"a","args":""}]}`,
		"```json\n{\"calls\":[{\"tool\":\"a\",\"args\":{}}]}\n```",
		"```\n{\"calls\":[]}\n```",
		"```python\n{\"calls\":[]}\n```",
		`{"calls":[{"tool":"a"}]} trailing`,
		`{"calls":{}}`, `{"calls":null}`, `{"tools":[]}`, `[]`, ``, `   `, `not json`,
		`{"calls":[{"tool":5}]}`, `{"calls":[{"tool":" "}]}`, `{"calls":[{"tool":"a","args":[1]}]}`,
		`{"calls":[{"tool":"a","args":"[1]"}]}`, `{"calls":[{"tool":"a","args":"{bad"}]}`,
		`{"calls":[{"tool":"a","reasoning":7}]}`, `{"calls":[1,"x",null]}`,
		`{"calls":[{"tool":"a\u0000b","args":{"k":"\u2028<&>"}}]}`,
		`{"calls":[{"tool":"a","args":{"deep":[[[[[[{"x":1e400}]]]]]]}}]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, content string) {
		calls, _, err := parseReply(content)
		if err != nil {
			checkParseError(t, err)
			return
		}
		for i, c := range calls {
			if strings.TrimSpace(c.Tool) == "" {
				t.Fatalf("call %d has a blank tool", i)
			}
			checkArgs(t, "call", c.Args)
		}
		type objCall struct {
			Tool      string          `json:"tool"`
			Args      json.RawMessage `json:"args"`
			Reasoning string          `json:"reasoning,omitempty"`
		}
		type strCall struct {
			Tool      string `json:"tool"`
			Args      string `json:"args"`
			Reasoning string `json:"reasoning,omitempty"`
		}
		objs := make([]objCall, len(calls))
		strs := make([]strCall, len(calls))
		for i, c := range calls {
			objs[i] = objCall{c.Tool, c.Args, c.Reasoning}
			strs[i] = strCall{c.Tool, string(c.Args), c.Reasoning}
		}
		for _, again := range []string{
			string(encodeNoHTML(t, map[string]any{"calls": objs})),
			string(encodeNoHTML(t, map[string]any{"calls": strs})),
		} {
			back, _, err := parseReply(again)
			if err != nil || !sameCalls(calls, back) {
				t.Fatalf("re-encoded reply %q does not parse back: %v\nfirst %+v\nthen  %+v", again, err, calls, back)
			}
		}
		if !strings.HasPrefix(strings.TrimSpace(content), "```") {
			fenced := "```json\n" + content + "\n```"
			back, _, err := parseReply(fenced)
			if err != nil || !sameCalls(calls, back) {
				t.Fatalf("fenced reply parses differently: %v\nplain  %+v\nfenced %+v", err, calls, back)
			}
		}
	})
}

// fuzzSession starts a session over the shared test catalog (six tools, one
// unsafe, one role-restricted) in the given mode, with a fallback model.
func fuzzSession(t *testing.T, mode Mode) *Session {
	t.Helper()
	cfg := defaultConfig()
	cfg.Model, cfg.FallbackModel, cfg.Mode, cfg.MaxCalls = "m1", "m2", mode, 2
	s, err := newWith(nil, &cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	req := testRequest(t)
	req.Context = nil
	ss, err := s.Begin(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// checkAction asserts the safety invariants of any action a session returns:
// it marshals to JSON; a chat names a configured model; a done result holds at
// most MaxCalls calls, each to an offered tool under its canonical name with
// arguments that pass that tool's schema; a failure holds no call.
func checkAction(t *testing.T, ss *Session, act Action) {
	t.Helper()
	if !json.Valid(act.JSON()) {
		t.Fatalf("action JSON is invalid: %s", act.JSON())
	}
	switch act.Kind {
	case ActionChat:
		if act.Chat == nil || (act.Chat.Model != "m1" && act.Chat.Model != "m2") {
			t.Fatalf("chat action without a configured model: %+v", act.Chat)
		}
		return
	case ActionDone:
	default:
		t.Fatalf("unknown action kind %q", act.Kind)
	}
	res := act.Result
	if res == nil {
		t.Fatal("done without a result")
	}
	if act.Err != nil {
		if !errors.Is(act.Err, ErrFailClosed) || len(res.Calls) != 0 {
			t.Fatalf("failure %v carries %d calls", act.Err, len(res.Calls))
		}
	}
	if len(res.Calls) > ss.cfg.MaxCalls {
		t.Fatalf("%d calls over max_calls %d", len(res.Calls), ss.cfg.MaxCalls)
	}
	offered := map[string]*registry.Entry{}
	for _, e := range ss.cur.entries {
		offered[e.Name()] = e
	}
	for _, c := range res.Calls {
		e, ok := offered[c.Tool]
		if !ok {
			t.Fatalf("returned call to %q, which was not offered (offered %v)", c.Tool, ss.cur.names)
		}
		if err := e.ValidateArgs(c.Args); err != nil {
			t.Fatalf("returned call to %q with invalid args %s: %v", c.Tool, c.Args, err)
		}
	}
	for _, a := range res.Attempts {
		if !a.OK && !a.Kind.known() {
			t.Fatalf("attempt with unknown kind %q", a.Kind)
		}
		if len(a.Message) > 1024+len("…") {
			t.Fatalf("attempt message of %d bytes is not bounded", len(a.Message))
		}
	}
}

// FuzzParseFeed: the feed document a non-Go driver sends back (short form,
// error form or a whole chat completion) and the native tool_calls in it.
// parseFeed either fails with a "feed ..." error, reports a *ChatError
// of a known kind, or yields a response whose tool calls hydrate to compact
// JSON objects or a *parseError. Fed to a session (JSON or native mode), a
// bad document leaves the session unchanged, and whatever the document, the
// selection never returns a call that was not offered or whose arguments do
// not validate.
func FuzzParseFeed(f *testing.F) {
	for _, seed := range []struct {
		doc    string
		native bool
	}{
		{`{"content":"{\"calls\":[{\"tool\":\"get_weather\",\"args\":{\"city\":\"Paris\"}}]}","usage":{"prompt_tokens":3,"completion_tokens":4}}`, false},
		{`{"content":"{\"calls\":[{\"tool\":\"delete_files\",\"args\":{\"path\":\"/\"}}]}"}`, false},
		{`{"content":"{\"calls\":[{\"tool\":\"send_email\",\"args\":{\"to\":\"b\"}},{\"tool\":\"search\",\"args\":{\"query\":\"q\"}},{\"tool\":\"search\",\"args\":{\"query\":\"r\"}}]}"}`, false},
		{`{"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`, true},
		{`{"tool_calls":[{"id":"c1","name":"send_email","arguments":{"to":"bob"}}]}`, true},
		{`{"tool_calls":[{"function":{"name":"search","arguments":"\"{\\\"query\\\":\\\"x\\\"}\""}}]}`, true},
		{`{"tool_calls":[{"function":{"name":"admin_reset","arguments":"{}"}}]}`, true},
		{`{"tool_calls":[{"function":{"name":"search","arguments":"[1]"}}]}`, true},
		{`{"tool_calls":[{"function":{"name":"","arguments":"{}"}}]}`, true},
		{`{"tool_calls":[7]}`, true},
		{`{"choices":[{"message":{"content":null,"tool_calls":[{"function":{"name":"search","arguments":"{\"query\":\"q\"}"}}]}}],"usage":{"prompt_tokens":1}}`, true},
		{`{"choices":[]}`, false},
		{`{"error":{"kind":"timeout","message":"slow","status_code":0}}`, false},
		{`{"error":{"kind":"http_status","message":"","status_code":429}}`, true},
		{`{"error":{"kind":"bogus"}}`, false},
		{`{"nothing":1}`, false}, {`[]`, false}, {`{"content":5}`, false},
		// Provider shapes: content parts, reasoning, errors in a 200, truncation, think blocks.
		{`{"choices":[{"message":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]},{"type":"text","text":"{"calls":[]}"}]}}]}`, false},
		{`{"choices":[{"message":{"content":"","reasoning_content":"thinking..."},"finish_reason":"length"}],"usage":{"completion_tokens":9}}`, false},
		{`{"error":{"message":"No endpoints found","code":404}}`, false},
		{`{"choices":[{"error":{"message":"upstream died","code":502},"finish_reason":"error"}]}`, true},
		{`{"content":"<think>a</think>{"calls":[{"tool":"search","args":{"query":"q"}}]} trailing words"}`, false},
		{`{"content":"why </think> {"calls":[]}","reasoning":"r","finish_reason":"stop"}`, false},
		{`{"content":"` + strings.Repeat("x", 300) + `"}`, false},
	} {
		f.Add([]byte(seed.doc), seed.native)
	}
	f.Fuzz(func(t *testing.T, data []byte, native bool) {
		resp, chatErr, err := parseFeed(data)
		switch {
		case err != nil:
			if !strings.HasPrefix(err.Error(), "feed ") || chatErr != nil {
				t.Fatalf("feed error %q (chat error %v)", err, chatErr)
			}
		case chatErr != nil:
			var ce *ChatError
			if !errors.As(chatErr, &ce) || !ce.Kind.known() || strings.TrimSpace(ce.Message) == "" {
				t.Fatalf("chat error %#v", chatErr)
			}
		default:
			calls, herr := hydrateNative(resp.ToolCalls)
			if herr != nil {
				checkParseError(t, herr)
			} else {
				if len(calls) != len(resp.ToolCalls) {
					t.Fatalf("%d tool calls hydrated to %d", len(resp.ToolCalls), len(calls))
				}
				for i, c := range calls {
					if c.Tool != resp.ToolCalls[i].Name {
						t.Fatalf("tool %q became %q", resp.ToolCalls[i].Name, c.Tool)
					}
					checkArgs(t, "tool_calls", c.Args)
				}
			}
		}

		mode := ModeJSON
		if native {
			mode = ModeNative
		}
		ss := fuzzSession(t, mode)
		before := ss.Next()
		act, ferr := ss.FeedJSON(context.Background(), data)
		if (ferr != nil) != (err != nil) {
			t.Fatalf("FeedJSON error %v, parseFeed error %v", ferr, err)
		}
		if ferr != nil {
			if act.Kind != ActionChat || act.Chat != before.Chat || len(ss.attempts) != 0 {
				t.Fatalf("an unreadable feed changed the session: %+v", act)
			}
			return
		}
		checkAction(t, ss, act)
		if act.Kind == ActionChat {
			// The fallback gets the same document; the session must then be done.
			act, ferr = ss.FeedJSON(context.Background(), data)
			if ferr != nil || act.Kind != ActionDone {
				t.Fatalf("second feed: %v, %q", ferr, act.Kind)
			}
			checkAction(t, ss, act)
		}
		if again, _ := ss.FeedJSON(context.Background(), data); again.Result != act.Result {
			t.Fatal("feeding a finished session changed its result")
		}
	})
}

// FuzzConfigFromJSON: any configuration document is either a Config that
// passes Validate and round-trips through MarshalJSON (and was one well-formed
// JSON document), or an error matching ErrInvalidConfig that never quotes the
// API key.
func FuzzConfigFromJSON(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"model":"m","fallback_model":"f","max_calls":3,"timeout_s":10,"temperature":0.5,"fail_closed":false,"base_url":"http://127.0.0.1:1/v1","api_key":"k","mode":"native","max_response_bytes":2048}`,
		`{"mode":" JSON "}`, `{"max_calls":0}`, `{"max_calls":21}`, `{"temperature":-0.1}`, `{"temperature":1e400}`,
		`{"base_url":"not a url"}`, `{"base_url":"ftp://x"}`, `{"api_key":5}`, `{"unknown":1}`, `{"api_key_set":true}`,
		`{"model":""}`, `{"model":"   "}`, `{"max_response_bytes":1023}`, `{"timeout_s":121}`, `null`, `[]`, `{"fail_closed":null}`,
		`{"model":"a"}{"model":"b"}`,
	} {
		f.Add([]byte(seed))
	}
	const secret = "sk-FUZZ-SECRET-0123456789"
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ConfigFromJSON(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v does not match ErrInvalidConfig", err)
			}
		} else {
			if !json.Valid(data) {
				t.Fatalf("config %q is accepted but is not one JSON document", data)
			}
			if verr := cfg.Validate(); verr != nil {
				t.Fatalf("accepted config fails Validate: %v", verr)
			}
			out, merr := cfg.MarshalJSON()
			if merr != nil {
				t.Fatal(merr)
			}
			back, berr := ConfigFromJSON(out)
			if berr != nil {
				t.Fatalf("MarshalJSON output %s is refused: %v", out, berr)
			}
			cfg.APIKey = "" // MarshalJSON leaves the key out by design
			if !reflect.DeepEqual(cfg, back) {
				t.Fatalf("round trip changed the config:\n%#v\n%#v", cfg, back)
			}
		}
		// With a secret API key planted in the document, no outcome shows it.
		var m map[string]any
		if json.Unmarshal(data, &m) != nil || m == nil {
			return
		}
		m["api_key"] = secret
		planted, _ := json.Marshal(m)
		cfg, err = ConfigFromJSON(planted)
		if err != nil {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("config error shows the API key: %v", err)
			}
			return
		}
		for _, s := range []string{cfg.String(), cfg.GoString()} {
			if strings.Contains(s, secret) {
				t.Fatalf("config text shows the API key: %s", s)
			}
		}
	})
}

// TestConfigFromJSONRefusesTrailingData is the failure FuzzConfigFromJSON
// reported (kept in its corpus): the decoder stopped after the first value,
// so `{"model":"a"}{"model":"b"}` or `{} junk` was accepted as a config.
func TestConfigFromJSONRefusesTrailingData(t *testing.T) {
	for _, doc := range []string{`{"model":"a"}{"model":"b"}`, `{} junk`, `{}}`, `{} []`} {
		if _, err := ConfigFromJSON([]byte(doc)); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "trailing") {
			t.Errorf("%s: got %v, want a trailing-data config error", doc, err)
		}
	}
	if c, err := ConfigFromJSON([]byte(" {\"max_calls\":2}\n")); err != nil || c.MaxCalls != 2 {
		t.Fatalf("surrounding white space: %v", err)
	}
}

// FuzzReadCompletion: any 2xx body is either a response or a *ChatError of a
// known kind with a message, never a panic; a stream and the same events
// read as one completion agree on the content.
func FuzzReadCompletion(f *testing.F) {
	for _, seed := range []string{
		`{"choices":[{"message":{"content":"{\"calls\":[]}"},"finish_reason":"stop"}]}`,
		`{"choices":[{"message":{"content":null,"tool_calls":[{"id":"1","function":{"name":"a","arguments":{"x":1}}}]}}]}`,
		"data: {\"choices\":[{\"delta\":{\"content\":\"{\\\"ca\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"lls\\\":[]}\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"a\",\"arguments\":\"{\\\"x\"}}]}}]}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\":1}\"}}]}}]}\n\n",
		`{"error":{"message":"x","code":"rate_limited"}}`,
		`{"choices":[{"message":{"content":[1,{"type":"text","text":7}]}}]}`,
		`{"choices":[]}`, `{}`, `[]`, ``, `data:`, `{"choices":[{"message":{"content":"x"}}]}` + "\n\ndata: [DONE]",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := readCompletion(body)
		if err != nil {
			var ce *ChatError
			if !errors.As(err, &ce) || !ce.Kind.known() || strings.TrimSpace(ce.Message) == "" {
				t.Fatalf("error %#v", err)
			}
			return
		}
		for _, tc := range resp.ToolCalls {
			_ = tc.Name
		}
		answer, _ := splitThinking(resp.Content)
		_, _, _ = parseReply(answer)
	})
}
