package feedbackstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/toolselect/toolselect/internal/testing/redistest"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

func catalog(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New(nil)
	obj := json.RawMessage(`{"type":"object"}`)
	if err := reg.RegisterAll([]registry.Tool{
		registry.NewTool("get_forecast", "Weather forecast for a city.", obj),
		registry.NewTool("send_email", "Send an email message.", obj),
		registry.NewTool("read_file", "Read a file from disk.", obj),
		registry.NewTool("trip_planner", "Plan a trip itinerary between cities.", obj),
	}); err != nil {
		t.Fatal(err)
	}
	return reg
}

const (
	learned    = "will it snow during my ski trip to Chamonix next week"
	paraphrase = "is snow expected on my ski trip to Chamonix?"
)

// top returns the first of the top 2 tools for the paraphrase that is
// get_forecast, or the first tool.
func top(t *testing.T, reg *registry.Registry, fb *rank.Feedback) string {
	t.Helper()
	picks, err := rank.For(reg).Rank(context.Background(), paraphrase, &rank.Options{MaxCandidates: 2, Feedback: fb})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range picks {
		if p.Tool == "get_forecast" {
			return p.Tool
		}
	}
	if len(picks) == 0 {
		return ""
	}
	return picks[0].Tool
}

func TestFileStoreRecordsAndReloads(t *testing.T) {
	reg := catalog(t)
	path := filepath.Join(t.TempDir(), "feedback.jsonl")
	ctx := context.Background()
	l, err := OpenLearner(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := top(t, reg, l.Feedback()); got == "get_forecast" {
		t.Fatal("get_forecast is first before any feedback")
	}
	if err := l.Record(ctx, learned, []string{"get_forecast"}); err != nil {
		t.Fatal(err)
	}
	if got := top(t, reg, l.Feedback()); got != "get_forecast" {
		t.Fatalf("after Record: %q first, want get_forecast", got)
	}
	b, _ := os.ReadFile(path)
	if want := `{"query":"` + learned + `","tools":["get_forecast"]}` + "\n"; string(b) != want {
		t.Errorf("file holds %q, want %q", b, want)
	}
	// A second process loads it at start.
	l2, err := OpenLearner(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := top(t, reg, l2.Feedback()); got != "get_forecast" {
		t.Errorf("reloaded: %q first", got)
	}
	// A withdrawal is appended and forgets the pair, here and on reload.
	if n, err := l2.Withdraw(ctx, learned, []string{"get_forecast"}); err != nil || n != 1 {
		t.Fatalf("Withdraw = %d, %v; want 1 pair matched", n, err)
	}
	// Withdrawing again, or under another text, matches nothing: an error
	// the caller sees, and nothing is written.
	before, _ := os.ReadFile(path)
	for _, q := range []string{learned, learned + " please"} {
		if n, err := l2.Withdraw(ctx, q, []string{"get_forecast"}); !errors.Is(err, ErrNotRecorded) || n != 0 {
			t.Errorf("Withdraw(%q) of nothing recorded = %d, %v; want ErrNotRecorded", q, n, err)
		}
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("a withdrawal that matched nothing wrote to the store")
	}
	if st := l2.Feedback().Stats(); st.Pairs != 0 {
		t.Errorf("after Withdraw: %+v", st)
	}
	if err := l.Sync(ctx); err != nil || l.Feedback().Stats().Pairs != 0 {
		t.Errorf("the first learner did not see the withdrawal: %v %+v", err, l.Feedback().Stats())
	}
}

func TestFileStoreErrorsNameTheLine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"not json", `{"query":"a","tools":["x"]}` + "\n\n" + `{"query": 3}` + "\n", 3, "cannot unmarshal"},
		{"empty query", `{"query":"","tools":["x"]}` + "\n", 1, "the query is empty"},
		{"no tools", `{"query":"a","tools":[]}` + "\n", 1, "no tool names"},
		{"unknown key", `{"query":"a","tools":["x"],"tool":"y"}` + "\n", 1, "unknown field"},
		{"two values", `{"query":"a","tools":["x"]} {}` + "\n", 1, "more than one"},
		// A record a person reads as one thing and encoding/json as another.
		{"case variant", `{"query":"a","tools":["x"],"Tools":["rm"]}` + "\n", 1, `the key "Tools" matches "tools" only in case`},
		{"key twice", `{"query":"a","tools":["x"],"tools":["rm"]}` + "\n", 1, `the key "tools" is given twice`},
		{"huge line", `{"query":"a","tools":["x"]}` + "\n" + `{"query":"` + strings.Repeat("a", maxLineBytes) + `","tools":["x"]}` + "\n" + `{"query":"b","tools":["x"]}` + "\n", 2, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".jsonl")
			os.WriteFile(path, []byte(tc.text), 0o644)
			_, err := OpenLearner(context.Background(), path, nil)
			var le *LineError
			if !errors.As(err, &le) || le.Line != tc.line || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a LineError at line %d saying %q", err, tc.line, tc.want)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("line %d:", tc.line)) || !strings.Contains(err.Error(), path) {
				t.Errorf("%q does not name the file and line", err)
			}
		})
	}
	// A record too large to store is refused before it is written.
	path := filepath.Join(dir, "append.jsonl")
	err := newFile(path).Append(context.Background(), Record{Query: strings.Repeat("word ", rank.MaxFeedbackQueryBytes/4), Tools: []string{"x"}})
	if !errors.Is(err, rank.ErrFeedback) {
		t.Errorf("huge record: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused record created the file")
	}
}

// A line another process is still writing (no newline yet) is left for the
// next Sync.
func TestFileStoreLeavesAPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jsonl")
	full := `{"query":"` + learned + `","tools":["get_forecast"]}`
	second := strings.Replace(full, "get_forecast", "trip_planner", 1)
	os.WriteFile(path, []byte(full+"\n"+second[:20]), 0o644)
	ctx := context.Background()
	l, err := OpenLearner(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := l.Feedback().Stats(); st.Pairs != 1 {
		t.Fatalf("%+v", st)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(second[20:] + "\n")
	f.Close()
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if st := l.Feedback().Stats(); st.Pairs != 2 || st.Tools != 2 {
		t.Errorf("after the line was completed: %+v", st)
	}
}

// A file written by hand often lacks its last newline: its last record is
// read, and a record appended after it starts a line of its own (it used to
// join that line, and every later load failed on it).
func TestFileStoreWithoutLastNewline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jsonl")
	full := `{"query":"` + learned + `","tools":["get_forecast"]}`
	os.WriteFile(path, []byte(full), 0o644)
	ctx := context.Background()
	l, err := OpenLearner(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := l.Feedback().Stats(); st.Pairs != 1 {
		t.Fatalf("the unterminated last record was not read: %+v", st)
	}
	if err := l.Record(ctx, "plan a trip to the alps next week", []string{"trip_planner"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"); len(lines) != 2 || lines[0] != full {
		t.Fatalf("the file after an append: %q", b)
	}
	again, err := OpenLearner(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := again.Feedback().Stats(); st.Pairs != 2 {
		t.Errorf("after reopening: %+v", st)
	}
}

func TestOpenRefusesOtherSchemes(t *testing.T) {
	if _, err := Open("http://example.com/x"); err == nil || !strings.Contains(err.Error(), "neither a file path nor a redis") {
		t.Errorf("http URL: %v", err)
	}
	if _, err := Open("redis://[::1"); err == nil {
		t.Error("a malformed redis URL was accepted")
	}
}

// Two rankers (as two processes would) share one Redis store: what one
// records, the other learns on Sync.
func TestRedisStoreSharedByTwoRankers(t *testing.T) {
	addr := redistest.Start(t)
	reg := catalog(t)
	ctx := context.Background()
	url := "redis://" + addr + "/0"
	a, err := OpenLearner(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenLearner(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := top(t, reg, b.Feedback()); got == "get_forecast" {
		t.Fatal("get_forecast is first before any feedback")
	}
	if err := a.Record(ctx, learned, []string{"get_forecast"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := top(t, reg, b.Feedback()); got != "get_forecast" {
		t.Errorf("the second ranker did not learn the first one's selection: %q first", got)
	}
	// Concurrent records from both while both rank, then both agree.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, l := range []*Learner{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rank.For(reg)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := r.Rank(ctx, "email the report to the team", &rank.Options{Feedback: l.Feedback()}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var rec sync.WaitGroup
	for i, l := range []*Learner{a, b} {
		rec.Add(1)
		go func() {
			defer rec.Done()
			for j := range 20 {
				if err := l.Record(ctx, fmt.Sprintf("email the report number %d to team %d", j, i), []string{"send_email"}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	rec.Wait()
	close(stop)
	wg.Wait()
	a.Sync(ctx)
	b.Sync(ctx)
	if sa, sb := a.Feedback().Stats(), b.Feedback().Stats(); sa != sb || sa.Pairs != 41 {
		t.Errorf("the rankers disagree: %+v vs %+v, want 41 pairs each", sa, sb)
	}
	// A malformed element names its position in the list.
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	client.RPush(ctx, defaultRedisKey, `{"query":"","tools":["x"]}`)
	_, err = OpenLearner(ctx, url, nil)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 42 {
		t.Errorf("malformed element: %v, want a LineError at 42", err)
	}
	// NewRedis over the program's own client reads the list a redis://
	// spec names ("" is its key), and another key is another log.
	own := NewLearner(NewRedis(redis.NewClient(&redis.Options{Addr: addr}), ""), nil)
	defer own.Close()
	if err := own.Sync(ctx); !errors.As(err, &le) || le.Line != 42 || own.Feedback().Stats().Pairs != 41 {
		t.Errorf("NewRedis read %+v, %v; want the 41 pairs and the LineError at 42", own.Feedback().Stats(), err)
	}
	other := NewLearner(NewRedis(redis.NewClient(&redis.Options{Addr: addr}), "elsewhere:feedback"), nil)
	defer other.Close()
	if err := other.Record(ctx, learned, []string{"get_forecast"}); err != nil || other.Feedback().Stats().Pairs != 1 {
		t.Errorf("a log under another key: %v, %+v", err, other.Feedback().Stats())
	}
	if n, _ := client.LLen(ctx, "elsewhere:feedback").Result(); n != 1 {
		t.Errorf("the other key holds %d records", n)
	}
}

// A query with no words to learn from is refused when recorded, not stored
// to be skipped by every replay.
func TestLearnerRefusesWordlessQuery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fb.jsonl")
	l, err := OpenLearner(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = l.Record(context.Background(), "the of and", []string{"x"})
	if !errors.Is(err, rank.ErrFeedback) || !strings.Contains(err.Error(), "no words to learn from") {
		t.Fatalf("wordless record: %v", err)
	}
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("the store got %q", b)
	}
}

// A JSON Lines store and a Redis store holding the same records give the
// same rankings, byte for byte (the store is where records live, not what they mean).
func TestFileAndRedisStoresRankAlike(t *testing.T) {
	addr := redistest.Start(t)
	reg := catalog(t)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "past.jsonl")
	url := "redis://" + addr + "/3"
	stores := []string{file, url}
	words := []string{"weather", "forecast", "email", "report", "file", "read", "trip", "plan", "city", "team", "disk", "message"}
	tools := []string{"get_forecast", "send_email", "read_file", "trip_planner"}
	for _, spec := range stores {
		s, err := Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			q := fmt.Sprintf("%s %s %s", words[i%len(words)], words[(i*7+3)%len(words)], words[(i*5+1)%len(words)])
			r := Record{Query: q, Tools: []string{tools[(i*3)%len(tools)]}, Remove: i%23 == 0}
			if err := s.Append(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
	}
	var outs []string
	for _, spec := range stores {
		l, err := OpenLearner(ctx, spec, rank.NewFeedback(&rank.FeedbackOptions{PerTool: 16}))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		r := rank.For(reg)
		for _, q := range []string{"weather in paris", "email the team a report", "plan a trip", "read a message from disk", "forecast report"} {
			picks, err := r.Rank(ctx, q, &rank.Options{MaxCandidates: 4, MinScore: -1, Feedback: l.Feedback()})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range picks {
				fmt.Fprintf(&b, "%s %s %.17g %s\n", q, p.Tool, p.Score, p.Reason)
			}
		}
		l.Close()
		outs = append(outs, b.String())
	}
	if outs[0] != outs[1] {
		t.Fatalf("the file and Redis stores rank differently:\n%s\n---\n%s", outs[0], outs[1])
	}
}

// The file store holds the users' task texts: it is created readable and
// writable by its owner only, and one its group or everyone may write
// (anyone could add records that steer the ranking) is refused on read and
// on append, with the chmod that fixes it.
func TestFileStoreIsPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("mode bits do not say who may write a file on Windows")
	}
	path := filepath.Join(t.TempDir(), "feedback.jsonl")
	ctx := context.Background()
	st := newFile(path)
	if err := st.Append(ctx, Record{Query: learned, Tools: []string{"get_forecast"}}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Fatalf("created with mode %04o, want 0600", perm)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	_, err = st.Read(ctx, Cursor{}, func(Record) error { return nil })
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "chmod go-w") {
		t.Fatalf("reading a world-writable store: %v", err)
	}
	if err := st.Append(ctx, Record{Query: paraphrase, Tools: []string{"get_forecast"}}); err == nil || !strings.Contains(err.Error(), "chmod go-w") {
		t.Fatalf("appending to a world-writable store: %v", err)
	}
	if _, err := OpenLearner(ctx, path, nil); err == nil {
		t.Fatal("a learner loaded a world-writable store")
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), paraphrase) {
		t.Fatal("the refused record was written")
	}
}
