package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/internal/testing/faultserver"
	"github.com/toolselect/toolselect/selecteval"
)

// standIn serves examples/eval-model.json: right on 20 of the 24 example
// tasks, with the right tools on 22 (see examples/eval-demo.sh).
func standIn(t *testing.T) *faultserver.Server {
	t.Helper()
	script, err := faultserver.LoadScript(filepath.Join("..", "..", "examples", "eval-model.json"))
	require.NoError(t, err)
	s, err := faultserver.Start(faultserver.Options{Script: script, Stall: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

func exampleTasks() string { return filepath.Join("..", "..", "examples", "eval-tasks.jsonl") }

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

func TestEvalSelectJSONFigures(t *testing.T) {
	s := standIn(t)
	cands := writeFile(t, "c.json", `[{"name": "stand-in", "model": "stand-in"},
		{"name": "down", "base_url": "`+s.BaseURL(faultserver.Status503)+`", "model": "m2"}]`)
	vars := map[string]string{"LLM_COMMON_TOOL_SELECTION_BASE_URL": s.URL, "LLM_COMMON_TOOL_SELECTION_TIMEOUT_S": "5"}
	res := execCLI(t, vars, "", "eval", "--select", "--catalog", exampleCatalog(t), "--tasks", exampleTasks(),
		"--candidates", cands, "--price", "stand-in=1/2", "--parallel", "3", "--json")
	require.Equal(t, 0, res.code, res.stderr)

	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &doc))
	assert.Equal(t, []string{"candidates"}, slices.Sorted(maps.Keys(doc)))
	cs := doc["candidates"].([]any)
	require.Len(t, cs, 2)
	c0 := cs[0].(map[string]any)
	assert.Equal(t, []string{"completion_tokens", "cost", "dropped", "exact", "fail_closed", "latency_ms", "model", "name",
		"prompt_tokens", "results", "tasks", "tool_accuracy"}, slices.Sorted(maps.Keys(c0)))
	assert.Equal(t, []string{"p50", "p95"}, slices.Sorted(maps.Keys(c0["latency_ms"].(map[string]any))))

	var out struct {
		Candidates []selecteval.Score `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	st, down := out.Candidates[0], out.Candidates[1]
	assert.Equal(t, "stand-in", st.Name)
	assert.Equal(t, 24, st.Tasks)
	assert.InDelta(t, 20.0/24, st.Exact, 1e-9)
	assert.InDelta(t, 22.0/24, st.ToolAccuracy, 1e-9)
	assert.Equal(t, 0.0, st.FailClosed)
	assert.Equal(t, 24*100, st.PromptTokens)
	assert.Equal(t, 24*20, st.CompletionTokens)
	require.NotNil(t, st.Cost)
	assert.InDelta(t, (2400*1+480*2)/1e6, *st.Cost, 1e-12)
	wrong := map[string]string{}
	for _, r := range st.Results {
		if r.Verdict != "exact" {
			wrong[r.ID] = r.Verdict + ": " + r.Difference
		}
	}
	assert.Equal(t, map[string]string{
		"cpu":    `wrong_args: get_metrics: parameter "metric" is "memory", gold accepts ["cpu"]`,
		"sev1":   `wrong_args: list_incidents: parameter "severity" is "sev2", gold accepts ["sev1"]`,
		"poem":   `wrong_tools: unexpected call to send_slack_message {"channel":"#general","text":"autumn leaves"}`,
		"triage": "wrong_tools: missing call to search_logs",
	}, wrong)

	assert.Equal(t, "m2", down.Model)
	assert.Equal(t, 1.0, down.FailClosed)
	assert.Equal(t, 0.0, down.ToolAccuracy)
	assert.Nil(t, down.Cost)
	assert.Equal(t, "http_status", down.Results[0].FailKind)
	assert.Equal(t, "fail_closed", down.Results[0].Verdict)
}

func TestEvalSelectTableBestFirst(t *testing.T) {
	s := standIn(t)
	vars := map[string]string{"LLM_COMMON_TOOL_SELECTION_BASE_URL": s.URL}
	res := execCLI(t, vars, "", "eval", "--select", "--catalog", exampleCatalog(t), "--tasks", exampleTasks(),
		"--model", "fault:"+faultserver.Status500, "--model", "stand-in", "--limit", "4", "--json=false")
	require.Equal(t, 0, res.code, res.stderr)
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	require.GreaterOrEqual(t, len(lines), 4, res.stdout)
	assert.True(t, strings.HasPrefix(lines[0], "candidate"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "stand-in "), "the better candidate first: %q", lines[1])
	assert.Contains(t, lines[2], "100.0%", "the failing one fails closed on every task")
	assert.Contains(t, res.stdout, "fault:status_500 failed closed by kind: http_status 4")
}

func TestEvalSelectLimitShuffleSeed(t *testing.T) {
	s := standIn(t)
	vars := map[string]string{"LLM_COMMON_TOOL_SELECTION_BASE_URL": s.URL, "LLM_COMMON_TOOL_SELECTION_MODEL": "stand-in"}
	ids := func() []string {
		res := execCLI(t, vars, "", "eval", "--select", "--catalog", exampleCatalog(t), "--tasks", exampleTasks(),
			"--shuffle", "--seed", "7", "--limit", "5", "--json")
		require.Equal(t, 0, res.code, res.stderr)
		var out struct{ Candidates []selecteval.Score }
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
		var ids []string
		for _, r := range out.Candidates[0].Results {
			ids = append(ids, r.ID)
		}
		return ids
	}
	first := ids()
	assert.Len(t, first, 5)
	assert.Equal(t, first, ids(), "the same seed, the same sample")
	assert.NotEqual(t, []string{"err-rate", "cpu", "p99", "logs-timeout", "logs-oom"}, first, "shuffled")
}

func TestEvalSelectUsageErrors(t *testing.T) {
	vars := map[string]string{"LLM_COMMON_TOOL_SELECTION_BASE_URL": "http://127.0.0.1:9/v1", "LLM_COMMON_TOOL_SELECTION_API_KEY": "sk-secret-123"}
	cat := exampleCatalog(t)
	tasks := exampleTasks()
	for _, c := range []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"no tasks", vars, []string{"--catalog", cat}, "--tasks is required"},
		{"bad line", vars, []string{"--catalog", cat, "--tasks", writeFile(t, "t.jsonl", `{"id":"a","task":"t","calls":[]}`+"\n{oops\n")}, "t.jsonl line 2: not a task object"},
		{"unknown gold tool", vars, []string{"--catalog", cat, "--tasks", writeFile(t, "u.jsonl", `{"id":"a","task":"t","calls":[{"tool":"fly","args":{}}]}`)}, `line 1: task "a": calls[0] names "fly", which the catalog does not hold`},
		{"candidates field", vars, []string{"--catalog", cat, "--tasks", tasks, "--candidates", writeFile(t, "c.json", `[{"name":"a","modle":"x"}]`)}, `unknown field "modle"`},
		{"candidate key variable", vars, []string{"--catalog", cat, "--tasks", tasks, "--candidates", writeFile(t, "k.json", `[{"name":"a","api_key_env":"NOPE_KEY"}]`)}, `candidate "a": api_key_env: NOPE_KEY is not set`},
		{"candidate bad setting", vars, []string{"--catalog", cat, "--tasks", tasks, "--candidates", writeFile(t, "s.json", `[{"name":"a","top_k":-3}]`)}, `candidate "a":`},
		{"price", vars, []string{"--catalog", cat, "--tasks", tasks, "--price", "m=1"}, "want MODEL=IN/OUT"},
		{"parallel", vars, []string{"--catalog", cat, "--tasks", tasks, "--parallel", "0"}, "--parallel wants 1 or more"},
		{"no endpoint", map[string]string{}, []string{"--catalog", cat, "--tasks", tasks}, "no model endpoint configured"},
	} {
		res := execCLI(t, c.vars, "", append([]string{"eval", "--select"}, c.args...)...)
		assert.Equal(t, exitUsage, res.code, c.name)
		assert.Contains(t, res.stderr, c.want, c.name)
		assert.NotContains(t, res.stderr+res.stdout, "sk-secret-123", c.name)
		assert.Empty(t, res.stdout, c.name)
	}
}

// chromium renders page headless and returns chromium's console lines; it
// writes a screenshot when shot is set.
func chromium(t *testing.T, page, shot string) []string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		require.NotEqual(t, "true", os.Getenv("CI"), "chromium is not installed (bash tests/install-tools.sh installs it)")
		t.Skip("chromium is not installed (apt-get install -y chromium; make test installs it when run as root)")
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0", "--window-size=1100,1500"}
	if shot != "" {
		args = append(args, "--screenshot="+shot)
	} else {
		args = append(args, "--dump-dom")
	}
	abs, err := filepath.Abs(page)
	require.NoError(t, err)
	cmd := exec.Command(bin, append(args, "file://"+abs)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var console []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			console = append(console, l)
		}
	}
	if shot == "" {
		require.Contains(t, string(out), `id="scores"`, "the DOM chromium built")
	}
	return console
}

func TestEvalSelectReportRendersInChromium(t *testing.T) {
	s := standIn(t)
	page := filepath.Join(t.TempDir(), "report.html")
	vars := map[string]string{"LLM_COMMON_TOOL_SELECTION_BASE_URL": s.URL, "LLM_COMMON_TOOL_SELECTION_MODEL": "stand-in"}
	res := execCLI(t, vars, "", "eval", "--select", "--catalog", exampleCatalog(t), "--tasks", exampleTasks(),
		"--model", "stand-in", "--model", "fault:"+faultserver.Status503, "--report", page, "--json")
	require.Equal(t, 0, res.code, res.stderr)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	html := string(b)
	for _, want := range []string{`<svg xmlns="http://www.w3.org/2000/svg" id="bars"`, `id="scatter"`, `id="failed"`,
		`get_metrics: parameter &#34;metric&#34; is &#34;memory&#34;, gold accepts [&#34;cpu&#34;]`, "the selection failed (http_status)"} {
		assert.Contains(t, html, want)
	}
	for _, banned := range []string{"http://", "https://", "<script", "<link", "@import"} {
		if banned == "http://" {
			// the only URL is the SVG namespace, which is never fetched
			assert.Equal(t, strings.Count(html, "http://"), strings.Count(html, `xmlns="http://www.w3.org/2000/svg"`))
			continue
		}
		assert.NotContains(t, html, banned, "self-contained")
	}
	assert.Empty(t, chromium(t, page, ""), "console messages")
	// The check can fail: a page that fetches something logs a CSP error.
	bad := writeFile(t, "bad.html", strings.Replace(html, "<h1>", `<img src="http://127.0.0.1:9/x.png"><h1>`, 1))
	assert.NotEmpty(t, chromium(t, bad, ""))
	if os.Getenv("TOOLSELECT_SCREENSHOT") != "" {
		chromium(t, page, os.Getenv("TOOLSELECT_SCREENSHOT"))
	}
}

func TestEvalSelectPartialReport(t *testing.T) {
	rep := &selecteval.Report{Total: 24, Interrupted: true, Candidates: []selecteval.Score{{Name: "m", Model: "m", Tasks: 7, Results: []selecteval.Result{}}}}
	page := filepath.Join(t.TempDir(), "p.html")
	require.NoError(t, writeSelectReport(page, rep, "c.json", "t.jsonl"))
	b, _ := os.ReadFile(page)
	assert.Contains(t, string(b), `<p class="partial" id="partial">Interrupted: m ran 7 of 24 tasks.</p>`)
	var out strings.Builder
	printSelectTable(&out, rep)
	assert.Contains(t, out.String(), "partial: m ran 7 of 24 tasks")
}

// Ctrl-C keeps what was scored: the process, interrupted midway, prints the
// tasks it scored, says how many ran on stderr and exits 3.
func TestEvalSelectInterruptKeepsWhatWasScored(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "toolselect")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	script, err := faultserver.LoadScript(filepath.Join("..", "..", "examples", "eval-model.json"))
	require.NoError(t, err)
	s, err := faultserver.Start(faultserver.Options{Script: script, Latency: 150 * time.Millisecond, Stall: 10 * time.Second})
	require.NoError(t, err)
	defer s.Close()

	cmd := exec.Command(bin, "eval", "--select", "--catalog", exampleCatalog(t), "--tasks", exampleTasks(), "--json")
	cmd.Env = append(os.Environ(), "LLM_COMMON_TOOL_SELECTION_BASE_URL="+s.URL, "LLM_COMMON_TOOL_SELECTION_MODEL=stand-in")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	// Wait until a few selections were answered, then interrupt.
	deadline := time.Now().Add(20 * time.Second)
	for s.Requests() < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, stderr.String())
	assert.Equal(t, exitFailed, exit.ExitCode())

	var rep struct {
		Candidates []selecteval.Score `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout.String()), &rep), stdout.String())
	ran := rep.Candidates[0].Tasks
	assert.Greater(t, ran, 0)
	assert.Less(t, ran, 24)
	assert.Len(t, rep.Candidates[0].Results, ran)
	assert.Equal(t, ran*100, rep.Candidates[0].PromptTokens, "only what was scored is counted")
	assert.Contains(t, stderr.String(), fmt.Sprintf("interrupted: stand-in ran %d of 24 tasks", ran))
}
