package modeltest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

func post(t *testing.T, url, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/chat/completions", bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer sk-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	out["status"] = float64(resp.StatusCode)
	return out
}

func message(t *testing.T, out map[string]any) map[string]any {
	t.Helper()
	choices, _ := out["choices"].([]any)
	if len(choices) != 1 {
		t.Fatalf("want one choice, got %v", out)
	}
	return choices[0].(map[string]any)["message"].(map[string]any)
}

// Replies are taken in order and the last repeats; calls go as content
// (the JSON contract) unless the request offered tools natively; each
// request is recorded with its model, messages, tool names and header.
func TestRepliesInOrderAndRecorded(t *testing.T) {
	s := NewServer(
		Reply{Calls: []Call{{Tool: "a", Args: json.RawMessage(`{"x":1}`)}}},
		Reply{Calls: []Call{{Tool: "b"}}},
	)
	defer s.Close()

	m := message(t, post(t, s.URL, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`))
	if got := m["content"]; got != `{"calls":[{"tool":"a","args":{"x":1}}]}` {
		t.Errorf("first reply content = %v", got)
	}
	native := `{"model":"m2","messages":[{"role":"system","content":"s"}],"tools":[{"type":"function","function":{"name":"b"}}]}`
	for range 2 {
		m = message(t, post(t, s.URL, native))
		tcs, _ := m["tool_calls"].([]any)
		if len(tcs) != 1 || tcs[0].(map[string]any)["function"].(map[string]any)["name"] != "b" {
			t.Errorf("native reply = %v", m)
		}
		if fn := tcs[0].(map[string]any)["function"].(map[string]any); fn["arguments"] != "{}" {
			t.Errorf("nil Args are sent as {}, got %v", fn["arguments"])
		}
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("recorded %d requests, want 3", len(reqs))
	}
	if reqs[0].Model != "m1" || reqs[0].Messages[0] != (Message{Role: "user", Content: "hi"}) || len(reqs[0].Tools) != 0 {
		t.Errorf("first request recorded as %+v", reqs[0])
	}
	if reqs[1].Model != "m2" || len(reqs[1].Tools) != 1 || reqs[1].Tools[0] != "b" {
		t.Errorf("second request recorded as %+v", reqs[1])
	}
	if reqs[2].Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("header not recorded: %v", reqs[2].Header)
	}
}

// A Status reply is an OpenAI error body; a path other than chat
// completions is a 404 that says what is served.
func TestStatusAndUnknownPath(t *testing.T) {
	s := NewServer(Reply{Status: 429, Content: "slow down"})
	defer s.Close()
	out := post(t, s.URL, `{"model":"m"}`)
	if out["status"] != float64(429) || out["error"].(map[string]any)["message"] != "slow down" {
		t.Errorf("status reply = %v", out)
	}
	resp, err := http.Get(s.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /models = %d, want 404", resp.StatusCode)
	}
	s.Close() // twice is harmless
}
