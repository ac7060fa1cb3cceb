package selector

import (
	"errors"
	"log/slog"
	"strings"
	"time"
)

// attemptState is the attempt in progress, across its search rounds and
// the retries that adapt its request: advance starts it afresh for each
// model, and Feed reads it into the Attempt it records.
type attemptState struct {
	sentAt    time.Time  // when its first round was sent
	end       time.Time  // sentAt + its timeout: every round must end by then
	searches  []Search   // its search rounds so far
	promptTok int        // prompt tokens of its replies, summed over its rounds
	complTok  int        // completion tokens of its replies, likewise
	have      adaptation // the adaptations its requests carry
	adapted   []string   // their descriptions, for the attempt record
	repaired  []string   // what the reader repaired in its replies (readCalls)
	dialect   dialect    // its dialect
	replay    []Message  // a continued conversation's turns after the user prompt (DeepSeek's tool loop)
}

// report is the record of the attempt so far, to model, as of now: what
// its rounds cost and how its requests were shaped.
func (at *attemptState) report(model string, now time.Time) Attempt {
	a := Attempt{Model: model, Latency: now.Sub(at.sentAt),
		PromptTokens: at.promptTok, CompletionTokens: at.complTok, Searches: at.searches, Adapted: at.adapted}
	if !at.dialect.plain {
		a.Dialect = at.dialect.name
	}
	return a
}

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
		ss.cur = ss.first
		ss.att = attemptState{have: learnedFor(ss.cfg.learnKey(), model)}
		if ss.att.have != 0 {
			// Named as when they were learned: against the request they change.
			unadapted, _ := ss.request(model, 0, 0)
			ss.att.adapted = adaptationNames(ss.att.have, unadapted, "learned earlier: ")
		}
		ss.att.sentAt = ss.now()
		ss.att.end = ss.att.sentAt.Add(timeout)
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
	if t == defaults.Temperature {
		return
	}
	what := ""
	switch ss.att.dialect.temperature {
	case temperatureOmit:
		what = "sends no temperature: the model takes only its own"
	case temperatureOne:
		if t != 1 {
			what = "sends temperature 1: the model takes no other"
		}
	}
	if what != "" {
		ss.log.LogAttrs(ss.ctx, slog.LevelWarn, "tool selection: the "+ss.att.dialect.name+" dialect "+what+"; the configured temperature is not sent",
			slog.String("model", model), slog.Float64("temperature", t), slog.String("setting", envOf("temperature")))
	}
}

// chat is the request for the current offer, shaped for model's dialect
// with the attempt's adaptations; it becomes the session's pending request.
func (ss *Session) chat(model string, timeout time.Duration) *ChatRequest {
	req, d := ss.request(model, timeout, ss.att.have)
	ss.att.dialect = d
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
	if len(ss.att.replay) > 0 {
		req.Messages = append(append([]Message(nil), ss.cur.messages[:1]...), ss.user0())
		req.Messages = append(req.Messages, ss.att.replay...)
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
	a, ok := adaptTo(ce.Message, req, ss.att.have)
	if !ok {
		return Action{}, false
	}
	names := adaptationNames(a, req, "")
	what := strings.Join(names, ", ")
	left := ss.att.end.Sub(ss.now())
	if left <= 0 {
		return Action{}, false
	}
	ss.att.have |= a
	ss.att.adapted = append(ss.att.adapted, names...)
	if rememberable(ce.Message) {
		learn(ss.cfg.learnKey(), req.Model, a)
	}
	ss.log.LogAttrs(ss.ctx, slog.LevelWarn, "tool selection: the server refused a request field; retrying without it",
		slog.String("model", req.Model), slog.String("dialect", req.Dialect), slog.String("adapted", what),
		slog.String("error", truncate(redact(ce.Message, ss.cfg.APIKey), 300)))
	ss.pending = ss.chat(req.Model, left)
	return ss.Next(), true
}
