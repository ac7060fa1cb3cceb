package faultserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A scripted server answers the first reply whose words are in the task:
// a search while the tool it needs is not offered, the calls once it is,
// no calls for a task the script does not know; natively a search is a
// search_tools call.
func TestScriptedReplies(t *testing.T) {
	s, err := Start(Options{Script: []Reply{
		{When: "page someone", Unoffered: "page_oncall", Search: "page the on-call engineer"},
		{When: "page someone", Calls: []Call{{Tool: "page_oncall", Args: json.RawMessage(`{"team":"sre"}`)}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ask := func(system, user, tools string) string {
		t.Helper()
		body := `{"model":"m","messages":[{"role":"system","content":` + quote(system) + `},{"role":"user","content":` + quote(user) + `}]` + tools + `}`
		resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out struct {
			Choices []struct {
				Message struct {
					Content   *string           `json:"content"`
					ToolCalls []json.RawMessage `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(b, &out); err != nil || len(out.Choices) != 1 {
			t.Fatalf("reply %s: %v", b, err)
		}
		m := out.Choices[0].Message
		if m.Content != nil {
			return *m.Content
		}
		b, _ = json.Marshal(m.ToolCalls)
		return string(b)
	}
	for _, c := range []struct{ name, system, user, tools, want string }{
		{"not offered: search", `tools: [{"name":"get_metrics"}]`, "Task: page someone now", "", `{"calls":[],"search":"page the on-call engineer"}`},
		{"offered: the call", `tools: [{"name":"page_oncall"}]`, "Task: page someone now", "", `{"calls":[{"tool":"page_oncall","args":{"team":"sre"}}]}`},
		{"unknown task: no calls", `tools: [{"name":"page_oncall"}]`, "Task: something else", "", `{"calls":[]}`},
		{"native search", "", "Task: page someone now", `,"tools":[{"type":"function","function":{"name":"get_metrics"}}]`,
			`[{"function":{"arguments":"{\"query\":\"page the on-call engineer\"}","name":"search_tools"},"id":"call_0","type":"function"}]`},
	} {
		if got := ask(c.system, c.user, c.tools); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
