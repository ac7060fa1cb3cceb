package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/rank/feedbackstore"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// feedbackFlag is --feedback of rank and eval.
type feedbackFlag struct{ spec string }

func (f *feedbackFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&f.spec, "feedback", "", "learn from past selections: a JSON Lines file of {\"query\",\"tools\":[...]} (or a redis:// URL)")
}

// load reads the feedback store into a rank.Feedback over reg's tools; nil
// when no store was named. A malformed record is a usage error naming its
// line; unknown tool names are ignored, with a warning on stderr.
func (f *feedbackFlag) load(env *cmdEnv, name string, reg *registry.Registry) (*rank.Feedback, int, bool) {
	if f.spec == "" {
		return nil, 0, true
	}
	fb := rank.NewFeedback(&rank.FeedbackOptions{Known: func(n string) bool { _, ok := reg.Get(n); return ok }})
	l, err := feedbackstore.OpenLearner(context.Background(), f.spec, fb)
	if err != nil {
		var le *feedbackstore.LineError
		if errors.As(err, &le) {
			return nil, fail(env, name, exitUsage, "--feedback %v", err), false
		}
		return nil, fail(env, name, exitUsage, "--feedback %s: %v", f.spec, err), false
	}
	l.Close()
	if st := fb.Stats(); st.Unknown > 0 {
		fmt.Fprintf(env.stderr, "toolselect %s: warning: --feedback %s: %d tool names not in the catalog were ignored (%d pairs learned)\n",
			name, f.spec, st.Unknown, st.Pairs)
	}
	return fb, 0, true
}

// loadWhile is load with work (building the index) done at the same time
// on another goroutine, so a large store costs little more than the longer
// of the two. work's error is reported only when the store loaded, as the
// command's failure (exit 1).
func (f *feedbackFlag) loadWhile(env *cmdEnv, name string, reg *registry.Registry, work func() error) (*rank.Feedback, int, bool) {
	if f.spec == "" {
		return nil, 0, true
	}
	done := make(chan error, 1)
	go func() { done <- work() }()
	fb, code, ok := f.load(env, name, reg)
	werr := <-done
	if ok && werr != nil {
		return nil, fail(env, name, exitFailed, "%v", werr), false
	}
	return fb, code, ok
}

// selectFeedback opens the store LLM_COMMON_TOOL_SELECTION_FEEDBACK names
// for select: the selection is recorded there, and the ranking learns from
// it. Nothing when the variable is unset.
func selectFeedback(env *cmdEnv, cfg selector.Config) (selector.FeedbackRecorder, *rank.Feedback, int, bool) {
	if cfg.Feedback == "" {
		return nil, nil, 0, true
	}
	l, err := feedbackstore.OpenLearner(context.Background(), cfg.Feedback, nil)
	if err != nil {
		return nil, nil, fail(env, "select", exitUsage, "%s: %v", envVar("feedback"), err), false
	}
	return l, l.Feedback(), 0, true
}
