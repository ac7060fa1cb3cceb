package selector

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// ToolSelector asks a model which registered tools a task needs and returns
// only calls that name an offered tool with arguments that validate. It is
// safe for concurrent use.
type ToolSelector struct {
	client    ChatClient
	cfg       Config
	log       *slog.Logger
	prefilter Prefilter
	feedback  FeedbackRecorder
	ranker    Ranker
	now       func() time.Time
}

// New returns a ToolSelector that talks to the model through client. A nil
// cfg means the defaults; every zero field of cfg takes its default (see
// Config). client may be nil when the selector is only used through Sessions
// driven by the caller.
func New(client ChatClient, cfg *Config) (*ToolSelector, error) {
	c := defaultConfig()
	if cfg != nil {
		c = cfg.withDefaults()
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.unknownEndpoint() {
		c.endpoint = fmt.Sprintf("own client #%d (base URL unknown)", ownClients.Add(1))
	}
	s := &ToolSelector{client: client, cfg: c, log: c.Logger, prefilter: c.Prefilter, feedback: c.Recorder, ranker: c.Ranker, now: c.now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, w := range c.envWarnings {
		s.log.Warn("tool selection: an environment variable names no setting", slog.String("why", w))
	}
	for _, m := range []string{c.Model, c.FallbackModel} {
		if why := c.unserved(m); why != "" {
			s.log.Warn("tool selection: this model and endpoint cannot work together", slog.String("why", why))
		}
	}
	if s.now == nil {
		s.now = time.Now
	}
	if c.Feedback != "" && s.feedback == nil {
		return nil, &ConfigError{Var: envOf("feedback"), Field: "Feedback", Value: redactURL(c.Feedback), Problem: "set without a recorder",
			Want: "Config.Recorder (a recorder of that store: rank/feedbackstore.OpenLearner), or unset"}
	}
	return s, nil
}

// Config returns the effective configuration (defaults filled in).
func (s *ToolSelector) Config() Config { return s.cfg }

// SelectToolCalls returns the checked calls for the request: at most
// MaxCalls, in the model's order, possibly none. When every attempt failed it
// returns no calls and a *SelectionError (errors.Is(err, ErrFailClosed)).
func (s *ToolSelector) SelectToolCalls(ctx context.Context, req Request) ([]ToolCall, error) {
	r, err := s.Select(ctx, req)
	if err != nil {
		return []ToolCall{}, err
	}
	return r.Calls, nil
}

// Select is SelectToolCalls with the details: every attempt, the dropped
// calls and the offered tools. The Result is never nil; on error its Calls
// are empty. Errors are a *SelectionError, ErrBadRequest, ErrNoClient, a
// prefilter failure, or a *ConfigError naming the base URL and API key
// settings when the client of [NewOpenAIClient] would send to api.openai.com
// without a key (returned before any request).
func (s *ToolSelector) Select(ctx context.Context, req Request) (*Result, error) {
	if s.client == nil {
		return &Result{Calls: []ToolCall{}}, s.rejected(ctx, s.now(), ErrNoClient)
	}
	if c, ok := s.client.(*openAIClient); ok && c.unusable != nil {
		return &Result{Calls: []ToolCall{}}, s.rejected(ctx, s.now(), c.unusable)
	}
	ss, err := s.Begin(ctx, req)
	if err != nil {
		return &Result{Calls: []ToolCall{}}, err
	}
	act := ss.Next()
	for act.Kind == ActionChat {
		if err := ctx.Err(); err != nil {
			act = ss.Feed(ctx, ChatResponse{}, err)
			continue
		}
		actx, cancel := context.WithTimeout(ctx, act.Chat.Timeout)
		resp, err := s.client.Chat(ss.chatContext(actx), *act.Chat)
		cancel()
		act = ss.Feed(ctx, resp, err)
	}
	return act.Result, act.Err
}
