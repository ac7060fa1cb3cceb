package capi

import (
	"context"
	"errors"
	"sync"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/rank/feedbackstore"
	"github.com/toolselect/toolselect/selector"
)

// learners holds the feedback learner of each selector created with a
// "feedback" store in its config.
var learners sync.Map // *selector.ToolSelector -> *feedbackstore.Learner

// shared holds one learner per store spec for every selector of the process
// naming it. llm-common builds a selector per task: each used to open the
// store again and replay all of it, and learned apart from the others until
// it next recorded something.
var shared = struct {
	sync.Mutex
	m map[string]*sharedLearner
}{m: map[string]*sharedLearner{}}

type sharedLearner struct {
	l    *feedbackstore.Learner
	refs int
}

// openFeedback returns the learner of the store a selector config names (nil
// when none): the one the process already holds, brought up to date with
// what was appended since (as opening it would), or a new one.
func openFeedback(cfg selector.Config) (*feedbackstore.Learner, error) {
	if cfg.Feedback == "" {
		return nil, nil
	}
	shared.Lock()
	defer shared.Unlock()
	if s := shared.m[cfg.Feedback]; s != nil {
		if err := s.l.Sync(context.Background()); err != nil {
			return nil, err
		}
		s.refs++
		return s.l, nil
	}
	l, err := feedbackstore.OpenLearner(context.Background(), cfg.Feedback, nil)
	if err != nil {
		return nil, err
	}
	shared.m[cfg.Feedback] = &sharedLearner{l: l, refs: 1}
	return l, nil
}

// closeFeedback gives back a learner from openFeedback; the store closes with
// the last selector using it.
func closeFeedback(l *feedbackstore.Learner) {
	shared.Lock()
	defer shared.Unlock()
	for spec, s := range shared.m {
		if s.l == l {
			if s.refs--; s.refs == 0 {
				delete(shared.m, spec)
				l.Close()
			}
			return
		}
	}
}

func learnerOf(s *selector.ToolSelector) *feedbackstore.Learner {
	if v, ok := learners.Load(s); ok {
		return v.(*feedbackstore.Learner)
	}
	return nil
}

// SelectorAddFeedback records feedback by hand in the store of the
// selector's config: {"query":"...","tools":["name",...]}, with
// "remove":true to withdraw a pair. Result: the feedback's counts
// {"pairs","tools","unknown","evicted"}.
func SelectorAddFeedback(sel uint64, recJSON []byte, present bool) Result {
	v, r := table.get(sel, KindSelector)
	if r != nil {
		return *r
	}
	if r := JSON("feedback_json", recJSON, present, nil); r != nil {
		return *r
	}
	l := learnerOf(v.(*selector.ToolSelector))
	if l == nil {
		return Fail(ErrArgument, "the selector has no feedback store: set \"feedback\" in its config (LLM_COMMON_TOOL_SELECTION_FEEDBACK)")
	}
	var rec feedbackstore.Record
	if r := Strict("feedback_json", recJSON, true, &rec); r != nil {
		return *r
	}
	if rec.Remove {
		n, err := l.Withdraw(context.Background(), rec.Query, rec.Tools)
		if errors.Is(err, feedbackstore.ErrNotRecorded) {
			// The rule as data: a binding words it with its own names.
			return failDetail(ErrArgument, map[string]any{"rule": "not_recorded"}, "feedback_json: %v", err)
		}
		if err != nil {
			return Fail(ErrArgument, "feedback_json: %v", err)
		}
		return Ok(struct {
			rank.FeedbackStats
			Withdrawn int `json:"withdrawn"`
		}{l.Feedback().Stats(), n})
	}
	if err := l.Record(context.Background(), rec.Query, rec.Tools); err != nil {
		return Fail(ErrArgument, "feedback_json: %v", err)
	}
	return Ok(l.Feedback().Stats())
}
