package capi

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/toolselect/toolselect/rank/feedbackstore"
	"github.com/toolselect/toolselect/selector"
)

// learners holds the feedback learner of each selector created with a
// "feedback" store in its config.
var learners sync.Map // *selector.ToolSelector -> *feedbackstore.Learner

// openFeedback loads the store a selector config names (nil when none).
func openFeedback(cfg selector.Config) (*feedbackstore.Learner, []selector.Option, error) {
	if cfg.Feedback == "" {
		return nil, nil, nil
	}
	l, err := feedbackstore.OpenLearner(context.Background(), cfg.Feedback, nil)
	if err != nil {
		return nil, nil, err
	}
	return l, []selector.Option{selector.WithFeedback(l)}, nil
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
	dec := json.NewDecoder(bytes.NewReader(recJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return Fail(ErrArgument, "feedback_json: %v", err)
	}
	var err error
	if rec.Remove {
		err = l.Withdraw(context.Background(), rec.Query, rec.Tools)
	} else {
		err = l.Record(context.Background(), rec.Query, rec.Tools)
	}
	if err != nil {
		return Fail(ErrArgument, "feedback_json: %v", err)
	}
	return Ok(l.Feedback().Stats())
}
