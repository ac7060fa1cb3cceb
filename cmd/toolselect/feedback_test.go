package main

import (
	"strings"
	"testing"
)

func TestRankAndEvalFeedback(t *testing.T) {
	cat := writeFile(t, "cat.jsonl", `{"name":"weather__get_forecast","description":"Get the weather forecast for a city.","parameters":{"type":"object"}}
{"name":"mail__send_email","description":"Send an email message.","parameters":{"type":"object"}}
{"name":"travel__plan_trip","description":"Plan a trip itinerary.","parameters":{"type":"object"}}
`)
	fb := writeFile(t, "fb.jsonl", `{"query":"will it snow during my ski holiday in Chamonix","tools":["weather__get_forecast","no_such_tool"]}
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
	qs := writeFile(t, "q.jsonl", `{"id":"1","query":"`+para+`","gold":["weather__get_forecast"]}
`)
	out, _, code = runCmd(t, "eval", "--catalog", cat, "--queries", qs, "--feedback", fb, "--json")
	if code != 0 || !strings.Contains(out, `"r@10":1`) || !strings.Contains(out, `"scorer":"bm25+feedback"`) {
		t.Errorf("eval with feedback: exit %d\n%s", code, out)
	}
	// A malformed line is a usage error naming its line.
	bad := writeFile(t, "bad.jsonl", `{"query":"a","tools":["x"]}

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
