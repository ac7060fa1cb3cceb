package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A small smoke of `make bench-scale`: the catalog builder, the start-up
// phases and the FTS5 side of bench/fts5_vs_rank.py on 120 tools.
func TestBenchScaleSmoke(t *testing.T) {
	data := os.Getenv("TOOLSELECT_DATA")
	if data == "" {
		data = filepath.Join("..", "..", "testdata", "sets")
	}
	if _, err := os.Stat(filepath.Join(data, "bfcl", "tools.jsonl")); err != nil {
		t.Skipf("shared data not available: %v", err)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	dir := t.TempDir()
	// 50 bfcl tools, so 120 holds renamed copies (of schemas of their own).
	small := filepath.Join(dir, "small")
	if err := os.MkdirAll(small, 0o755); err != nil {
		t.Fatal(err)
	}
	copyHead(t, filepath.Join(data, "bfcl", "tools.jsonl"), filepath.Join(small, "tools.jsonl"), 50)
	copyHead(t, filepath.Join(data, "bfcl", "queries.jsonl"), filepath.Join(small, "queries.jsonl"), 20)
	out := filepath.Join(dir, "scaled")
	if b, err := exec.Command(py, "../scale_catalog.py", "--tools", "120", "--out", out, small).CombinedOutput(); err != nil {
		t.Fatalf("scale_catalog.py: %v\n%s", err, b)
	}
	// Every tool has a name and a schema of its own.
	names, schemas := map[string]bool{}, map[string]bool{}
	for _, line := range lines(t, filepath.Join(out, "tools.jsonl")) {
		var tool struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		}
		if err := json.Unmarshal([]byte(line), &tool); err != nil {
			t.Fatal(err)
		}
		names[tool.Name], schemas[string(tool.Parameters)] = true, true
	}
	if len(names) != 120 || len(schemas) != 120 {
		t.Errorf("%d names, %d schemas, want 120 distinct of each", len(names), len(schemas))
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-catalog", filepath.Join(out, "tools.jsonl"), "-queries", filepath.Join(out, "queries.jsonl")}, &stdout, &stderr); code != 0 {
		t.Fatalf("startup: exit %d: %s", code, stderr.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("startup report %q: %v", stdout.String(), err)
	}
	if rep.Tools+rep.Refused != 120 || rep.Queries != 20 || rep.Startup.WallMS <= 0 || rep.RegistryPerTool <= 0 || rep.IndexPerTool <= 0 {
		t.Errorf("startup report: %+v", rep)
	}
	cmd := exec.Command(py, "../fts5_vs_rank.py", "--fts5-child", out)
	var ferr bytes.Buffer
	cmd.Stderr = &ferr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("fts5 child: %v\n%s", err, ferr.String())
	}
	if n := strings.Count(string(b), "\n"); n != 20 || !strings.Contains(ferr.String(), "query_ms") {
		t.Errorf("fts5 child: %d answers (want 20), stderr %q", n, ferr.String())
	}
	if code := run([]string{"-catalog", filepath.Join(dir, "missing.jsonl")}, &stdout, &stderr); code != 2 {
		t.Errorf("missing catalog: exit %d", code)
	}
}

func copyHead(t *testing.T, from, to string, n int) {
	t.Helper()
	ls := lines(t, from)
	if err := os.WriteFile(to, []byte(strings.Join(ls[:min(n, len(ls))], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			out = append(out, sc.Text())
		}
	}
	return out
}
