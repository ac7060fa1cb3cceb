package capi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolselect/toolselect/selector"
)

func handleOf(t *testing.T, r Result) uint64 {
	t.Helper()
	if r.Code != OK {
		t.Fatalf("want a handle, got %s", r.Body)
	}
	return uint64(decode(t, r)["handle"].(float64))
}

func addRegistry(t *testing.T) uint64 {
	h := newRegistry(t)
	if r := RegistryRegister(h, []byte(addTool), true); r.Code != OK {
		t.Fatal(string(r.Body))
	}
	return h
}

const testRequest = `{"task":{"id":"t1","description":"add 1 and 2","sub_tasks":[{"id":"s1","description":"add"}]},"query":"sum"}`

func TestSessionFallbackAndDone(t *testing.T) {
	reg := addRegistry(t)
	sel := handleOf(t, SelectorNew([]byte(`{"model":"m1","fallback_model":"m2"}`), true))
	defer SelectorClose(sel)

	r := SessionBegin(sel, reg, []byte(testRequest), true)
	act := decode(t, r)
	if r.Code != OK || act["action"] != "chat" || act["model"] != "m1" {
		t.Fatalf("begin: %s", r.Body)
	}
	sess := uint64(act["session"].(float64))
	defer SessionClose(sess)
	if p := act["params"].(map[string]any); p["response_format"].(map[string]any)["type"] != "json_object" || p["timeout_s"].(float64) != 30 {
		t.Errorf("params: %v", p)
	}
	wantErr(t, SessionFeed(sess, []byte(`{"nothing":1}`), true), ErrArgument, "reply_json")

	r = SessionFeed(sess, []byte(`{"error":{"kind":"transport","message":"connection refused"}}`), true)
	if act := decode(t, r); act["action"] != "chat" || act["model"] != "m2" {
		t.Fatalf("after a transport error the fallback must be asked: %s", r.Body)
	}
	r = SessionFeed(sess, []byte(`{"content":"{\"calls\":[{\"tool\":\"add\",\"args\":{\"a\":1,\"b\":2}}]}"}`), true)
	done := decode(t, r)
	if done["action"] != "done" || done["error"] != nil || len(done["calls"].([]any)) != 1 || len(done["attempts"].([]any)) != 2 {
		t.Fatalf("done: %s", r.Body)
	}
	// Feeding a finished session returns the same outcome.
	if r2 := SessionFeed(sess, []byte(`{"content":"x"}`), true); string(r2.Body) != string(r.Body) {
		t.Errorf("feed after done changed the outcome: %s", r2.Body)
	}
}

func TestSessionBadRequests(t *testing.T) {
	reg := addRegistry(t)
	sel := handleOf(t, SelectorNew([]byte(`{}`), true))
	defer SelectorClose(sel)
	wantErr(t, SessionBegin(sel, reg, []byte(`{"task":{"description":""}}`), true), ErrArgument, "no description")
	wantErr(t, SessionBegin(sel, reg, []byte(`{"task":{"description":"x"},"bogus":1}`), true), ErrArgument, "bogus")
	wantErr(t, SessionBegin(sel, reg, nil, false), ErrArgument, "NULL")
	wantErr(t, SessionBegin(reg, reg, []byte(testRequest), true), ErrHandle, "not a selector")
	wantErr(t, SessionBegin(sel, sel, []byte(testRequest), true), ErrHandle, "not a registry")
	wantErr(t, SelectorNew([]byte(`{"max_calls":21}`), true), ErrArgument, "LLM_COMMON_TOOL_SELECTION_MAX_CALLS")
	wantErr(t, SelectorNew([]byte(`{"nope":1}`), true), ErrArgument, "nope")
}

// openAIServer answers chat completions with content, after delay.
func openAIServer(t *testing.T, delay time.Duration, content string) *httptest.Server {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		case <-stop:
			return
		}
		body, _ := json.Marshal(map[string]any{
			"id": "c1", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // runs first: release handlers still waiting
	return srv
}

func TestSelectOverHTTP(t *testing.T) {
	srv := openAIServer(t, 0, `{"calls":[{"tool":"add","args":{"a":1,"b":2},"reasoning":"sum"}]}`)
	reg := addRegistry(t)
	sel := handleOf(t, SelectorNew([]byte(fmt.Sprintf(`{"base_url":%q,"api_key":"sk-test"}`, srv.URL+"/v1")), true))
	defer SelectorClose(sel)
	r := SelectorSelect(sel, reg, []byte(testRequest), true, 0)
	m := decode(t, r)
	if r.Code != OK || m["error"] != nil || len(m["calls"].([]any)) != 1 {
		t.Fatalf("select: %s", r.Body)
	}
	if strings.Contains(string(r.Body), "sk-test") {
		t.Error("the API key leaked into the result")
	}
}

func TestSelectCancel(t *testing.T) {
	srv := openAIServer(t, 10*time.Second, `{"calls":[]}`)
	reg := addRegistry(t)
	sel := handleOf(t, SelectorNew([]byte(fmt.Sprintf(`{"base_url":%q}`, srv.URL+"/v1")), true))
	defer SelectorClose(sel)
	tok := handleOf(t, CancelNew())
	defer CancelClose(tok)
	go func() {
		time.Sleep(100 * time.Millisecond)
		Cancel(tok)
	}()
	start := time.Now()
	r := SelectorSelect(sel, reg, []byte(testRequest), true, tok)
	wantErr(t, r, ErrCanceled, "cancelled")
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancel took %v", d)
	}
	wantErr(t, SelectorSelect(sel, reg, []byte(testRequest), true, reg), ErrHandle, "not a cancel token")
}

// top_k offers only the best-ranked tools, in catalog order; 0 offers all;
// a bad value names the field.
func TestSessionTopK(t *testing.T) {
	reg := newRegistry(t)
	tools := `[` +
		`{"name":"weather__forecast","description":"Get the weather forecast for a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}},` +
		`{"name":"mail__send","description":"Send an email message.","parameters":{"type":"object","properties":{"to":{"type":"string"}}}},` +
		`{"name":"maps__find_parking","description":"Find parking near a location.","parameters":{"type":"object","properties":{"latitude":{"type":"number"},"longitude":{"type":"number"}},"required":["latitude","longitude"]}},` +
		`{"name":"maps__geocode","description":"Convert an address to latitude and longitude.","parameters":{"type":"object","properties":{"address":{"type":"string"}},"required":["address"]}},` +
		`{"name":"files__read","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}]`
	if r := RegistryRegister(reg, []byte(tools), true); r.Code != OK {
		t.Fatal(string(r.Body))
	}
	sel := handleOf(t, SelectorNew([]byte(`{"model":"m1"}`), true))
	defer SelectorClose(sel)
	offered := func(req string) []any {
		t.Helper()
		r := SessionBegin(sel, reg, []byte(req), true)
		act := decode(t, r)
		if r.Code != OK {
			t.Fatalf("begin %s: %s", req, r.Body)
		}
		sess := uint64(act["session"].(float64))
		defer SessionClose(sess)
		// Finish the session to read what it offered.
		done := decode(t, SessionFeed(sess, []byte(`{"error":{"kind":"transport","message":"down"}}`), true))
		offered, _ := done["offered"].([]any)
		return offered
	}
	task := `"task":{"description":"where can I park the car near the Louvre"}`
	if got := offered(`{` + task + `,"top_k":2}`); fmt.Sprint(got) != "[maps__find_parking maps__geocode]" {
		t.Errorf("top_k 2 offered %v, want the parking tool and its prerequisite, in catalog order", got)
	}
	if got := offered(`{` + task + `,"top_k":0}`); len(got) != 5 {
		t.Errorf("top_k 0 offered %v, want every tool", got)
	}
	if got := offered(`{` + task + `}`); len(got) != 5 {
		t.Errorf("no top_k offered %v, want every tool", got)
	}
	wantErr(t, SessionBegin(sel, reg, []byte(`{`+task+`,"top_k":-1}`), true), ErrArgument, "top_k must be from 0")
	wantErr(t, SessionBegin(sel, reg, []byte(`{`+task+`,"top_k":"3"}`), true), ErrArgument, "request_json")
}

// TestSessionRules: a request's "rules" decide what is offered as they
// decide what authorize lets run (registry.Eligibility.Check): a deny rule
// keeps even a safe tool out, an allow or ask rule lets an unsafe tool be
// offered without allow_unsafe, deny read first; a bad rule is an argument
// error naming it.
func TestSessionRules(t *testing.T) {
	reg := newRegistry(t)
	tools := `[` +
		`{"name":"fs__read","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}},` +
		`{"name":"fs__delete","description":"Delete a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}},"safe":false},` +
		`{"name":"fs__move","description":"Move a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}},"safe":false},` +
		`{"name":"mail__send","description":"Send an email message.","parameters":{"type":"object","properties":{"to":{"type":"string"}}}}]`
	if r := RegistryRegister(reg, []byte(tools), true); r.Code != OK {
		t.Fatal(string(r.Body))
	}
	sel := handleOf(t, SelectorNew([]byte(`{"model":"m1"}`), true))
	defer SelectorClose(sel)
	task := `"task":{"description":"tidy the files"}`
	for rules, want := range map[string]string{
		``:                                  "[fs__read mail__send]",
		`,"rules":{}`:                       "[fs__read mail__send]",
		`,"rules":{"deny":["MAIL__*"]}`:     "[fs__read]",
		`,"rules":{"allow":["fs__delete"]}`: "[fs__read fs__delete mail__send]",
		`,"rules":{"ask":["fs__*"]}`:        "[fs__read fs__delete fs__move mail__send]",
		`,"rules":{"allow":["fs__*"],"deny":["*"]}`: "[]",
	} {
		r := SessionBegin(sel, reg, []byte(`{`+task+rules+`}`), true)
		act := decode(t, r)
		if r.Code != OK {
			t.Fatalf("begin %s: %s", rules, r.Body)
		}
		var got []any
		if act["action"] == "chat" {
			sess := uint64(act["session"].(float64))
			act = decode(t, SessionFeed(sess, []byte(`{"error":{"kind":"transport","message":"down"}}`), true))
			SessionClose(sess)
		} else {
			SessionClose(uint64(act["session"].(float64)))
		}
		got, _ = act["offered"].([]any)
		if fmt.Sprint(got) != want {
			t.Errorf("rules %s offered %v, want %s", rules, got, want)
		}
	}
	wantErr(t, SessionBegin(sel, reg, []byte(`{`+task+`,"rules":{"alow":["x"]}}`), true), ErrArgument, `"rules.alow"`)
	wantErr(t, SessionBegin(sel, reg, []byte(`{`+task+`,"rules":{"deny":["[x"]}}`), true), ErrArgument, `rules.deny[0] "[x": syntax error in pattern`)
	wantErr(t, SelectorSelect(sel, reg, []byte(`{`+task+`,"rules":{"deny":"x"}}`), true, 0), ErrArgument, "request_json")
}

// TestConfigSchemaNamesWhatSelectorNewAccepts: every field the schema
// publishes is a key selector_new takes, at its published default.
func TestConfigSchemaNamesWhatSelectorNewAccepts(t *testing.T) {
	res := ConfigSchema()
	var s struct {
		Fields []struct {
			Name    string
			Default any
		}
	}
	if res.Code != OK || json.Unmarshal(res.Body, &s) != nil || len(s.Fields) == 0 {
		t.Fatalf("%d %s", res.Code, res.Body)
	}
	cfg := map[string]any{}
	for _, f := range s.Fields {
		if f.Default != nil {
			cfg[f.Name] = f.Default
		}
	}
	b, _ := json.Marshal(cfg)
	r := SelectorNew(b, true)
	if r.Code != OK {
		t.Fatalf("selector_new refused the schema's defaults %s: %s", b, r.Body)
	}
	var h struct{ Handle uint64 }
	_ = json.Unmarshal(r.Body, &h)
	SelectorClose(h.Handle)
}

// Selectors naming the same feedback store share one learner: what one
// records the others rank with at once, the store is read once, and it
// closes with the last of them.
func TestSelectorsShareTheirFeedbackStore(t *testing.T) {
	store := filepath.Join(t.TempDir(), "fb.jsonl")
	if err := os.WriteFile(store, []byte(`{"query":"will it snow on my ski trip","tools":["get_weather"]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := []byte(`{"model":"m","feedback":` + strconv.Quote(store) + `}`)
	a := handleOf(t, SelectorNew(cfg, true))
	b := handleOf(t, SelectorNew(cfg, true))
	la, _ := table.get(a, KindSelector)
	lb, _ := table.get(b, KindSelector)
	if learnerOf(la.(*selector.ToolSelector)) != learnerOf(lb.(*selector.ToolSelector)) {
		t.Fatal("two selectors on one store have two learners")
	}
	r := SelectorAddFeedback(a, []byte(`{"query":"send the report by email","tools":["send_email"]}`), true)
	if m := decode(t, r); r.Code != OK || m["pairs"].(float64) != 2 {
		t.Fatalf("add feedback on a: %s", r.Body)
	}
	if st := learnerOf(lb.(*selector.ToolSelector)).Feedback().Stats(); st.Pairs != 2 {
		t.Errorf("b's feedback has %d pairs, want 2 (a's record included)", st.Pairs)
	}
	// A withdrawal answers how many pairs it matched; one matching nothing is
	// an argument error whose detail names the rule, for bindings to word.
	r = SelectorAddFeedback(a, []byte(`{"query":"send the report by email","tools":["send_email"],"remove":true}`), true)
	if m := decode(t, r); r.Code != OK || m["withdrawn"] != float64(1) {
		t.Fatalf("withdraw on a: %s", r.Body)
	}
	r = SelectorAddFeedback(a, []byte(`{"query":"send the report by email","tools":["send_email"],"remove":true}`), true)
	var failed struct {
		Error Error `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &failed); err != nil || r.Code != ErrArgument {
		t.Fatalf("a second withdrawal: %d %s", r.Code, r.Body)
	}
	if d, _ := failed.Error.Detail.(map[string]any); d["rule"] != "not_recorded" {
		t.Errorf("a withdrawal of nothing recorded has detail %v, want rule not_recorded", failed.Error.Detail)
	}
	if r := SelectorAddFeedback(a, []byte(`{"query":"send the report by email","tools":["send_email"]}`), true); r.Code != OK {
		t.Fatalf("recording again: %s", r.Body)
	}
	SelectorClose(a)
	if r := SelectorAddFeedback(b, []byte(`{"query":"read the file","tools":["read_file"]}`), true); r.Code != OK {
		t.Fatalf("b after a closed: %s", r.Body)
	}
	SelectorClose(b)
	shared.Lock()
	n := len(shared.m)
	shared.Unlock()
	if n != 0 {
		t.Errorf("%d shared learners left after both selectors closed", n)
	}
	// A selector opened afterwards reads the store anew, with all three records.
	c := handleOf(t, SelectorNew(cfg, true))
	defer SelectorClose(c)
	lc, _ := table.get(c, KindSelector)
	if st := learnerOf(lc.(*selector.ToolSelector)).Feedback().Stats(); st.Pairs != 3 {
		t.Errorf("a new selector's feedback has %d pairs, want 3", st.Pairs)
	}
}

// "own_client" in config_json: the caller's client sends the sessions'
// requests; with no base_url the endpoint is unknown, so the dialect follows
// the model name (a known family's switches, then generic), not api.openai.com's.
func TestSelectorOwnClient(t *testing.T) {
	reg := addRegistry(t)
	for _, tc := range []struct{ cfg, dialect string }{
		{`{"model":"acme-chat-7b","max_tokens":512,"own_client":true}`, ""},
		{`{"model":"deepseek-v4-flash","max_tokens":512,"own_client":true}`, "deepseek"},
		{`{"model":"o3-mini","own_client":true}`, "openai-reasoning"},
		{`{"model":"deepseek-v4-flash","base_url":"https://api.deepseek.com","own_client":true}`, "deepseek"},
		{`{"model":"gpt-4o-mini","max_tokens":512}`, ""},
	} {
		sel := handleOf(t, SelectorNew([]byte(tc.cfg), true))
		r := SessionBegin(sel, reg, []byte(testRequest), true)
		act := decode(t, r)
		if r.Code != OK {
			t.Fatalf("%s: %s", tc.cfg, r.Body)
		}
		if got, _ := act["dialect"].(string); got != tc.dialect {
			t.Errorf("%s: dialect %q, want %q", tc.cfg, got, tc.dialect)
		}
		p := act["params"].(map[string]any)
		if strings.Contains(tc.cfg, `"max_tokens":512`) {
			_, mt := p["max_tokens"]
			_, mct := p["max_completion_tokens"]
			// own client, unknown endpoint: generic's max_tokens; the built-in
			// client's empty base URL is OpenAI's: max_completion_tokens.
			if own := strings.Contains(tc.cfg, "own_client"); mt != own || mct == own {
				t.Errorf("%s: token field in %v", tc.cfg, p)
			}
		}
		SessionClose(uint64(act["session"].(float64)))
		SelectorClose(sel)
	}
	wantErr(t, SelectorNew([]byte(`{"own_client":"yes"}`), true), ErrArgument, "own_client")
	wantErr(t, SelectorNew([]byte(`{"own_client":null}`), true), ErrArgument, "own_client")
}

func TestConfigUnknownEnv(t *testing.T) {
	r := ConfigUnknownEnv([]byte(`{"LLM_COMMON_TOOL_SELECTION_MAX_CALS":"3","LLM_COMMON_TOOL_SELECTION_MODEL":"m","HOME":"/root"}`), true)
	if r.Code != OK || string(r.Body) != `{"warnings":["LLM_COMMON_TOOL_SELECTION_MAX_CALS names no setting and is ignored (did you mean LLM_COMMON_TOOL_SELECTION_MAX_CALLS?)"]}` {
		t.Fatalf("%d %s", r.Code, r.Body)
	}
	for _, none := range []string{`{}`, `null`} {
		if r := ConfigUnknownEnv([]byte(none), true); string(r.Body) != `{"warnings":[]}` {
			t.Errorf("%s: %s", none, r.Body)
		}
	}
	wantErr(t, ConfigUnknownEnv([]byte(`{"A":1}`), true), ErrArgument, "env_json")
	wantErr(t, ConfigUnknownEnv(nil, false), ErrArgument, "env_json is NULL")
}
