package capi

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/toolselect/toolselect/internal/strictjson"
	"log/slog"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolselect/toolselect/internal/jsonscan"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/rank/feedbackstore"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// The library never logs: a host process (Python) logs the attempts it gets
// back in every result, with its own logging system.
var quiet = slog.New(slog.DiscardHandler)

// newClient builds the built-in HTTP transport; a variable so tests can swap it.
var newClient = func(cfg selector.Config) (selector.ChatClient, error) {
	return selector.NewOpenAIClient(&cfg, nil)
}

// ConfigSchema describes every selector setting (selector.ConfigSchema): JSON
// name, type, default, bounds, choices, environment variables. Bindings read
// their configuration rules from it instead of restating them.
func ConfigSchema() Result { return Ok(selector.ConfigSchema()) }

// SelectorNew creates a selector from a JSON config (see selector.ConfigFromJSON:
// missing keys take their defaults, unknown keys and bad values are errors).
// The built-in OpenAI-compatible client is created from base_url and api_key.
// The offer follows the budget (offer_tokens, top_k, max_searches) with
// rank's bm25 ranking, unless a request's "top_k" overrides it.
func SelectorNew(cfgJSON []byte, present bool) Result {
	if r := JSON("config_json", cfgJSON, present, nil); r != nil {
		return *r
	}
	cfgJSON, ownClient, err := takeOwnClient(cfgJSON)
	if err != nil {
		return Fail(ErrArgument, "config_json: %v", err)
	}
	cfg, err := selector.ConfigFromJSON(cfgJSON)
	if err != nil {
		return Fail(ErrArgument, "config_json: %v", err)
	}
	cfg.OwnClient = ownClient
	client, err := newClient(cfg)
	if err != nil {
		return Fail(ErrArgument, "config_json: %v", err)
	}
	l, err := openFeedback(cfg)
	if err != nil {
		return Fail(ErrArgument, "config_json: feedback: %v", err)
	}
	cfg.Logger = quiet
	var ranked rank.Options
	if l != nil {
		ranked.Feedback = l.Feedback()
		cfg.Recorder = l
	}
	cfg.Ranker = &rank.Offering{Options: ranked}
	s, err := selector.New(client, &cfg)
	if err != nil {
		if l != nil {
			closeFeedback(l)
		}
		return Fail(ErrArgument, "config_json: %v", err)
	}
	if l != nil {
		learners.Store(s, l)
	}
	return Ok(map[string]uint64{"handle": table.add(KindSelector, s)})
}

// takeOwnClient takes "own_client" out of a selector's config_json: not a
// setting but what the selector is for (selector.Config.OwnClient): true
// when the caller's own client sends its sessions' requests, to base_url, or
// to an endpoint the caller cannot name when base_url is empty.
func takeOwnClient(cfgJSON []byte) ([]byte, bool, error) {
	var twice *strictjson.KeyError
	if err := strictjson.Check(cfgJSON, nil); errors.As(err, &twice) {
		return nil, false, err // a name given twice: which one counts is not guessed
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(cfgJSON, &m) != nil {
		return cfgJSON, false, nil // not an object: ConfigFromJSON says so
	}
	raw, ok := m["own_client"]
	if !ok {
		return cfgJSON, false, nil
	}
	var own bool
	if err := json.Unmarshal(raw, &own); err != nil || jsonscan.Kind(raw) == "null" {
		return nil, false, errors.New(`"own_client" must be true or false`)
	}
	delete(m, "own_client")
	out, err := json.Marshal(m)
	return out, own, err
}

// SelectorClose releases a selector handle (and its feedback store).
func SelectorClose(h uint64) Result {
	v, r := table.get(h, KindSelector)
	res := table.remove(h, KindSelector)
	if r == nil && res.Code == OK {
		if l, ok := learners.LoadAndDelete(v.(*selector.ToolSelector)); ok {
			closeFeedback(l.(*feedbackstore.Learner))
		}
	}
	return res
}

// requestJSON is selector.Request on the wire, plus "top_k", which overrides
// the selector's offer budget for this request (as select --k does): above
// 0, only the top_k tools the bm25 ranking puts first for the request's
// query (or its task and sub-tasks) are offered, in catalog order, with the
// prerequisites of the best ones counted among them; 0 offers every eligible
// tool; absent follows the budget.
type requestJSON struct {
	selector.Request
	TopK *int `json:"top_k"`
	// Traceparent and Tracestate carry the caller's W3C trace context
	// (Python's current span, when OpenTelemetry is imported there): the
	// selection's spans continue that trace.
	Traceparent string `json:"traceparent"`
	Tracestate  string `json:"tracestate"`
	// Rules are the caller's per-tool allow, ask and deny patterns
	// (registry.ToolRules, as authorize's policy_json takes them): a tool
	// a deny rule names is never offered, an unsafe one an allow or ask
	// rule names is, as registry.Eligibility.Check decides with them.
	Rules registry.ToolRules `json:"rules"`
}

// traceContext is ctx continuing the caller's trace context, if any.
func (in *requestJSON) traceContext(ctx context.Context) context.Context {
	if in.Traceparent == "" {
		return ctx
	}
	carrier := propagation.MapCarrier{"traceparent": in.Traceparent}
	if in.Tracestate != "" {
		carrier["tracestate"] = in.Tracestate
	}
	return propagation.TraceContext{}.Extract(ctx, carrier)
}

// offerAll is the prefilter of "top_k": 0.
func offerAll(_ context.Context, _ string, eligible []*registry.Entry) ([]*registry.Entry, error) {
	return eligible, nil
}

// request decodes a selection request and resolves its handles.
func request(sel, reg uint64, req []byte, present bool) (*selector.ToolSelector, selector.Request, context.Context, *Result) {
	var in requestJSON
	v, r := table.get(sel, KindSelector)
	if r != nil {
		return nil, in.Request, nil, r
	}
	rg, r := getRegistry(reg)
	if r != nil {
		return nil, in.Request, nil, r
	}
	if r := Strict("request_json", req, present, &in); r != nil {
		return nil, in.Request, nil, r
	}
	out := in.Request
	if err := in.Rules.Validate(); err != nil {
		r := Fail(ErrArgument, "request_json: rules.%s", err)
		return nil, out, nil, &r
	}
	out.Caller.Rules = in.Rules // Caller is not on the wire: the rules are all it holds
	if in.TopK != nil {
		if *in.TopK < 0 || *in.TopK > selector.MaxTopK {
			r := Fail(ErrArgument, "request_json: top_k must be from 0 (every eligible tool) to %d, got %d", selector.MaxTopK, *in.TopK)
			return nil, out, nil, &r
		}
		out.Prefilter = offerAll
		if *in.TopK > 0 {
			o := &rank.Options{MaxCandidates: *in.TopK}
			if l := learnerOf(v.(*selector.ToolSelector)); l != nil {
				o.Feedback = l.Feedback()
			}
			out.Prefilter = rank.For(rg).Prefilter(o)
		}
	}
	out.Registry = rg
	return v.(*selector.ToolSelector), out, in.traceContext(context.Background()), nil
}

// SelectorSelect runs a selection with the selector's HTTP client. cancel is
// 0 or a cancel token handle. A failed selection is OK with a non-null "error"
// in the body; a request the selector cannot use is ErrArgument; a cancelled
// call is ErrCanceled.
func SelectorSelect(sel, reg uint64, req []byte, present bool, cancel uint64) Result {
	s, rq, ctx, r := request(sel, reg, req, present)
	if r != nil {
		return *r
	}
	if cancel != 0 {
		v, r := table.get(cancel, KindCancel)
		if r != nil {
			return *r
		}
		ctx = trace.ContextWithRemoteSpanContext(v.(*token).ctx, trace.SpanContextFromContext(ctx))
	}
	res, err := s.Select(ctx, rq)
	if ctx.Err() != nil {
		return failDetail(ErrCanceled, json.RawMessage(selector.Action{Kind: selector.ActionDone, Result: res, Err: err}.JSON()),
			"the selection was cancelled")
	}
	if err != nil && !errors.Is(err, selector.ErrFailClosed) {
		return Fail(ErrArgument, "%v", err)
	}
	return Result{Code: OK, Body: selector.Action{Kind: selector.ActionDone, Result: res, Err: err}.JSON()}
}

// session serialises use of a selector.Session, which is not safe for concurrent use.
type session struct {
	mu sync.Mutex
	ss *selector.Session
}

// SessionBegin starts a sans-I/O selection; the body is the first action with
// "session": the new handle.
func SessionBegin(sel, reg uint64, req []byte, present bool) Result {
	s, rq, ctx, r := request(sel, reg, req, present)
	if r != nil {
		return *r
	}
	ss, err := s.Begin(ctx, rq)
	if err != nil {
		return Fail(ErrArgument, "%v", err)
	}
	h := table.add(KindSession, &session{ss: ss})
	act := ss.Next().JSON()
	// Splice "session":H into the action object.
	body := make([]byte, 0, len(act)+32)
	body = append(body, `{"session":`...)
	body = strconv.AppendUint(body, h, 10)
	if len(act) > 2 {
		body = append(body, ',')
	}
	body = append(body, act[1:]...)
	return Result{Code: OK, Body: body}
}

// SessionFeed gives the session the outcome of its pending chat and returns
// the next action. Feeding a finished session returns its done action again.
func SessionFeed(h uint64, reply []byte, present bool) Result {
	v, r := table.get(h, KindSession)
	if r != nil {
		return *r
	}
	if r := JSON("reply_json", reply, present, nil); r != nil {
		return *r
	}
	s := v.(*session)
	s.mu.Lock()
	defer s.mu.Unlock()
	// The C export takes no cancel token: a feed's own I/O is the search
	// ranking (in memory) and the feedback write, which a store bounds.
	act, err := s.ss.FeedJSON(context.Background(), reply)
	if err != nil {
		return Fail(ErrArgument, "reply_json: %v", err)
	}
	return Result{Code: OK, Body: act.JSON()}
}

// SessionClose releases a session handle.
func SessionClose(h uint64) Result { return table.remove(h, KindSession) }

// token is a cancel token: cancelling it cancels every call that uses it.
type token struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// CancelNew creates a cancel token.
func CancelNew() Result {
	ctx, cancel := context.WithCancelCause(context.Background())
	t := &token{ctx: ctx, cancel: func() { cancel(errors.New("cancelled by the caller")) }}
	return Ok(map[string]uint64{"handle": table.add(KindCancel, t)})
}

// Cancel cancels a token (idempotent while the token is open).
func Cancel(h uint64) Result {
	v, r := table.get(h, KindCancel)
	if r != nil {
		return *r
	}
	v.(*token).cancel()
	return Ok(struct{}{})
}

// CancelClose releases a token without cancelling calls still using it.
func CancelClose(h uint64) Result { return table.remove(h, KindCancel) }

// ConfigUnknownEnv returns selector's Config.EnvWarnings for the variables
// of envJSON (a JSON object of name to value, the caller's environment:
// the library never reads the process's): {"warnings": ["... (did you mean
// ...?)"]}. Bindings warn in their own idiom with the Go rule's words. A
// bad value of a real setting is ErrArgument, as ConfigFromEnvMap says it.
func ConfigUnknownEnv(envJSON []byte, present bool) Result {
	var env map[string]string
	if r := JSON("env_json", envJSON, present, &env); r != nil {
		return *r
	}
	w := []string{} // JSON null: no environment given, nothing to warn of
	if env != nil {
		cfg, err := selector.ConfigFromEnvMap(env)
		if err != nil {
			return Fail(ErrArgument, "env_json: %v", err)
		}
		w = append(w, cfg.EnvWarnings()...)
	}
	return Ok(map[string][]string{"warnings": w})
}
