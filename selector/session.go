package selector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolselect/toolselect/registry"
)

// Session is one selection as a sans-I/O state machine: it says which chat
// completion to perform (Next), is fed the outcome (Feed), and ends with the
// calls or a *SelectionError. It holds the whole policy (offering, prompts,
// search rounds, parsing, checks, cap, fallback, fail-closed); Select drives
// it with a ChatClient, and the C ABI lets Python drive it with its own client.
//
// A Session is not safe for concurrent use.
type Session struct {
	cfg    Config
	log    *slog.Logger
	ctx    context.Context // Begin's, without its cancellation: log records and spans
	io     context.Context // the Feed in progress: its search ranking and feedback write
	reg    *registry.Registry
	models []string
	user   string // the user prompt, before any search note

	eligible []*registry.Entry
	rule     registry.Eligibility // the request's caller, which decided eligible
	// rank ranks the eligible tools for a query (the offer's and each
	// search's); nil when the offer is every eligible tool.
	rank   func(ctx context.Context, query string) ([]*registry.Entry, error)
	subset bool   // the first offer is a ranked part of the eligible tools
	first  *offer // the first request's offer, where every attempt starts
	cur    *offer // the offer of the pending (or last) request

	feedback      FeedbackRecorder // [Config.Recorder]
	feedbackQuery string

	deadline    time.Time
	hasDeadline bool
	now         func() time.Time

	next     int // index into models of the next attempt
	pending  *ChatRequest
	attempts []Attempt
	done     *Action
	att      attemptState // the attempt in progress

	span     trace.Span // the selection's span (telemetry.go)
	chatSpan trace.Span // the pending request's span
	began    time.Time  // when Begin started: the selection's duration
}

// Begin starts a selection: it picks the offered tools (the eligible ones,
// within the token budget or ranked, see [Config.Ranker]) and builds the prompts.
// The first action is a chat, or done at once when there is nothing to offer
// (a *SelectionError of kind EmptyNoEligibleTools or EmptyNoRankedTools).
// ctx's deadline bounds every attempt's timeout; ctx is also passed to the
// ranking and to log records. An error means the request itself is unusable
// (ErrBadRequest) or the ranking failed.
func (s *ToolSelector) Begin(ctx context.Context, req Request) (*Session, error) {
	began := s.now()
	if req.Registry == nil {
		return nil, s.rejected(ctx, began, fmt.Errorf("%w: no registry", ErrBadRequest))
	}
	if strings.TrimSpace(req.Task.Description) == "" && strings.TrimSpace(req.Query) == "" {
		return nil, s.rejected(ctx, began, fmt.Errorf("%w: the task has no description and there is no query", ErrBadRequest))
	}
	user, err := buildUserPrompt(&req)
	if err != nil {
		return nil, s.rejected(ctx, began, err)
	}
	ss := &Session{cfg: s.cfg, log: s.log, reg: req.Registry, now: s.now, user: user}
	ss.ctx = context.WithoutCancel(ss.traceBegin(ctx, req.Registry.Len()))
	ss.models = []string{s.cfg.Model}
	if s.cfg.FallbackModel != "" {
		ss.models = append(ss.models, s.cfg.FallbackModel)
	}
	ss.deadline, ss.hasDeadline = ctx.Deadline()
	ss.feedback, ss.feedbackQuery = s.feedback, feedbackQuery(&req)

	all := req.Registry.Entries()
	ss.rule = req.Eligibility()
	eligible, excluded := ss.rule.Filter(all)
	ss.eligible = eligible
	if len(eligible) == 0 {
		ss.cur = &offer{}
		msg := noEligibleMessage(len(all), excluded)
		s.log.LogAttrs(ctx, slog.LevelDebug, "tool selection: no eligible tool; no model asked",
			slog.String("task_id", req.Task.ID), slog.String("why", msg))
		ss.finish(&Result{}, &SelectionError{Kind: EmptyNoEligibleTools, Message: msg})
		return ss, nil
	}
	entries, err := ss.firstOffer(ctx, s, &req)
	if err != nil {
		ss.traceAbort(err)
		return nil, err
	}
	canSearch := ss.subset && ss.cfg.Searches() > 0
	if ss.first, err = ss.newOffer(entries, canSearch, ""); err != nil {
		ss.traceAbort(err)
		return nil, err
	}
	ss.cur = ss.first
	ss.traceOffer(s.ranker, entries)
	s.log.LogAttrs(ctx, slog.LevelDebug, "tool selection: begin",
		slog.String("task_id", req.Task.ID), slog.Int("registered", len(all)),
		slog.Int("eligible", len(eligible)), slog.Int("offered", len(entries)),
		slog.Bool("ranked", ss.subset), slog.Bool("search", ss.first.search), slog.String("mode", string(s.cfg.Mode)))
	if len(entries) == 0 && !ss.first.search {
		msg := fmt.Sprintf("the ranking found none of the %d eligible tools for the task, and search rounds are off", len(eligible))
		s.log.LogAttrs(ctx, slog.LevelDebug, "tool selection: nothing ranked; no model asked",
			slog.String("task_id", req.Task.ID), slog.String("why", msg))
		ss.finish(&Result{}, &SelectionError{Kind: EmptyNoRankedTools, Message: msg})
		return ss, nil
	}
	ss.advance()
	return ss, nil
}

// Offered returns the canonical names of the tools offered in the pending
// (or, once done, the final) request.
func (ss *Session) Offered() []string { return append([]string(nil), ss.cur.names...) }

// Next returns the current action without changing state: the pending chat,
// or the final done action.
func (ss *Session) Next() Action {
	if ss.done != nil {
		return *ss.done
	}
	return Action{Kind: ActionChat, Chat: ss.pending}
}

// Done reports whether the session has finished.
func (ss *Session) Done() bool { return ss.done != nil }

// Feed gives the outcome of the pending chat (a response, or the error the
// transport returned) and returns the next action. Feeding a finished
// session returns its done action again. ctx bounds the I/O Feed does itself:
// ranking the catalog for a search round and recording feedback; cancelling
// it fails that work (a search round becomes a search failure) and leaves the
// session consistent.
func (ss *Session) Feed(ctx context.Context, resp ChatResponse, err error) Action {
	if ctx == nil {
		ctx = context.Background()
	}
	ss.io = ctx
	defer func() { ss.io = nil }()
	if ss.done != nil || ss.pending == nil {
		return ss.Next()
	}
	req := ss.pending
	ss.pending = nil
	ss.traceFed(resp, err)
	ss.att.promptTok += resp.PromptTokens
	ss.att.complTok += resp.CompletionTokens
	if err != nil {
		if next, ok := ss.adapt(req, err); ok {
			return next
		}
	}
	a := ss.att.report(req.Model, ss.now())
	if err != nil {
		a.Kind, a.Message = classify(err)
		if why := ss.cfg.unserved(req.Model); why != "" && a.Kind == KindHTTPStatus {
			a.Message += " (" + why + ")"
		}
		return ss.fail(a)
	}
	raw, search, perr := ss.readReply(resp)
	a.Repaired = ss.att.repaired
	if perr != nil {
		a.Kind, a.Message = KindParse, perr.Error()
		var te *truncatedError
		var fe *filteredError
		switch {
		case errors.As(perr, &te):
			a.Kind = KindTruncated
		case errors.As(perr, &fe):
			a.Kind = KindContentFilter
		}
		return ss.fail(a)
	}
	if len(raw) == 0 && search != "" {
		if ss.cur.search {
			return ss.searchRound(req.Model, search, a, resp)
		}
		// No round left: the model's answer is "no calls".
		a.UnansweredSearch = truncate(redact(search, ss.cfg.APIKey), maxSearchBytes)
	}
	return ss.accept(a, raw)
}

// fail records a failed attempt and moves on to the next one.
func (ss *Session) fail(a Attempt) Action {
	ss.record(a)
	ss.advance()
	return ss.Next()
}

// record appends an attempt (message redacted and bounded) and logs it.
func (ss *Session) record(a Attempt) {
	a.Message = clipMiddle(redact(a.Message, ss.cfg.APIKey), maxErrorMessage)
	ss.attempts = append(ss.attempts, a)
	ss.traceAttempt(a)
	attrs := []slog.Attr{
		slog.String("model", a.Model), slog.Int("attempt", len(ss.attempts)),
		slog.Duration("latency", a.Latency),
		slog.Int("prompt_tokens", a.PromptTokens), slog.Int("completion_tokens", a.CompletionTokens),
	}
	if a.OK {
		ss.log.LogAttrs(ss.ctx, slog.LevelInfo, "tool selection attempt succeeded",
			append(attrs, slog.Int("rejected", len(a.Rejected)))...)
		return
	}
	ss.log.LogAttrs(ss.ctx, slog.LevelWarn, "tool selection attempt failed",
		append(attrs, slog.String("kind", string(a.Kind)), slog.String("error", a.Message))...)
}

// finish ends the session and logs the decision.
func (ss *Session) finish(r *Result, err error) {
	if r.Calls == nil {
		r.Calls = []ToolCall{}
	}
	if r.Attempts == nil {
		r.Attempts = ss.attempts
	}
	if r.Offered == nil {
		r.Offered = ss.cur.names
	}
	ss.done = &Action{Kind: ActionDone, Result: r, Err: err}
	ss.traceFinish(r, err)
	if err != nil {
		// The error is returned: the caller decides whether it is one worth
		// logging, so the selector records it at debug only (each failed
		// attempt was logged at warn as it happened).
		ss.log.LogAttrs(ss.ctx, slog.LevelDebug, "tool selection: no calls; the error is returned",
			slog.String("kind", ErrorKind(err)), slog.Int("attempts", len(ss.attempts)),
			slog.Int("offered", len(ss.cur.names)), slog.String("error", err.Error()))
		return
	}
	ss.recordFeedback(r)
	tools := make([]string, len(r.Calls))
	for i, c := range r.Calls {
		tools[i] = c.Tool
	}
	ss.log.LogAttrs(ss.ctx, slog.LevelInfo, "tool selection done",
		slog.Int("kept", len(r.Calls)), slog.Int("dropped", len(r.Dropped)),
		slog.Any("tools", tools), slog.Int("offered", len(ss.cur.names)), slog.Int("attempts", len(ss.attempts)))
}

// ioContext is the context of the Feed in progress, or Begin's outside one.
func (ss *Session) ioContext() context.Context {
	if ss.io != nil {
		return ss.io
	}
	return ss.ctx
}
