package selector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/toolselect/toolselect/registry"
)

// Action kinds.
const (
	// ActionChat asks the driver to send Action.Chat and Feed the outcome back.
	ActionChat = "chat"
	// ActionDone ends the session: Action.Result and Action.Err are final.
	ActionDone = "done"
)

// Action is what a Session wants next: a chat completion to be performed by
// the driver, or the final outcome. It marshals to the JSON the C ABI hands
// to Python:
//
//	{"action":"chat","model":"...","messages":[{"role","content"}],
//	 "params":{"temperature":0,"response_format":{"type":"json_object"},"timeout_s":30,"tools":[...]}}
//	{"action":"done","calls":[...],"attempts":[...],"dropped":[...],"offered":[...],"error":null|{"kind","message"}}
type Action struct {
	// Kind is ActionChat or ActionDone.
	Kind string
	// Chat is the request to send (ActionChat only).
	Chat *ChatRequest
	// Result is the outcome (ActionDone only; never nil then, Calls empty on failure).
	Result *Result
	// Err is nil on success, else a *SelectionError (ActionDone only).
	Err error
}

// Result is the outcome of a selection.
type Result struct {
	// Calls are the checked calls, at most Config.MaxCalls, in the model's order.
	Calls []ToolCall `json:"calls"`
	// Attempts lists every model call, in order.
	Attempts []Attempt `json:"attempts"`
	// Dropped lists the calls of the successful attempt that were not returned
	// (invalid ones when fail-open, and any beyond MaxCalls).
	Dropped []DroppedCall `json:"dropped,omitempty"`
	// Offered are the canonical names of the tools offered to the model.
	Offered []string `json:"offered"`
	// FeedbackError says why recording the selection as feedback failed
	// (WithFeedback); the calls stand.
	FeedbackError string `json:"feedback_error,omitempty"`
}

type chatJSON struct {
	Action   string     `json:"action"`
	Model    string     `json:"model"`
	Messages []Message  `json:"messages"`
	Params   chatParams `json:"params"`
}

type chatParams struct {
	Temperature    float64           `json:"temperature"`
	ResponseFormat *responseFormat   `json:"response_format,omitempty"`
	TimeoutS       float64           `json:"timeout_s"`
	Tools          []json.RawMessage `json:"tools,omitempty"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type doneJSON struct {
	Action string `json:"action"`
	*Result
	Error *ErrorInfo `json:"error"`
}

// MarshalJSON writes the action as documented on Action.
func (a Action) MarshalJSON() ([]byte, error) {
	switch a.Kind {
	case ActionChat:
		if a.Chat == nil {
			return nil, errors.New("selector: chat action without a request")
		}
		p := chatParams{
			Temperature: a.Chat.Temperature,
			TimeoutS:    a.Chat.Timeout.Seconds(),
			Tools:       a.Chat.Tools,
		}
		if a.Chat.ResponseFormat != "" {
			p.ResponseFormat = &responseFormat{Type: a.Chat.ResponseFormat}
		}
		return json.Marshal(chatJSON{Action: ActionChat, Model: a.Chat.Model, Messages: a.Chat.Messages, Params: p})
	case ActionDone:
		r := a.Result
		if r == nil {
			r = &Result{}
		}
		r2 := *r
		if r2.Calls == nil {
			r2.Calls = []ToolCall{}
		}
		if r2.Attempts == nil {
			r2.Attempts = []Attempt{}
		}
		if r2.Offered == nil {
			r2.Offered = []string{}
		}
		return json.Marshal(doneJSON{Action: ActionDone, Result: &r2, Error: NewErrorInfo(a.Err)})
	}
	return nil, fmt.Errorf("selector: unknown action kind %q", a.Kind)
}

// JSON is MarshalJSON for callers that cannot handle an error: an action that
// cannot be marshaled (none the Session produces) yields an error document.
func (a Action) JSON() []byte {
	b, err := a.MarshalJSON()
	if err != nil {
		b, _ = json.Marshal(map[string]any{"action": ActionDone, "calls": []any{}, "attempts": []any{},
			"error": ErrorInfo{Kind: "internal", Message: err.Error()}})
	}
	return b
}

// Session is one selection as a sans-I/O state machine: it says which chat
// completion to perform (Next), is fed the outcome (Feed), and ends with the
// calls or a *SelectionError. It holds the whole policy (offering, prompts,
// parsing, checks, cap, fallback, fail-closed); Select drives it with a
// ChatClient, and the C ABI lets Python drive it with its own client.
//
// A Session is not safe for concurrent use.
type Session struct {
	cfg    Config
	log    *slog.Logger
	ctx    context.Context // for log records only
	reg    *registry.Registry
	models []string

	offered  []*registry.Entry
	names    []string                   // canonical names of offered
	byName   map[string]*registry.Entry // canonical and provider-mapped names of offered tools
	messages []Message
	tools    []json.RawMessage // native mode

	feedback      FeedbackRecorder // WithFeedback
	feedbackQuery string

	deadline    time.Time
	hasDeadline bool
	now         func() time.Time

	next     int // index into models of the next attempt
	pending  *ChatRequest
	sentAt   time.Time
	attempts []Attempt
	done     *Action
}

// Begin starts a selection: it picks the offered tools (eligible ones, then
// the Prefilter) and builds the prompts. The first action is a chat (or done
// at once when no tool may be offered). ctx's deadline bounds every attempt's
// timeout; ctx is also passed to the Prefilter and to log records. An error
// means the request itself is unusable (ErrBadRequest) or the prefilter failed.
func (s *ToolSelector) Begin(ctx context.Context, req Request) (*Session, error) {
	if req.Registry == nil {
		return nil, fmt.Errorf("%w: no registry", ErrBadRequest)
	}
	if strings.TrimSpace(req.Task.Description) == "" && strings.TrimSpace(req.Query) == "" {
		return nil, fmt.Errorf("%w: the task has no description and there is no query", ErrBadRequest)
	}
	ss := &Session{cfg: s.cfg, log: s.log, ctx: context.WithoutCancel(ctx), reg: req.Registry, now: s.now}
	ss.models = []string{s.cfg.Model}
	if s.cfg.FallbackModel != "" {
		ss.models = append(ss.models, s.cfg.FallbackModel)
	}
	ss.deadline, ss.hasDeadline = ctx.Deadline()
	ss.feedback, ss.feedbackQuery = s.feedback, feedbackQuery(&req)

	eligible := eligibleEntries(req)
	offered := eligible
	prefilter := s.prefilter
	if req.Prefilter != nil {
		prefilter = req.Prefilter
	}
	if prefilter != nil && len(eligible) > 0 {
		picked, err := prefilter(ctx, rankQuery(&req), eligible)
		if err != nil {
			return nil, &prefilterError{err}
		}
		offered = narrow(eligible, picked)
		if len(offered) < len(picked) {
			s.log.LogAttrs(ctx, slog.LevelWarn, "tool selection: prefilter returned tools that were not eligible; ignored",
				slog.Int("returned", len(picked)), slog.Int("kept", len(offered)))
		}
	}
	ss.offered = offered
	ss.names = make([]string, len(offered))
	ss.byName = make(map[string]*registry.Entry, 2*len(offered))
	for i, e := range offered {
		ss.names[i] = e.Name()
		ss.byName[e.Name()] = e
	}
	if s.cfg.Mode == ModeNative && len(offered) > 0 {
		for _, e := range offered {
			if mapped := req.Registry.ProviderName(registry.FormatOpenAI, e.Name()); mapped != e.Name() {
				if _, clash := ss.byName[mapped]; !clash {
					ss.byName[mapped] = e
				}
			}
		}
		items, err := req.Registry.ViewItems(offered, registry.FormatOpenAI)
		if err != nil {
			return nil, fmt.Errorf("selector: tools view: %w", err)
		}
		ss.tools = items
	}

	system, err := buildSystemPrompt(s.cfg.Mode, s.cfg.MaxCalls, offered)
	if err != nil {
		return nil, fmt.Errorf("selector: system prompt: %w", err)
	}
	user, err := buildUserPrompt(&req)
	if err != nil {
		return nil, err
	}
	ss.messages = []Message{{Role: "system", Content: system}, {Role: "user", Content: user}}

	s.log.LogAttrs(ctx, slog.LevelDebug, "tool selection: begin",
		slog.String("task_id", req.Task.ID), slog.Int("registered", req.Registry.Len()),
		slog.Int("eligible", len(eligible)), slog.Int("offered", len(offered)), slog.String("mode", s.cfg.Mode))
	if len(offered) == 0 {
		s.log.LogAttrs(ctx, slog.LevelWarn, "tool selection: no tool may be offered; returning no calls without asking a model",
			slog.String("task_id", req.Task.ID), slog.Int("registered", req.Registry.Len()))
		ss.finish(&Result{}, nil)
		return ss, nil
	}
	ss.advance()
	return ss, nil
}

// eligibleEntries applies the request's safety, role and capability filters.
func eligibleEntries(req Request) []*registry.Entry {
	all := req.Registry.Entries()
	out := make([]*registry.Entry, 0, len(all))
	for _, e := range all {
		t := e.Def()
		if !t.Safe && !req.AllowUnsafe {
			continue
		}
		if !t.AllowedFor(req.Roles) {
			continue
		}
		ok := true
		for _, c := range req.Capabilities {
			if !t.HasCapability(c) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, e)
		}
	}
	return out
}

// narrow keeps the eligible entries the prefilter picked, once each, in
// catalog order whatever order the prefilter returned: the same set of tools
// then always yields the same prompt bytes, so provider prompt caches keep
// working. Picked entries that were not eligible are ignored.
func narrow(eligible, picked []*registry.Entry) []*registry.Entry {
	want := make(map[*registry.Entry]bool, len(picked))
	for _, e := range picked {
		want[e] = true
	}
	out := make([]*registry.Entry, 0, len(picked))
	for _, e := range eligible {
		if want[e] {
			out = append(out, e)
		}
	}
	return out
}

// Offered returns the canonical names of the tools offered to the model.
func (ss *Session) Offered() []string { return append([]string(nil), ss.names...) }

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

// advance prepares the next attempt, or finishes when none is left.
func (ss *Session) advance() {
	for ss.next < len(ss.models) {
		model := ss.models[ss.next]
		ss.next++
		timeout := time.Duration(ss.cfg.TimeoutS) * time.Second
		if ss.hasDeadline {
			if left := ss.deadline.Sub(ss.now()); left < timeout {
				timeout = left
			}
		}
		if timeout <= 0 {
			ss.record(Attempt{Model: model, Kind: KindTimeout, Message: "the caller's deadline passed before the attempt started"})
			continue
		}
		req := &ChatRequest{
			Model:       model,
			Messages:    ss.messages,
			Temperature: ss.cfg.Temperature,
			Timeout:     timeout,
		}
		if ss.cfg.Mode == ModeNative {
			req.Tools = ss.tools
		} else {
			req.ResponseFormat = "json_object"
		}
		ss.pending = req
		ss.sentAt = ss.now()
		return
	}
	ss.pending = nil
	ss.finish(&Result{}, &SelectionError{Attempts: ss.attempts})
}

// Feed gives the outcome of the pending chat (a response, or the error the
// transport returned) and returns the next action. Feeding a finished
// session returns its done action again.
func (ss *Session) Feed(resp ChatResponse, err error) Action {
	if ss.done != nil || ss.pending == nil {
		return ss.Next()
	}
	req := ss.pending
	ss.pending = nil
	a := Attempt{Model: req.Model, Latency: ss.now().Sub(ss.sentAt),
		PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens}
	if err != nil {
		a.Kind, a.Message = classify(err)
		ss.record(a)
		ss.advance()
		return ss.Next()
	}
	var raw []rawCall
	var perr error
	if ss.cfg.Mode == ModeNative {
		raw, perr = hydrateNative(resp.ToolCalls)
	} else {
		raw, perr = parseReply(resp.Content)
		if perr != nil && ss.cfg.APIKey != "" && strings.Contains(resp.Content, ss.cfg.APIKey) {
			// The message quotes the start of the reply; quote it redacted, so
			// that a cut inside the key cannot leave a prefix of it.
			_, perr = parseReply(redact(resp.Content, ss.cfg.APIKey))
		}
	}
	if perr != nil {
		a.Kind, a.Message = KindParse, perr.Error()
		ss.record(a)
		ss.advance()
		return ss.Next()
	}
	valid, rejected := ss.check(raw)
	ss.redactRejected(rejected)
	if len(rejected) > 0 && !ss.cfg.FailOpen {
		a.Kind, a.Rejected = KindValidation, rejected
		a.Message = rejectedSummary(rejected)
		ss.record(a)
		ss.advance()
		return ss.Next()
	}
	dropped := rejected
	if len(valid) > ss.cfg.MaxCalls {
		for _, c := range valid[ss.cfg.MaxCalls:] {
			dropped = append(dropped, DroppedCall{Tool: c.Tool, Args: c.Args, Reason: DropMaxCalls,
				Message: fmt.Sprintf("beyond the first %d calls (max_calls)", ss.cfg.MaxCalls)})
		}
		valid = valid[:ss.cfg.MaxCalls]
	}
	a.OK = true
	a.Rejected = rejected
	ss.record(a)
	for _, d := range dropped {
		level := slog.LevelWarn
		if d.Reason == DropMaxCalls {
			level = slog.LevelInfo
		}
		ss.log.LogAttrs(ss.ctx, level, "tool selection: call dropped",
			slog.String("model", a.Model), slog.String("tool", d.Tool),
			slog.String("reason", string(d.Reason)), slog.String("why", d.Message))
	}
	ss.finish(&Result{Calls: valid, Attempts: ss.attempts, Dropped: dropped, Offered: ss.names}, nil)
	return ss.Next()
}

// check resolves each call against the offered tools and validates its args.
func (ss *Session) check(raw []rawCall) (valid []ToolCall, rejected []DroppedCall) {
	valid = make([]ToolCall, 0, len(raw))
	for _, c := range raw {
		e, ok := ss.byName[c.Tool]
		if !ok {
			known, exists := ss.reg.Lookup(c.Tool)
			switch {
			case exists && ss.byName[known.Name()] == known:
				// A provider-mapped name used in JSON mode still resolves to an offered tool.
				e = known
			case exists:
				rejected = append(rejected, DroppedCall{Tool: c.Tool, Args: c.Args, Reason: DropNotOffered,
					Message: fmt.Sprintf("tool %q was not offered (unsafe, not allowed for the caller's roles, lacking a required capability, or filtered out)", known.Name())})
				continue
			default:
				rejected = append(rejected, DroppedCall{Tool: c.Tool, Args: c.Args, Reason: DropUnknownTool,
					Message: fmt.Sprintf("tool %q is not registered", c.Tool)})
				continue
			}
		}
		if err := e.ValidateArgs(c.Args); err != nil {
			rejected = append(rejected, DroppedCall{Tool: c.Tool, Args: c.Args, Reason: DropInvalidArgs, Message: err.Error()})
			continue
		}
		valid = append(valid, ToolCall{Tool: e.Name(), Args: c.Args, Reasoning: c.Reasoning})
	}
	return valid, rejected
}

// redactRejected removes the API key from rejected calls, which are
// reported in attempts, results and log records (a server may echo the
// Authorization header into a call). Args that would no longer be JSON
// become {}.
func (ss *Session) redactRejected(rejected []DroppedCall) {
	key := ss.cfg.APIKey
	if key == "" {
		return
	}
	for i := range rejected {
		d := &rejected[i]
		d.Tool, d.Message = redact(d.Tool, key), redact(d.Message, key)
		if strings.Contains(string(d.Args), key) {
			d.Args = json.RawMessage(redact(string(d.Args), key))
			if !json.Valid(d.Args) {
				d.Args = json.RawMessage("{}")
			}
		}
	}
}

func rejectedSummary(rejected []DroppedCall) string {
	parts := make([]string, 0, len(rejected))
	for _, r := range rejected {
		parts = append(parts, fmt.Sprintf("%s: %s", r.Reason, r.Message))
	}
	return fmt.Sprintf("%d invalid call(s) with fail_closed: %s", len(rejected), strings.Join(parts, "; "))
}

// record appends an attempt (message redacted and bounded) and logs it.
func (ss *Session) record(a Attempt) {
	a.Message = truncate(redact(a.Message, ss.cfg.APIKey), 1024)
	ss.attempts = append(ss.attempts, a)
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
		r.Offered = ss.names
	}
	ss.done = &Action{Kind: ActionDone, Result: r, Err: err}
	if err != nil {
		ss.log.LogAttrs(ss.ctx, slog.LevelError, "tool selection failed closed: no calls returned",
			slog.Int("attempts", len(ss.attempts)), slog.Int("offered", len(ss.names)), slog.String("error", err.Error()))
		return
	}
	ss.recordFeedback(r)
	tools := make([]string, len(r.Calls))
	for i, c := range r.Calls {
		tools[i] = c.Tool
	}
	ss.log.LogAttrs(ss.ctx, slog.LevelInfo, "tool selection done",
		slog.Int("kept", len(r.Calls)), slog.Int("dropped", len(r.Dropped)),
		slog.Any("tools", tools), slog.Int("offered", len(ss.names)), slog.Int("attempts", len(ss.attempts)))
}
