package capi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestFakeModel(t *testing.T) {
	r := FakeModelNew([]byte(`[{"calls":[{"tool":"add","args":{"a":1,"b":2},"reasoning":"sum"}]},{"content":"no JSON here"},{"status":503,"content":"overloaded"}]`), true)
	if r.Code != OK {
		t.Fatalf("FakeModelNew: %s", r.Body)
	}
	m := decode(t, r)
	h, url := uint64(m["handle"].(float64)), m["url"].(string)
	defer FakeModelClose(h)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("url = %q", url)
	}
	post := func(model string) (int, string) {
		resp, err := http.Post(url+"/chat/completions", "application/json",
			strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("m1"); code != 200 || !strings.Contains(body, `add`) || !strings.Contains(body, `sum`) {
		t.Errorf("first reply: %d %s", code, body)
	}
	if code, body := post("m2"); code != 200 || !strings.Contains(body, "no JSON here") {
		t.Errorf("second reply: %d %s", code, body)
	}
	for range 2 { // the last reply again when the script runs out
		if code, body := post("m3"); code != 503 || !strings.Contains(body, "overloaded") {
			t.Errorf("third reply: %d %s", code, body)
		}
	}
	var got struct {
		Requests []struct {
			Model    string          `json:"model"`
			Messages []any           `json:"messages"`
			Body     json.RawMessage `json:"body"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(FakeModelRequests(h).Body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Requests) != 4 || got.Requests[0].Model != "m1" || !strings.Contains(string(got.Requests[1].Body), `"m2"`) || len(got.Requests[0].Messages) != 1 {
		t.Errorf("requests = %+v", got.Requests)
	}
	if r := FakeModelClose(h); r.Code != OK {
		t.Fatalf("close: %s", r.Body)
	}
	wantErr(t, FakeModelClose(h), ErrHandle, "fake model handle")
	wantErr(t, FakeModelRequests(h), ErrHandle, "closed")
	if _, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(`{}`)); err == nil {
		t.Error("the closed fake model still answers")
	}
}

func TestFakeModelBadScripts(t *testing.T) {
	for script, want := range map[string]string{
		`{"calls":[]}`:                            "replies_json",
		`[{"calls":[{"tool":""}]}]`:               "tool is empty",
		`[{"status":42}]`:                         "HTTP status",
		`[{"status":500,"calls":[{"tool":"a"}]}]`: "answers no calls",
		`[{"cals":[]}]`:                           `cals`,
	} {
		wantErr(t, FakeModelNew([]byte(script), true), ErrArgument, want)
	}
	// No script: the server answers no calls.
	r := FakeModelNew(nil, false)
	if r.Code != OK {
		t.Fatal(string(r.Body))
	}
	FakeModelClose(uint64(decode(t, r)["handle"].(float64)))
}
