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
	require.Equal(t, 0, code, "without feedback: %s", out)
	require.NotContains(t, out, "weather__get_forecast", "without feedback")
	out, errs, code := runCmd(t, "rank", "--catalog", cat, "--k", "2", "--feedback", fb, para)
	require.Equal(t, 0, code, "with feedback: %s%s", out, errs)
	require.Contains(t, out, "weather__get_forecast", "with feedback")
	require.Contains(t, out, "bm25+feedback", "with feedback")
	assert.Contains(t, errs, "1 tool names not in the catalog were ignored", "the unknown name is reported")
	qs := writeTemp(t, "q.jsonl", `{"id":"1","query":"`+para+`","gold":["weather__get_forecast"]}
`)
	out, _, code = runCmd(t, "eval", "--catalog", cat, "--queries", qs, "--feedback", fb, "--json")
	assert.Equal(t, 0, code, "eval with feedback: %s", out)
	assert.Contains(t, out, `"r@10":1`, "eval with feedback")
	assert.Contains(t, out, `"scorer":"bm25+feedback"`, "eval with feedback")
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
		assert.Equal(t, exitUsage, code, "%s with a malformed line: %q", cmd, errs)
		assert.Contains(t, errs, "line 3:", "%s with a malformed line", cmd)
		assert.Zero(t, strings.Count(strings.TrimSpace(errs), "\n"), "%s with a malformed line: one line of error, got %q", cmd, errs)
	}
	_, errs, code = runCmd(t, "rank", "--catalog", cat, "--feedback", "http://x/y", para)
	assert.Equal(t, exitUsage, code, "bad store: %q", errs)
	assert.Contains(t, errs, "neither a file path nor a redis", "bad store")
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
