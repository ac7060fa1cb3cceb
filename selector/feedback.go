package selector

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// FeedbackRecorder learns from selections: Record is told, once per
// successful selection, the task text and the tools of the calls that passed
// validation. The rank package's feedback store (rank/feedbackstore) is one;
// the selector declares the interface so that it does not import rank.
type FeedbackRecorder interface {
	Record(ctx context.Context, query string, tools []string) error
}

// feedbackQuery is the text a selection is learned under: the task
// description (with its sub-tasks), or the query when there is no
// description.
func feedbackQuery(req *Request) string {
	if strings.TrimSpace(req.Task.Description) == "" {
		return strings.TrimSpace(req.Query)
	}
	parts := []string{strings.TrimSpace(req.Task.Description)}
	for _, st := range req.Task.SubTasks {
		parts = append(parts, strings.TrimSpace(st.Description))
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// recordFeedback tells the recorder, if any, about a successful selection
// with calls. A recorder's failure does not undo the selection: it is logged
// and reported in [Result.FeedbackError].
func (ss *Session) recordFeedback(r *Result) {
	if len(r.Calls) == 0 {
		return
	}
	r.FeedbackQuery = ss.feedbackQuery
	if ss.feedback == nil {
		return
	}
	tools := make([]string, 0, len(r.Calls))
	seen := map[string]bool{}
	for _, c := range r.Calls {
		if !seen[c.Tool] {
			seen[c.Tool] = true
			tools = append(tools, c.Tool)
		}
	}
	if err := ss.feedback.Record(ss.ioContext(), ss.feedbackQuery, tools); err != nil {
		r.FeedbackError = truncate(redact(err.Error(), ss.cfg.APIKey), 1024)
		ss.log.LogAttrs(ss.ctx, slog.LevelWarn, "tool selection: recording feedback failed",
			slog.String("error", r.FeedbackError))
	}
}

// feedbackWithdrawer is a FeedbackRecorder that can take a record back
// (rank/feedbackstore's Learner is one).
type feedbackWithdrawer interface {
	Withdraw(ctx context.Context, query string, tools []string) (int, error)
}

// Withdraw takes back what the selection res taught the recorder
// ([Config.Recorder]): the pairs of its FeedbackQuery and each of tools, or of
// every tool its calls named when tools are not given, typically because
// running a call failed or was refused. It returns how many recorded pairs
// matched; a withdrawal that matches none is an error (the recorder's, e.g.
// feedbackstore.ErrNotRecorded), as is a selection that returned no calls or
// a selector whose recorder cannot withdraw.
func (s *ToolSelector) Withdraw(ctx context.Context, res *Result, tools ...string) (int, error) {
	if res == nil || res.FeedbackQuery == "" {
		return 0, fmt.Errorf("%w: the selection returned no calls, so it taught nothing to withdraw", ErrBadRequest)
	}
	w, ok := s.feedback.(feedbackWithdrawer)
	if !ok {
		return 0, fmt.Errorf("%w: the selector's recorder (Config.Recorder, or the Feedback setting) cannot withdraw a selection", ErrBadRequest)
	}
	if len(tools) == 0 {
		for _, c := range res.Calls {
			if !slices.Contains(tools, c.Tool) {
				tools = append(tools, c.Tool)
			}
		}
	}
	return w.Withdraw(ctx, res.FeedbackQuery, tools)
}
