package feedbackstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolselect/toolselect/rank"
)

// BenchmarkLoad10k loads a store of 10,000 lines (the shared livemcpbench
// queries with their gold tools, numbered as distinct cases).
// bench/feedback_load.py measures the whole process.
func BenchmarkLoad10k(b *testing.B) {
	dir := os.Getenv("TOOLSELECT_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "testdata", "sets")
	}
	qs, err := rank.LoadQueries(filepath.Join(dir, cmp.Or(os.Getenv("TOOLSELECT_BENCH_SET"), "livemcpbench"), "queries.jsonl"))
	if err != nil {
		b.Skip(err)
	}
	path := filepath.Join(b.TempDir(), "fb.jsonl")
	f, _ := os.Create(path)
	for i := range 10000 {
		q := qs[i%len(qs)]
		line, _ := json.Marshal(Record{Query: fmt.Sprintf("%s (case %d)", q.Query, i/len(qs)), Tools: q.Gold})
		f.Write(append(line, '\n'))
	}
	f.Close()
	b.ResetTimer()
	for range b.N {
		l, err := OpenLearner(context.Background(), path, nil)
		if err != nil {
			b.Fatal(err)
		}
		l.Close()
	}
}
