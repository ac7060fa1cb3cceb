package main

import (
	"bufio"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/internal/testing/fixtures"
)

// `toolselect rank --queries ... --feedback ... --json` is a pure function of
// its files (a ranking can be replayed): run twice, and with 1 and 2 cores, the output is the
// same byte for byte on the bfcl set with half its queries' gold tools
// as past selections.
func TestRankQueriesWithFeedbackIsDeterministic(t *testing.T) {
	f, err := os.Open(fixtures.Queries("bfcl"))
	require.NoError(t, err)
	defer f.Close()
	var past strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var q struct {
			Query string   `json:"query"`
			Gold  []string `json:"gold"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &q))
		if n++; n%2 == 0 || len(q.Gold) == 0 {
			continue
		}
		b, _ := json.Marshal(map[string]any{"query": q.Query, "tools": q.Gold})
		past.Write(b)
		past.WriteByte('\n')
	}
	feedback := writeTemp(t, "past.jsonl", past.String())
	args := []string{"rank", "--catalog", fixtures.Tools("bfcl"), "--queries", fixtures.Queries("bfcl"),
		"--feedback", feedback, "--k", "10", "--json"}
	var want string
	for i, procs := range []int{2, 2, 1} {
		prev := runtime.GOMAXPROCS(procs)
		r := execCLI(t, nil, "", args...)
		runtime.GOMAXPROCS(prev)
		require.Equal(t, exitOK, r.code, r.stderr)
		if i == 0 {
			want = r.stdout
			require.Greater(t, strings.Count(want, "\n"), 100)
			continue
		}
		if r.stdout != want {
			a, b := strings.Split(want, "\n"), strings.Split(r.stdout, "\n")
			for j := range min(len(a), len(b)) {
				require.Equal(t, a[j], b[j], "run %d (GOMAXPROCS=%d) differs at line %d", i+1, procs, j+1)
			}
			require.Equal(t, len(a), len(b), "run %d differs in length", i+1)
		}
	}
}
