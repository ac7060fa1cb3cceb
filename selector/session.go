package selector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolselect/toolselect/registry"
)

// ActionKind says what a Session wants next (Action.Kind, "action" in JSON).
type ActionKind string

// Action kinds.
const (
	// ActionChat asks the driver to send Action.Chat and Feed the outcome back.
	ActionChat ActionKind = "chat"
	// ActionDone ends the session: Action.Result and Action.Err are final.
	ActionDone ActionKind = "done"
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
	Kind ActionKind
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
	// (Config.Recorder); the calls stand.
	FeedbackError string `json:"feedback_error,omitempty"`
	// FeedbackQuery is the text a selection with calls is learned under (the
	// task description and its sub-tasks, one per line, or the query): the
	// value to withdraw it with (ToolSelector.Withdraw takes the Result
	// itself). "" when no call was returned.
	FeedbackQuery string `json:"feedback_query,omitempty"`
}

type chatJSON struct {
	Action   ActionKind `json:"action"`
	Model    string     `json:"model"`
	Dialect  string     `json:"dialect,omitempty"`
	Messages []Message  `json:"messages"`
	Params   chatParams `json:"params"`
}

type chatParams struct {
	Temperature    *float64          `json:"temperature,omitempty"`
	ResponseFormat any               `json:"response_format,omitempty"`
	TimeoutS       float64           `json:"timeout_s"`
	Tools          []json.RawMessage `json:"tools,omitempty"`
	// The dialect's fields (docs/providers.md): OpenAI's own as keywords,
	// the provider's in extra_body, as the OpenAI SDKs take them.
	MaxTokens           json.RawMessage            `json:"max_tokens,omitempty"`
	MaxCompletionTokens json.RawMessage            `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     json.RawMessage            `json:"reasoning_effort,omitempty"`
	ExtraBody           map[string]json.RawMessage `json:"extra_body,omitempty"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type doneJSON struct {
	Action ActionKind `json:"action"`
	*Result
	Error *ErrorInfo `json:"error"`
}

// MarshalJSON writes the action as documented on Action.
func (a Action) MarshalJSON() ([]byte, error) {
	switch a.Kind {
	case ActionChat:
		if a.Chat == nil {
			return nil, errors.New("chat action without a request")
		}
		c := a.Chat
		p := chatParams{
			TimeoutS:            c.Timeout.Seconds(),
			Tools:               c.Tools,
			MaxTokens:           c.Params["max_tokens"],
			MaxCompletionTokens: c.Params["max_completion_tokens"],
			ReasoningEffort:     c.Params["reasoning_effort"],
			ExtraBody:           c.ExtraBody,
		}
		if !c.OmitTemperature {
			t := c.Temperature
			p.Temperature = &t
		}
		if rf, ok := c.Params["response_format"]; ok {
			p.ResponseFormat = rf
		} else if c.ResponseFormat != "" {
			p.ResponseFormat = &responseFormat{Type: c.ResponseFormat}
		}
		return json.Marshal(chatJSON{Action: ActionChat, Model: c.Model, Dialect: c.Dialect, Messages: c.Messages, Params: p})
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
		return json.Marshal(doneJSON{Action: ActionDone, Result: &r2, Error: newErrorInfo(a.Err)})
	}
	return nil, fmt.Errorf("unknown action kind %q", a.Kind)
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

	feedback      FeedbackRecorder // Config.Recorder
	feedbackQuery string

	deadline    time.Time
	hasDeadline bool
	now         func() time.Time

	next     int // index into models of the next attempt
	pending  *ChatRequest
	attempts []Attempt
	done     *Action

	// The attempt in progress, across its search rounds.
	sentAt     time.Time // when its first round was sent
	attemptEnd time.Time // sentAt + its timeout: every round must end by then
	searches   []Search
	promptTok  int
	complTok   int
	span       trace.Span // the selection's span (telemetry.go)
	chatSpan   trace.Span // the pending request's span
	began      time.Time
	have       adaptation // the adaptations the attempt's requests carry
	adapted    []string   // their descriptions, for the attempt record
	repaired   []string   // what the reader repaired in its replies (readCalls)
	dialect    dialect    // the attempt's dialect
	replay     []Message  // a continued conversation's turns after the user prompt (DeepSeek's tool loop)
}

// offer is the tools of one request, and how the model's names map back.
type offer struct {
	entries  []*registry.Entry
	names    []string                   // canonical names, in request order
	byName   map[string]*registry.Entry // canonical and provider-mapped names
	tools    []json.RawMessage          // native mode: the `tools` entries
	search   bool                       // the model may ask for a search round
	messages []Message
}

// Begin starts a selection: it picks the offered tools (the eligible ones,
// within the token budget or ranked, see Config.Ranker) and builds the prompts.
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
		s.log.LogAttrs(ctx, slog.LevelWarn, "tool selection: no eligible tool; no model asked",
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
		s.log.LogAttrs(ctx, slog.LevelWarn, "tool selection: nothing ranked; no model asked",
			slog.String("task_id", req.Task.ID), slog.String("why", msg))
		ss.finish(&Result{}, &SelectionError{Kind: EmptyNoRankedTools, Message: msg})
		return ss, nil
	}
	ss.advance()
	return ss, nil
}

// Eligibility is the request's filter (registry.Eligibility, the one rule
// rank and the executor apply too): Caller with the shorthand fields.
func (r *Request) Eligibility() registry.Eligibility {
	return r.Caller.With(registry.Eligibility{AllowUnsafe: r.AllowUnsafe, Roles: r.Roles, Capabilities: r.Capabilities})
}

// firstOffer decides the first request's tools: a Prefilter's pick; or with
// a Ranker, every eligible tool when their view fits the token budget, else
// the top K ranked; or every eligible tool. It sets ss.rank and ss.subset.
func (ss *Session) firstOffer(ctx context.Context, s *ToolSelector, req *Request) ([]*registry.Entry, error) {
	prefilter := s.prefilter
	if req.Prefilter != nil {
		prefilter = req.Prefilter
	}
	switch {
	case prefilter != nil:
		ss.rank = func(ctx context.Context, q string) ([]*registry.Entry, error) {
			picked, err := prefilter(ctx, q, ss.eligible)
			return ss.narrow(ctx, picked), err
		}
	case s.ranker != nil:
		fits, err := s.ranker.Fits(ss.eligible, viewFormat(ss.cfg.Mode), ss.cfg.OfferTokens)
		if err != nil {
			return nil, &prefilterError{fmt.Errorf("counting the offer's tokens: %w", err)}
		}
		if fits {
			return ss.eligible, nil
		}
		ss.rank = func(ctx context.Context, q string) ([]*registry.Entry, error) {
			picked, err := s.ranker.Rank(ctx, req.Registry, q, ss.eligible, ss.cfg.TopK)
			return ss.narrow(ctx, picked), err
		}
	default:
		return ss.eligible, nil
	}
	offered, err := ss.rank(ctx, rankQuery(req))
	if err != nil {
		return nil, &prefilterError{err}
	}
	ss.subset = len(offered) < len(ss.eligible)
	return offered, nil
}

// noEligibleMessage says why nothing is eligible.
func noEligibleMessage(registered int, excluded map[registry.Ineligible]int) string {
	if registered == 0 {
		return "the registry is empty"
	}
	var why []string
	for _, k := range []struct {
		key  registry.Ineligible
		text string
	}{
		{registry.IneligibleUnsafe, "unsafe (allow_unsafe is off)"},
		{registry.IneligibleRole, "restricted to roles the caller does not hold"},
		{registry.IneligibleCapability, "lacking a required capability"},
	} {
		if n := excluded[k.key]; n > 0 {
			why = append(why, fmt.Sprintf("%d %s", n, k.text))
		}
	}
	return fmt.Sprintf("none of the %d registered tools is eligible: %s", registered, strings.Join(why, ", "))
}

// narrow keeps the eligible entries the ranking picked, once each, in
// catalog order whatever order it returned them in: the same set of tools
// then always yields the same prompt bytes, so provider prompt caches keep
// working. Picked entries that were not eligible are ignored (a ranking can
// only narrow, never widen).
func (ss *Session) narrow(ctx context.Context, picked []*registry.Entry) []*registry.Entry {
	want := make(map[*registry.Entry]bool, len(picked))
	for _, e := range picked {
		want[e] = true
	}
	out := make([]*registry.Entry, 0, len(picked))
	for _, e := range ss.eligible {
		if want[e] {
			out = append(out, e)
		}
	}
	if len(out) < len(want) {
		ss.log.LogAttrs(ctx, slog.LevelWarn, "tool selection: the ranking returned tools that were not eligible; ignored",
			slog.Int("returned", len(want)), slog.Int("kept", len(out)))
	}
	return out
}

// newOffer builds a request's tools and prompts. search offers the search
// round; note is added to the user prompt.
func (ss *Session) newOffer(entries []*registry.Entry, search bool, note string) (*offer, error) {
	o := &offer{entries: entries, names: make([]string, len(entries)),
		byName: make(map[string]*registry.Entry, 2*len(entries))}
	for i, e := range entries {
		o.names[i] = e.Name()
		o.byName[e.Name()] = e
	}
	if ss.cfg.Mode == ModeNative {
		for _, e := range entries {
			if mapped := ss.reg.ProviderName(registry.FormatOpenAI, e.Name()); mapped != e.Name() {
				if _, clash := o.byName[mapped]; !clash {
					o.byName[mapped] = e
				}
			}
		}
		// A tool of the catalog named search_tools leaves no name for the search function.
		_, clash := o.byName[SearchToolName]
		search = search && !clash
		items, err := ss.reg.ViewItems(entries, registry.FormatOpenAI)
		if err != nil {
			return nil, fmt.Errorf("tools view: %w", err)
		}
		if search {
			items = append(items, json.RawMessage(searchToolItem))
		}
		o.tools = items
	}
	o.search = search
	system, err := buildSystemPrompt(ss.cfg.Mode, ss.cfg.MaxCalls, entries, search)
	if err != nil {
		return nil, fmt.Errorf("system prompt: %w", err)
	}
	o.messages = []Message{{Role: "system", Content: system}, {Role: "user", Content: ss.user + note}}
	return o, nil
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

// advance prepares the next attempt, or finishes when none is left. Every
// attempt starts from the first offer.
func (ss *Session) advance() {
	for ss.next < len(ss.models) {
		model := ss.models[ss.next]
		ss.next++
		timeout := ss.cfg.Timeout
		if ss.hasDeadline {
			if left := ss.deadline.Sub(ss.now()); left < timeout {
				timeout = left
			}
		}
		if timeout <= 0 {
			ss.record(Attempt{Model: model, Kind: KindTimeout, Message: "the caller's deadline passed before the attempt started"})
			continue
		}
		ss.cur, ss.searches, ss.promptTok, ss.complTok = ss.first, nil, 0, 0
		ss.replay = nil
		ss.have = learnedFor(ss.cfg.learnKey(), model)
		ss.adapted, ss.repaired = nil, nil
		if ss.have != 0 {
			// Named as when they were learned: against the request they change.
			unadapted, _ := ss.request(model, 0, 0)
			ss.adapted = adaptationNames(ss.have, unadapted, "learned earlier: ")
		}
		ss.sentAt = ss.now()
		ss.attemptEnd = ss.sentAt.Add(timeout)
		ss.pending = ss.chat(model, timeout)
		ss.warnTemperature(model)
		return
	}
	ss.pending = nil
	ss.finish(&Result{}, &SelectionError{Kind: EmptyFailClosed, Attempts: ss.attempts})
}

// warnTemperature says so when the dialect does not send the temperature
// the caller set (a temperature other than the default 0): nothing silent.
func (ss *Session) warnTemperature(model string) {
	t := ss.cfg.Temperature
	if t == DefaultTemperature {
		return
	}
	what := ""
	switch ss.dialect.temperature {
	case temperatureOmit:
		what = "sends no temperature: the model takes only its own"
	case temperatureOne:
		if t != 1 {
			what = "sends temperature 1: the model takes no other"
		}
	}
	if what != "" {
		ss.log.LogAttrs(ss.ctx, slog.LevelWarn, "tool selection: the "+ss.dialect.name+" dialect "+what+"; the configured temperature is not sent",
			slog.String("model", model), slog.Float64("temperature", t), slog.String("setting", EnvTemperature))
	}
}

// chat is the request for the current offer, shaped for model's dialect
// with the attempt's adaptations; it becomes the session's pending request.
func (ss *Session) chat(model string, timeout time.Duration) *ChatRequest {
	req, d := ss.request(model, timeout, ss.have)
	ss.dialect = d
	ss.traceChat(req)
	return req
}

// request builds the request for the current offer to model, shaped for
// its dialect (returned) with the adaptations in have.
func (ss *Session) request(model string, timeout time.Duration, have adaptation) (*ChatRequest, dialect) {
	req := &ChatRequest{
		Model:       model,
		Messages:    ss.cur.messages,
		Temperature: ss.cfg.Temperature,
		Timeout:     timeout,
	}
	if len(ss.replay) > 0 {
		req.Messages = append(append([]Message(nil), ss.cur.messages[:1]...), ss.user0())
		req.Messages = append(req.Messages, ss.replay...)
	}
	if ss.cfg.Mode == ModeNative {
		req.Tools = ss.cur.tools
	} else {
		req.ResponseFormat = "json_object"
	}
	d := shape(&ss.cfg, req, callsFormat(ss.cur.search), have)
	return req, d
}

// user0 is the user prompt without a search note.
func (ss *Session) user0() Message { return Message{Role: "user", Content: ss.user} }

// adaptationNames names the adaptations in a as they change req, the
// request before them, each with prefix: one vocabulary for what an attempt
// records when it adapts ("max_tokens -> max_completion_tokens",
// "thinking: omitted") and when it starts from what was learned earlier
// ("learned earlier: thinking: omitted"). An adaptation that changes
// nothing in req is not named.
func adaptationNames(a adaptation, req *ChatRequest, prefix string) []string {
	var out []string
	name := func(s string) { out = append(out, prefix+s) }
	if a&adaptNoTemperature != 0 && !req.OmitTemperature {
		name("temperature: omitted")
	}
	if a&adaptTokenField != 0 {
		for _, f := range []string{"max_tokens", "max_completion_tokens"} {
			if _, sent := req.Params[f]; sent {
				name(f + " -> " + otherTokenField(f))
			}
		}
	}
	if a&adaptJSONSchema != 0 && req.ResponseFormat == "json_object" {
		name("response_format: json_object -> json_schema")
	}
	if a&adaptNoResponseFormat != 0 && req.ResponseFormat != "" {
		name("response_format: omitted")
	}
	if a&adaptNoReasoning != 0 {
		for _, k := range reasoningKeys {
			_, p := req.Params[k]
			_, e := req.ExtraBody[k]
			if p || e {
				name(k + ": omitted")
			}
		}
	}
	return out
}

// adapt retries the pending request once without (or with the documented
// alternative to) the field a 400 named, within the attempt's timeout, and
// remembers it for the base URL and model. ok is false when the failure is
// not such a 400.
func (ss *Session) adapt(req *ChatRequest, err error) (Action, bool) {
	var ce *ChatError
	if !errors.As(err, &ce) || ce.Kind != KindHTTPStatus || (ce.StatusCode != 400 && ce.StatusCode != 422) {
		return Action{}, false
	}
	a, ok := adaptTo(ce.Message, req, ss.have)
	if !ok {
		return Action{}, false
	}
	names := adaptationNames(a, req, "")
	what := strings.Join(names, ", ")
	left := ss.attemptEnd.Sub(ss.now())
	if left <= 0 {
		return Action{}, false
	}
	ss.have |= a
	ss.adapted = append(ss.adapted, names...)
	if rememberable(ce.Message) {
		learn(ss.cfg.learnKey(), req.Model, a)
	}
	ss.log.LogAttrs(ss.ctx, slog.LevelWarn, "tool selection: the server refused a request field; retrying without it",
		slog.String("model", req.Model), slog.String("dialect", req.Dialect), slog.String("adapted", what),
		slog.String("error", truncate(redact(ce.Message, ss.cfg.APIKey), 300)))
	ss.pending = ss.chat(req.Model, left)
	return ss.Next(), true
}

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
	ss.promptTok += resp.PromptTokens
	ss.complTok += resp.CompletionTokens
	if err != nil {
		if next, ok := ss.adapt(req, err); ok {
			return next
		}
	}
	a := Attempt{Model: req.Model, Latency: ss.now().Sub(ss.sentAt),
		PromptTokens: ss.promptTok, CompletionTokens: ss.complTok, Searches: ss.searches, Adapted: ss.adapted}
	if !ss.dialect.plain {
		a.Dialect = ss.dialect.name
	}
	if err != nil {
		a.Kind, a.Message = classify(err)
		if why := ss.cfg.unserved(req.Model); why != "" && a.Kind == KindHTTPStatus {
			a.Message += " (" + why + ")"
		}
		return ss.fail(a)
	}
	raw, search, perr := ss.readReply(resp)
	a.Repaired = ss.repaired
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

// readReply reads the calls, or the search words, out of a model's reply in
// the session's mode. A reply with neither is an error that says why
// (noAnswer), never an empty answer.
func (ss *Session) readReply(resp ChatResponse) (raw []rawCall, search string, err error) {
	if isFilterFinish(resp.FinishReason) {
		// Whatever it holds, the reply was stopped by the filter: a part of
		// an answer is no answer.
		return nil, "", filtered(resp)
	}
	content, thought := splitThinking(resp.Content)
	reasoning := resp.Reasoning + thought
	if ss.cfg.Mode == ModeNative {
		raw, err = hydrateNative(resp.ToolCalls)
		if resp.FinishReason == "length" {
			return nil, "", ss.truncated(resp, reasoning, nativeCut(resp, content, err))
		}
		raw, search = splitSearch(raw, func(name string) bool { _, ok := ss.cur.byName[name]; return ok })
		if err == nil && len(resp.ToolCalls) == 0 && strings.TrimSpace(content) == "" {
			err = ss.noAnswer(resp, reasoning, nil)
		}
		return raw, search, err
	}
	raw, search, repaired, err := readCalls(content)
	if err == nil && repaired > 0 {
		ss.repaired = append(ss.repaired, fmt.Sprintf("trailing commas removed: %d", repaired))
	}
	if err != nil && ss.cfg.APIKey != "" && strings.Contains(content, ss.cfg.APIKey) {
		// The message quotes the start of the reply; quote it redacted, so
		// that a cut inside the key cannot leave a prefix of it.
		_, _, err = parseReply(redact(content, ss.cfg.APIKey))
	}
	if err != nil {
		err = ss.noAnswer(resp, reasoning, err)
	}
	return raw, search, err
}

// accept checks the calls of attempt a against the offer and the schemas:
// a rejected call fails the attempt unless FailOpen, calls past MaxCalls are
// dropped, and the rest end the session.
func (ss *Session) accept(a Attempt, raw []rawCall) Action {
	valid, rejected := ss.check(raw)
	ss.echoable(rejected)
	if len(rejected) > 0 && !ss.cfg.FailOpen {
		a.Kind, a.Rejected = KindValidation, rejected
		a.Message = rejectedSummary(rejected)
		return ss.fail(a)
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
	ss.finish(&Result{Calls: valid, Attempts: ss.attempts, Dropped: dropped}, nil)
	return ss.Next()
}

// fail records a failed attempt and moves on to the next one.
func (ss *Session) fail(a Attempt) Action {
	ss.record(a)
	ss.advance()
	return ss.Next()
}

// maxSearchBytes bounds a model's search words, as ranked and as recorded.
const maxSearchBytes = 1024

// searchRound ranks the eligible tools with the model's words and asks the
// same model again, within what is left of the attempt's timeout. When the
// words match nothing the offer stays as it was, and the model is told so.
//
// With thinking on in a dialect that requires it (DeepSeek), a native-mode
// round continues the conversation instead: the assistant turn that asked for
// the search is sent back with its reasoning_content and the search call,
// and the note answers that call.
func (ss *Session) searchRound(model, query string, a Attempt, resp ChatResponse) Action {
	query = truncate(redact(query, ss.cfg.APIKey), maxSearchBytes)
	picked, err := ss.rank(ss.ioContext(), query)
	if err != nil {
		a.Kind, a.Message = KindSearch, fmt.Sprintf("ranking the catalog for the search %q: %v", truncate(query, 200), err)
		return ss.fail(a)
	}
	entries := ss.cur.entries
	if len(picked) > 0 {
		entries = picked
	}
	more := len(ss.searches)+1 < ss.cfg.Searches()
	next, err := ss.newOffer(entries, more, searchNote(query, len(picked) > 0))
	if err != nil {
		a.Kind, a.Message = KindSearch, err.Error()
		return ss.fail(a)
	}
	ss.cur = next
	ss.searches = append(ss.searches, Search{Query: query, Offered: next.names})
	a.Searches = ss.searches
	ss.log.LogAttrs(ss.ctx, slog.LevelInfo, "tool selection: search round",
		slog.String("model", model), slog.String("query", query),
		slog.Int("matched", len(picked)), slog.Int("offered", len(next.names)))
	left := ss.attemptEnd.Sub(ss.now())
	if left <= 0 {
		a.Kind, a.Message = KindTimeout, "the attempt's timeout ran out before the search round could be asked"
		return ss.fail(a)
	}
	if r := ss.cfg.reasoning(); ss.cfg.Mode == ModeNative && ss.dialect.replayReasoning &&
		r != ReasoningOff && r != ReasoningProvider && resp.Reasoning != "" {
		for _, tc := range resp.ToolCalls {
			if tc.Name == SearchToolName {
				ss.replay = append(ss.replay,
					Message{Role: "assistant", Content: resp.Content, ReasoningContent: resp.Reasoning, ToolCalls: []NativeCall{tc}},
					Message{Role: "tool", ToolCallID: tc.ID, Content: strings.TrimSpace(searchNote(query, len(picked) > 0))})
				break
			}
		}
	}
	ss.pending = ss.chat(model, left)
	return ss.Next()
}

// truncatedError is a reply cut at the token limit with no usable answer.
type truncatedError struct{ msg string }

func (e *truncatedError) Error() string { return e.msg }

// noAnswer explains a reply with no usable answer: cut at the token limit
// (finish_reason "length": a *truncatedError naming the limit and the tokens
// spent), or empty with reasoning text (the model thought and did not
// answer: how to turn thinking off). perr is the parse error, if any; nil
// is returned when none of these applies.
func (ss *Session) noAnswer(resp ChatResponse, reasoning string, perr error) error {
	if resp.FinishReason == "length" {
		what := "no answer"
		if perr != nil && strings.TrimSpace(resp.Content) != "" {
			what = "an unusable answer (" + perr.Error() + ")"
		}
		return ss.truncated(resp, reasoning, what)
	}
	if !knownFinish(resp.FinishReason) {
		what := "no answer"
		if perr != nil && strings.TrimSpace(resp.Content) != "" {
			what = "an unusable answer (" + perr.Error() + ")"
		}
		return parseErrorf("the reply ended with finish_reason %q, which is not a normal end (toolselect does not read it as an empty answer), with %s",
			truncate(resp.FinishReason, 64), what)
	}
	if answer, _ := splitThinking(resp.Content); strings.TrimSpace(reasoning) != "" && strings.TrimSpace(answer) == "" {
		return parseErrorf("the reply is empty: the model wrote %d bytes of reasoning and no answer (calls are never taken from reasoning); %s",
			len(reasoning), thinkingHint(ss.cfg, ss.dialect, ss.models[max(ss.next-1, 0)]))
	}
	return perr
}

// filteredError is a reply the provider's content filter stopped.
type filteredError struct{ msg string }

func (e *filteredError) Error() string { return e.msg }

// The finish reasons the reader knows (docs/providers.md, "Finish reasons"):
// normal ends, and content filters' stops. Any other is named in the
// failure of a reply without a usable answer.
var (
	normalFinish = []string{"", "stop", "length", "tool_calls", "function_call", "eos", "end_turn", "stop_sequence"}
	// filterFinish: OpenAI's and Azure's "content_filter"; Gemini's
	// FinishReason values for a stop by a safety or recitation filter.
	filterFinish = []string{"content_filter", "safety", "recitation", "blocklist", "prohibited_content", "spii", "image_safety"}
)

func knownFinish(r string) bool {
	r = strings.ToLower(strings.TrimSpace(r))
	return slices.Contains(normalFinish, r) || slices.Contains(filterFinish, r)
}

func isFilterFinish(r string) bool {
	return slices.Contains(filterFinish, strings.ToLower(strings.TrimSpace(r)))
}

// filtered is the *filteredError of a reply a content filter stopped: the
// finish reason and the categories flagged, where the provider said.
func filtered(resp ChatResponse) error {
	msg := fmt.Sprintf("the provider's content filter stopped the reply (finish_reason %q)", resp.FinishReason)
	if len(resp.Filtered) > 0 {
		msg += "; flagged: " + strings.Join(resp.Filtered, ", ")
	} else {
		msg += "; the provider named no category"
	}
	return &filteredError{msg}
}

// truncated is the *truncatedError of a reply cut at the token limit with
// what it held: it names the limit, the completion tokens spent and how much
// of them was reasoning.
func (ss *Session) truncated(resp ChatResponse, reasoning, what string) error {
	_, limit := tokenLimit(&ss.cfg, ss.dialect)
	spent := "an unreported number of"
	if resp.CompletionTokens > 0 {
		spent = fmt.Sprint(resp.CompletionTokens)
	}
	msg := fmt.Sprintf("the reply stopped at the token limit, %s, after %s completion tokens, with %s", limit, spent, what)
	if strings.TrimSpace(reasoning) != "" {
		msg += fmt.Sprintf("; %d bytes of it were reasoning: %s", len(reasoning), thinkingHint(ss.cfg, ss.dialect, ss.models[max(ss.next-1, 0)]))
	}
	return &truncatedError{msg}
}

// nativeCut says what a native reply cut at the token limit held. Such a
// reply is never taken as the answer: a call's arguments may be cut (or cut
// to valid JSON that lacks what the model meant to add), and a list of tool
// calls has no end that shows it was finished.
func nativeCut(resp ChatResponse, content string, herr error) string {
	n := len(resp.ToolCalls)
	switch {
	case herr != nil:
		return "a tool call cut short (" + herr.Error() + ")"
	case n == 0 && strings.TrimSpace(content) != "":
		return fmt.Sprintf("%d bytes of text and no tool call", len(strings.TrimSpace(content)))
	case n == 0:
		return "no answer"
	}
	return fmt.Sprintf("%d tool call(s) that parse, but a reply cut at the limit may have cut the last one short or left calls out", n)
}

// thinkingHint says how to turn thinking off for the attempt's dialect d
// and model: where no switch was sent, the exact provider value that sends
// one.
func thinkingHint(cfg Config, d dialect, model string) string {
	if cfg.reasoning() != ReasoningOff {
		return fmt.Sprintf("set %s=off to turn thinking off", EnvReasoning)
	}
	off := fmt.Sprintf("thinking was asked to be off (%s=off)", EnvReasoning)
	if d.thinking != nil {
		hint := fmt.Sprintf("%s and the %s dialect sent its switch, but the model thought anyway: raise %s, or pick a model that can stop thinking",
			off, d.name, EnvMaxTokens)
		if fam, name, ok := modelFamily(model); ok && cfg.provider() == ProviderAuto && fam == Provider(d.name) && detectProvider(cfg.BaseURL, "") == ProviderGeneric {
			hint += fmt.Sprintf("; the switch is %s's own, chosen by the model's name: if the server is not %s's API, set %s to the server it runs on (%s)",
				name, name, EnvProvider, strings.Join(providerValues(servers), ", "))
		}
		return hint
	}
	return fmt.Sprintf("%s but no thinking switch was sent (the %s dialect has none): %s", off, d.name, providerAdvice(cfg, model))
}

// servers are the providers that are servers a model runs on, whatever the model.
var servers = []Provider{ProviderVLLM, ProviderLlamaCpp, ProviderOllama, ProviderLMStudio}

// providerValues spells providers as LLM_COMMON_TOOL_SELECTION_PROVIDER takes them.
func providerValues(ps []Provider) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

// providerAdvice names the exact LLM_COMMON_TOOL_SELECTION_PROVIDER value
// that sends model a thinking switch: its family's provider, or the
// provider a shared port's default names, or the values to choose from.
func providerAdvice(cfg Config, model string) string {
	if p, name, ok := modelFamily(model); ok {
		if p == providerGPTOSS {
			return fmt.Sprintf("set %s=auto: %s models are recognised by their name", EnvProvider, name)
		}
		return fmt.Sprintf("set %s=%s (the model is %s's), or to the server it runs on (%s)",
			EnvProvider, p, name, strings.Join(providerValues(servers), ", "))
	}
	if u, err := url.Parse(cfg.BaseURL); err == nil && isLocalHost(strings.ToLower(u.Hostname())) {
		switch u.Port() {
		case "8000":
			return fmt.Sprintf("set %s=vllm if this is vLLM (port 8000 is its default), or to the server it runs on (%s)",
				EnvProvider, strings.Join(providerValues(servers), ", "))
		case "8080":
			return fmt.Sprintf("set %s=llamacpp if this is llama.cpp's server (port 8080 is its default), or to the server it runs on (%s)",
				EnvProvider, strings.Join(providerValues(servers), ", "))
		}
	}
	var withSwitch []Provider
	for _, p := range providers {
		c := Config{Provider: p}
		if p != ProviderAuto && dialectFor(&c, model).thinking != nil {
			withSwitch = append(withSwitch, p)
		}
	}
	return fmt.Sprintf("set %s to the server's provider, one of %s", EnvProvider, strings.Join(providerValues(withSwitch), ", "))
}

// check resolves each call against the offered tools and validates its args.
func (ss *Session) check(raw []rawCall) (valid []ToolCall, rejected []DroppedCall) {
	valid = make([]ToolCall, 0, len(raw))
	for _, c := range raw {
		e, ok := ss.cur.byName[c.Tool]
		if !ok {
			known, exists := ss.reg.Lookup(c.Tool)
			switch {
			case exists && ss.cur.byName[known.Name()] == known:
				// A provider-mapped name used in JSON mode still resolves to an offered tool.
				e = known
			case exists:
				why, msg := ss.notOffered(known)
				rejected = append(rejected, DroppedCall{Tool: c.Tool, Args: c.Args, Reason: DropNotOffered, Rule: why,
					Message: fmt.Sprintf("tool %q was not offered: %s", known.Name(), msg)})
				continue
			default:
				rejected = append(rejected, DroppedCall{Tool: c.Tool, Args: c.Args, Reason: DropUnknownTool,
					Message: fmt.Sprintf("tool %q is not registered", c.Tool)})
				continue
			}
		}
		checked, err := e.ParseArgs(c.Args)
		if err != nil {
			rejected = append(rejected, DroppedCall{Tool: c.Tool, Args: c.Args, Reason: DropInvalidArgs, Message: err.Error()})
			continue
		}
		// The call carries the value that was validated, not the model's bytes.
		valid = append(valid, ToolCall{Tool: e.Name(), Args: checked, Reasoning: c.Reasoning})
	}
	return valid, rejected
}

// notOffered says the one reason a registered tool was not in the offer:
// the caller's eligibility rule (unsafe, role, capability) or, for an
// eligible tool, that the offer was narrowed for the task.
func (ss *Session) notOffered(e *registry.Entry) (string, string) {
	t := e.Def()
	switch why := ss.rule.Check(t); why {
	case registry.IneligibleUnsafe:
		return string(why), "it is marked unsafe and the request does not allow unsafe tools"
	case registry.IneligibleRole:
		return string(why), fmt.Sprintf("it is for the roles %v, and the caller holds none of them", t.Roles)
	case registry.IneligibleCapability:
		for _, c := range ss.rule.Capabilities {
			if !t.HasCapability(c) {
				return string(why), fmt.Sprintf("it does not declare the capability %q the request requires", c)
			}
		}
		return string(why), "it lacks a capability the request requires"
	}
	return NotInOffer, fmt.Sprintf("the caller may use it, but only %d of the %d eligible tools were offered for this task and it was not among them", len(ss.cur.names), len(ss.eligible))
}

// echoable makes rejected calls safe to report in attempts, results and
// log records: the API key is removed (a server may echo the Authorization
// header into a call; args that would no longer be JSON become {}), and args
// are clipped to the registry's depth and size limits (registry.ClipArgs),
// so that any JSON reader, Python's json included, can read the output.
func (ss *Session) echoable(rejected []DroppedCall) {
	key := ss.cfg.APIKey
	limits := ss.reg.Limits()
	for i := range rejected {
		d := &rejected[i]
		if key != "" {
			d.Tool, d.Message = redact(d.Tool, key), redact(d.Message, key)
			if strings.Contains(string(d.Args), key) {
				d.Args = json.RawMessage(redact(string(d.Args), key))
				if !json.Valid(d.Args) {
					d.Args = json.RawMessage("{}")
				}
			}
		}
		d.Tool = truncate(d.Tool, 256)
		d.Args = limits.ClipArgs(d.Args)
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
		ss.log.LogAttrs(ss.ctx, slog.LevelError, "tool selection failed closed: no calls returned",
			slog.Int("attempts", len(ss.attempts)), slog.Int("offered", len(ss.cur.names)), slog.String("error", err.Error()))
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
