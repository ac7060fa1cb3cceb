package capi

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const addTask = `{"id":"sum","task":"add 1 and 2","calls":[{"tool":"add","args":{"a":[1],"b":[2]}}]}`

func TestEvalSelectScores(t *testing.T) {
	srv := openAIServer(t, 0, `{"calls":[{"tool":"add","args":{"a":1,"b":2},"reasoning":"sum"}]}`)
	reg := addRegistry(t)
	req := fmt.Sprintf(`{"tasks":[%s,{"id":"none","task":"say hi","calls":[]}],"config":{"base_url":%q,"api_key":"sk-test-key","model":"m"},
		"candidates":[{"name":"a"},{"name":"b","model":"m2","api_key_env":"KEY_B"}],"env":{"KEY_B":"sk-other"},
		"prices":{"m":{"In":1,"Out":1}},"parallel":2}`, addTask, srv.URL+"/v1")
	r := EvalSelect(reg, []byte(req), true, 0)
	if r.Code != OK {
		t.Fatalf("eval: %s", r.Body)
	}
	body := string(r.Body)
	for _, secret := range []string{"sk-test-key", "sk-other"} {
		if strings.Contains(body, secret) {
			t.Errorf("the key %s leaked into the result", secret)
		}
	}
	m := decode(t, r)
	if m["total"].(float64) != 2 || m["interrupted"] != false {
		t.Fatalf("total/interrupted: %s", body)
	}
	cs := m["candidates"].([]any)
	a, b := cs[0].(map[string]any), cs[1].(map[string]any)
	// The server answers the add call to both tasks: one exact, one an
	// unexpected call.
	if a["name"] != "a" || a["model"] != "m" || a["exact"].(float64) != 0.5 || a["tool_accuracy"].(float64) != 0.5 {
		t.Errorf("candidate a: %v", a)
	}
	if a["cost"] == nil || b["cost"] != nil || b["model"] != "m2" {
		t.Errorf("cost by model: a %v, b %v", a["cost"], b["cost"])
	}
}

func TestEvalSelectBadRequests(t *testing.T) {
	reg := addRegistry(t)
	cfg := `"config":{"base_url":"http://127.0.0.1:9/v1"}`
	for _, c := range []struct{ req, want string }{
		{`{"tasks":[{"id":"a","task":"t"}],` + cfg + `}`, `tasks line 1: task "a": "calls" is required`},
		{`{"tasks":[` + addTask + `,{"id":"sum","task":"u","calls":[]}],` + cfg + `}`, `tasks line 2: id "sum" is already the id of line 1`},
		{`{"tasks":[{"id":"a","task":"t","calls":[{"tool":"mul","args":{}}]}],` + cfg + `}`, `calls[0] names "mul", which the catalog does not hold`},
		{`{"tasks":[` + addTask + `],` + cfg + `,"candidates":[{"name":"x","api_key_env":"NOPE"}]}`, "api_key_env: NOPE is not set"},
		{`{"tasks":[` + addTask + `],"config":{}}`, "no endpoint to ask"},
		{`{"tasks":[` + addTask + `],` + cfg + `,"parralel":2}`, "parralel"},
		{`{"tasks":[],` + cfg + `}`, "no task"},
	} {
		wantErr(t, EvalSelect(reg, []byte(c.req), true, 0), ErrArgument, c.want)
	}
	wantErr(t, EvalSelect(reg, nil, false, 0), ErrArgument, "request_json")
	wantErr(t, EvalSelect(reg+1000, []byte(`{}`), true, 0), ErrHandle, "")
}

// A cancel ends the run: what was scored comes back, marked interrupted.
func TestEvalSelectCancelKeepsWhatWasScored(t *testing.T) {
	srv := openAIServer(t, 10*time.Second, `{"calls":[]}`)
	reg := addRegistry(t)
	tok := handleOf(t, CancelNew())
	defer CancelClose(tok)
	go func() {
		time.Sleep(200 * time.Millisecond)
		Cancel(tok)
	}()
	start := time.Now()
	r := EvalSelect(reg, []byte(fmt.Sprintf(`{"tasks":[%s],"config":{"base_url":%q}}`, addTask, srv.URL+"/v1")), true, tok)
	if r.Code != OK {
		t.Fatalf("eval: %s", r.Body)
	}
	m := decode(t, r)
	if m["interrupted"] != true || m["candidates"].([]any)[0].(map[string]any)["tasks"].(float64) != 0 {
		t.Errorf("want an interrupted run with no task scored: %s", r.Body)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancel took %v", d)
	}
}
