package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRankAndEvalFeedback(t *testing.T) {
	cat := writeTemp(t, "cat.jsonl", `{"name":"weather__get_forecast","description":"Get the weather forecast for a city.","parameters":{"type":"object"}}
{"name":"mail__send_email","description":"Send an email message.","parameters":{"type":"object"}}
{"name":"travel__plan_trip","description":"Plan a trip itinerary.","parameters":{"type":"object"}}
`)
	fb := writeTemp(t, "fb.jsonl", `{"query":"will it snow during my ski holiday in Chamonix","tools":["weather__get_forecast","no_such_tool"]}
`)
	const para = "is snow expected on my ski trip to Chamonix?"
	out, _, code := runCmd(t, "rank", "--catalog", cat, "--k", "2", para)
	if code != 0 || strings.Contains(out, "weather__get_forecast") {
		t.Fatalf("without feedback: exit %d\n%s", code, out)
	}
	out, errs, code := runCmd(t, "rank", "--catalog", cat, "--k", "2", "--feedback", fb, para)
	if code != 0 || !strings.Contains(out, "weather__get_forecast") || !strings.Contains(out, "bm25+feedback") {
		t.Fatalf("with feedback: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "1 tool names not in the catalog were ignored") {
		t.Errorf("the unknown name was not reported: %q", errs)
	}
	qs := writeTemp(t, "q.jsonl", `{"id":"1","query":"`+para+`","gold":["weather__get_forecast"]}
`)
	out, _, code = runCmd(t, "eval", "--catalog", cat, "--queries", qs, "--feedback", fb, "--json")
	if code != 0 || !strings.Contains(out, `"r@10":1`) || !strings.Contains(out, `"scorer":"bm25+feedback"`) {
		t.Errorf("eval with feedback: exit %d\n%s", code, out)
	}
	// A malformed line is a usage error naming its line.
	bad := writeTemp(t, "bad.jsonl", `{"query":"a","tools":["x"]}

{"query":"b","tools":"x"}
`)
	for _, cmd := range []string{"rank", "eval"} {
		args := []string{cmd, "--catalog", cat, "--feedback", bad}
		if cmd == "eval" {
			args = append(args, "--queries", qs)
		} else {
			args = append(args, para)
		}
		_, errs, code := runCmd(t, args...)
		if code != exitUsage || !strings.Contains(errs, "line 3:") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s with a malformed line: exit %d, %q", cmd, code, errs)
		}
	}
	_, errs, code = runCmd(t, "rank", "--catalog", cat, "--feedback", "http://x/y", para)
	if code != exitUsage || !strings.Contains(errs, "neither a file path nor a redis") {
		t.Errorf("bad store: exit %d, %q", code, errs)
	}
}

// select records a selection in the store LLM_COMMON_TOOL_SELECTION_FEEDBACK
// names (through the real go-openai client and an OpenAI-format server).
func TestSelectRecordsFeedback(t *testing.T) {
	srv := newChatServer(t, func(string) chatReply {
		return chatReply{content: `{"calls":[{"tool":"get_metrics","args":{"service":"checkout-api","metric":"error_rate"}}]}`}
	})
	store := filepath.Join(t.TempDir(), "fb.jsonl")
	r, out := runSelectCLI(t, srv.env("LLM_COMMON_TOOL_SELECTION_FEEDBACK", store), "--catalog", exampleCatalog(t),
		"--task", "Investigate the checkout error alert")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Len(t, out.Calls, 1)
	b, err := os.ReadFile(store)
	require.NoError(t, err)
	assert.Equal(t, `{"query":"Investigate the checkout error alert","tools":["get_metrics"]}`+"\n", string(b))

	// A malformed store is a configuration error naming the variable and the line.
	bad := writeTemp(t, "bad.jsonl", "{\"query\":\"\",\"tools\":[\"x\"]}\n")
	r = execCLI(t, srv.env("LLM_COMMON_TOOL_SELECTION_FEEDBACK", bad), "", "select", "--catalog", exampleCatalog(t), "--task", "x")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "LLM_COMMON_TOOL_SELECTION_FEEDBACK")
	assert.Contains(t, r.stderr, "line 1:")
}
