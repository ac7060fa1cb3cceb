package feedbackstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/toolselect/toolselect/rank"
)

// Learner replays a Store into a rank.Feedback and appends to the store as
// selections succeed. It implements selector.FeedbackRecorder. It is safe
// for concurrent use.
type Learner struct {
	st Store
	fb *rank.Feedback

	mu  sync.Mutex // serialises Sync
	cur Cursor
}

// NewLearner returns a Learner over st feeding fb (nil: a new Feedback with
// default options). Call Sync (or use Open) to load what st holds.
func NewLearner(st Store, fb *rank.Feedback) *Learner {
	if fb == nil {
		fb = rank.NewFeedback(nil)
	}
	return &Learner{st: st, fb: fb}
}

// OpenLearner opens the store spec names (see Open) and loads it into fb.
func OpenLearner(ctx context.Context, spec string, fb *rank.Feedback) (*Learner, error) {
	st, err := Open(spec)
	if err != nil {
		return nil, err
	}
	l := NewLearner(st, fb)
	if err := l.Sync(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return l, nil
}

// Feedback is what the learner has learned; pass it as rank.Options.Feedback.
func (l *Learner) Feedback() *rank.Feedback { return l.fb }

// Sync applies the records appended to the store since the last Sync (by
// this process or any other), in one rank.Feedback.Replay. A record that
// does not parse stops it with a *LineError naming the line; the records
// before it are applied.
func (l *Learner) Sync(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ops []rank.FeedbackOp
	cur, err := l.st.Read(ctx, l.cur, func(r Record) error {
		ops = append(ops, rank.FeedbackOp{Query: r.Query, Tools: r.Tools, Remove: r.Remove})
		return nil
	})
	if len(ops) > 0 {
		if _, rerr := l.fb.Replay(ops); rerr != nil {
			// The store checked every record; a failure here is a bug.
			return errors.Join(err, rerr)
		}
	}
	l.cur = cur
	return err
}

// Record appends (query, tools) to the store and learns it, with what other
// processes appended meanwhile.
func (l *Learner) Record(ctx context.Context, query string, tools []string) error {
	// A query with no words would be stored and then skipped by every
	// replay: refused here, it is an error the caller sees.
	if err := l.fb.Check(query, tools); err != nil {
		return err
	}
	if err := l.st.Append(ctx, Record{Query: query, Tools: tools}); err != nil {
		return err
	}
	return l.Sync(ctx)
}

// Withdraw appends the removal of (query, tools) and forgets it: an executor
// outcome said the selection was wrong (the call was refused, invalid or
// failed). A successful outcome confirms a recorded selection by leaving it.
// query is the text the selection was recorded under: a selection's
// selector.Result.FeedbackQuery (or selector.ToolSelector.Withdraw, which
// takes the selection itself). It returns how many (query, tool) pairs it
// matched, counting the records other processes appended too; a withdrawal
// that matches none is ErrNotRecorded and writes nothing.
func (l *Learner) Withdraw(ctx context.Context, query string, tools []string) (int, error) {
	if err := l.fb.Check(query, tools); err != nil {
		return 0, err
	}
	if err := l.Sync(ctx); err != nil {
		return 0, err
	}
	n := l.fb.Holds(query, tools...)
	if n == 0 {
		return 0, fmt.Errorf("%w: no tool of %q is learned for the query %q (withdraw with the text the selection was recorded under: its Result.FeedbackQuery)",
			ErrNotRecorded, tools, clipQuery(query))
	}
	if err := l.st.Append(ctx, Record{Query: query, Tools: tools, Remove: true}); err != nil {
		return 0, err
	}
	return n, l.Sync(ctx)
}

// clipQuery keeps an error message short: at most 200 bytes of a query.
func clipQuery(q string) string {
	if len(q) <= 200 {
		return q
	}
	cut := 200
	for cut > 0 && !utf8.RuneStart(q[cut]) {
		cut--
	}
	return q[:cut] + "…"
}

// Close closes the store.
func (l *Learner) Close() error { return l.st.Close() }
