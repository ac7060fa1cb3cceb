package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateRankGolden = flag.Bool("update-rank", false, "rewrite testdata/rank_*.golden")

// runCmd is execCLI with no environment and no input, as three values.
func runCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	r := execCLI(t, nil, "", args...)
	return r.stdout, r.stderr, r.code
}

const rankCatalog = `{"name":"weather__get_forecast","description":"Get the weather forecast for a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}
{"name":"mail__send_email","description":"Send an email message.","parameters":{"type":"object","properties":{"to":{"type":"string"}}}}
{"name":"bad tool","description":"A draft-04 schema.","parameters":{"type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true}}}}
`

func TestRankPrerequisitesFlag(t *testing.T) {
	cat := writeTemp(t, "geo.jsonl", `{"name":"geo__find_parking","description":"Locate parking near a location.","parameters":{"type":"object","properties":{"latitude":{"type":"number"},"longitude":{"type":"number"}},"required":["latitude","longitude"]}}
{"name":"geo__geocode","description":"Convert an address to latitude and longitude.","parameters":{"type":"object","properties":{"address":{"type":"string"}},"required":["address"]}}
`)
	out, errs, code := runCmd(t, "rank", "--catalog", cat, "--k", "2", "where can I park")
	if code != 0 || !strings.Contains(out, "2. geo__geocode") || !strings.Contains(out, "yields latitude, longitude that geo__find_parking requires") {
		t.Errorf("prerequisite missing: code %d out %q err %q", code, out, errs)
	}
	out, _, code = runCmd(t, "rank", "--catalog", cat, "--k", "2", "--no-prerequisites", "where can I park")
	if code != 0 || strings.Contains(out, "geo__geocode") {
		t.Errorf("--no-prerequisites: code %d out %q", code, out)
	}
}

func TestRankCommand(t *testing.T) {
	cat := writeTemp(t, "tools.jsonl", rankCatalog)
	// Flags after the query work too; the refused tool is a warning.
	out, errs, code := runCmd(t, "rank", "--catalog", cat, "weather forecast please", "--k", "2")
	if code != 0 || !strings.Contains(out, "weather__get_forecast") {
		t.Fatalf("code %d out %q err %q", code, out, errs)
	}
	if !strings.Contains(errs, `warning: skipped tool #2 "bad tool"`) {
		t.Errorf("no warning for the refused tool: %q", errs)
	}
	golden := filepath.Join("testdata", "rank_text.golden")
	if *updateRankGolden {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, []byte(out), 0o644)
	}
	if want, err := os.ReadFile(golden); err != nil || string(want) != out {
		t.Errorf("output differs from %s (run with -update-rank):\n%s", golden, out)
	}
	// Strict loading refuses the catalog.
	if _, _, code := runCmd(t, "rank", "--catalog", cat, "--skip-invalid=false", "weather"); code != exitUsage {
		t.Errorf("strict: code %d", code)
	}
	qs := writeTemp(t, "q.jsonl", `{"id":"a","query":"send an email","gold":["mail__send_email"]}
{"id":"b","query":"weather in Rome","gold":["weather__get_forecast"]}
`)
	out, _, code = runCmd(t, "rank", "--catalog", cat, "--queries", qs, "--k", "10", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("queries: code %d out %q", code, out)
	}
	var line struct {
		ID    string   `json:"id"`
		Tools []string `json:"tools"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil || line.ID != "a" || line.Tools[0] != "mail__send_email" {
		t.Errorf("line %q: %v", lines[0], err)
	}
	out, _, code = runCmd(t, "eval", "--catalog", cat, "--queries", qs, "--json")
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res["r@10"].(float64) != 1 {
		t.Errorf("eval: code %d out %q", code, out)
	}
	out, _, code = runCmd(t, "eval", "--catalog", cat, "--queries", qs)
	if code != 0 || !strings.Contains(out, "NDCG@10") || !strings.Contains(out, "median") {
		t.Errorf("eval text: %q", out)
	}
	out, _, code = runCmd(t, "tokens", "--catalog", cat, "--k", "1")
	if code != 0 || !strings.Contains(out, "meta-tools (find_tool + call_tool)") || !strings.Contains(out, "saves") {
		t.Errorf("tokens: code %d out %q", code, out)
	}
	if _, errs, code := runCmd(t, "rank", "--catalog", cat, "--scorer", "embedding", "x"); code != exitUsage || !strings.Contains(errs, "TOOLSELECT_EMBEDDING_BASE_URL") {
		t.Errorf("embedding without endpoint: %d %q", code, errs)
	}
}
