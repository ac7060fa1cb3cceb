package selector

import (
	"context"
	"log/slog"
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
// and reported in Result.FeedbackError.
func (ss *Session) recordFeedback(r *Result) {
	if ss.feedback == nil || len(r.Calls) == 0 {
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
