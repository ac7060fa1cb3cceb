package selector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolselect/toolselect/registry"
)

// FailureKind says why an attempt failed.
type FailureKind string

// The failure kinds. Every failed attempt carries exactly one.
const (
	// KindTransport: the request did not complete (connection refused, reset, DNS, TLS...).
	KindTransport FailureKind = "transport"
	// KindTimeout: no reply within the per-attempt timeout or the caller's deadline.
	KindTimeout FailureKind = "timeout"
	// KindCanceled: the caller canceled its context.
	KindCanceled FailureKind = "canceled"
	// KindHTTPStatus: the server answered with an error status (429, 500, 502...).
	KindHTTPStatus FailureKind = "http_status"
	// KindResponseTooLarge: the response body exceeded Config.MaxResponseBytes.
	KindResponseTooLarge FailureKind = "response_too_large"
	// KindEmptyChoices: the completion had no choices.
	KindEmptyChoices FailureKind = "empty_choices"
	// KindParse: the reply was not the `calls` contract (or a native tool call's arguments were not a JSON object).
	KindParse FailureKind = "parse"
	// KindValidation: with fail-closed, at least one call named a tool not offered or had invalid args.
	KindValidation FailureKind = "validation"
	// KindSearch: ranking the catalog for the model's search failed.
	KindSearch FailureKind = "search"
	// KindTruncated: the reply stopped at the token limit (finish_reason
	// "length") without a usable answer; the message names the limit and the
	// tokens spent.
	KindTruncated FailureKind = "truncated"
	// KindConfig: the request was refused before it was sent because of a
	// setting (the message names it), e.g. by go-openai's own checks.
	KindConfig FailureKind = "config"
	// KindContentFilter: the provider's content filter stopped the reply
	// (finish_reason "content_filter", or Gemini's "SAFETY", "RECITATION",
	// ...); the message names the categories it flagged where it said.
	KindContentFilter FailureKind = "content_filter"
)

// failureKinds lists every kind, in documentation order.
var failureKinds = []FailureKind{KindTransport, KindTimeout, KindCanceled, KindHTTPStatus, KindResponseTooLarge, KindEmptyChoices, KindParse, KindValidation, KindSearch, KindTruncated, KindConfig, KindContentFilter}

// EmptyKind is the kind of a selection that ended with no calls and not by
// the model's choice ([SelectionError.Kind], and "error.kind" in JSON): every
// attempt failed ([EmptyFailClosed]), or no model was asked. One where the
// model chose no call has no error at all.
type EmptyKind string

// The kinds of a selection that returned no calls by no choice of the model.
const (
	// EmptyFailClosed: a model was asked and every attempt failed
	// ([SelectionError.Attempts] says how each did).
	EmptyFailClosed EmptyKind = "fail_closed"
	// EmptyNoEligibleTools: no registered tool passed the request's safety,
	// role and capability filters (or the registry is empty).
	EmptyNoEligibleTools EmptyKind = "no_eligible_tools"
	// EmptyNoRankedTools: the offer had to be ranked (over the token budget,
	// or a top K was asked for) and the ranking found no tool for the task,
	// with search rounds off, so there was nothing to ask the model about.
	EmptyNoRankedTools EmptyKind = "no_ranked_tools"
)

func (k FailureKind) known() bool {
	for _, have := range failureKinds {
		if k == have {
			return true
		}
	}
	return false
}

// Sentinel errors.
var (
	// ErrFailClosed is matched by every *SelectionError: no attempt produced a
	// valid selection, so the selector returned no calls.
	ErrFailClosed = errors.New("tool selection failed closed")
	// ErrResponseTooLarge is matched when a response body exceeds Config.MaxResponseBytes.
	ErrResponseTooLarge = errors.New("response body too large")
	// ErrEmptyChoices is matched when a completion has no choices.
	ErrEmptyChoices = errors.New("completion has no choices")
	// ErrBadRequest is matched by errors about the Request itself (no registry, no task).
	ErrBadRequest = errors.New("invalid selection request")
	// ErrNoClient is returned by Select on a ToolSelector built without a ChatClient.
	ErrNoClient = errors.New("selector has no chat client (drive a Session instead)")
	// ErrNoEligibleTools is matched by a *SelectionError of kind EmptyNoEligibleTools.
	ErrNoEligibleTools = errors.New("no eligible tools")
	// ErrNoRankedTools is matched by a *SelectionError of kind EmptyNoRankedTools.
	ErrNoRankedTools = errors.New("the ranking offered no tools")
	// ErrInvalidConfig is matched (errors.Is) by every *ConfigError.
	ErrInvalidConfig = errors.New("invalid selector configuration")
)

// ChatError is how a ChatClient reports a failure of known kind. Message is
// the server's own message where there is one, never with the API key.
type ChatError struct {
	// Kind classifies the failure.
	Kind FailureKind
	// StatusCode is the HTTP status for KindHTTPStatus, else 0.
	StatusCode int
	// Message says what went wrong.
	Message string
	// Err is the underlying cause, if any (never a raw response body).
	Err error
	// RetryAfter is how long the server asked to wait (its Retry-After
	// header, at most a day) for KindHTTPStatus, when it said; the message
	// says it too: "HTTP 429: ... (retry after 20s)". The selector does not
	// wait: the fallback model is tried at once, and the caller decides.
	RetryAfter time.Duration
}

// Error returns the message (already free of the API key).
func (e *ChatError) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *ChatError) Unwrap() error { return e.Err }

// DropReason says why a call was rejected.
type DropReason string

// The drop reasons.
const (
	// DropUnknownTool: the model named a tool the registry does not have.
	DropUnknownTool DropReason = "unknown_tool"
	// DropNotOffered: the tool exists but was not offered; [DroppedCall.Rule]
	// says the one rule that applied ([registry.RuleUnsafe],
	// [registry.RuleRole], [registry.RuleCapability] or
	// [registry.RuleNotInOffer]) and the message says it in words.
	DropNotOffered DropReason = "not_offered"
	// DropInvalidArgs: the args failed the tool's schema.
	DropInvalidArgs DropReason = "invalid_args"
	// DropMaxCalls: a valid call beyond [Settings.MaxCalls].
	DropMaxCalls DropReason = "max_calls"
)

// DroppedCall is a call the selector did not return, and why.
type DroppedCall struct {
	// Tool is the name as the model gave it.
	Tool string `json:"tool"`
	// Args as the model gave them (a JSON object).
	Args json.RawMessage `json:"args"`
	// Reason classifies the drop.
	Reason DropReason `json:"reason"`
	// Rule is, for DropNotOffered, the one rule the tool was not offered
	// by: the caller's eligibility ([registry.Eligibility.Check]), or
	// [registry.RuleNotInOffer] when this request's offer, narrowed for the
	// task, left an eligible tool out.
	Rule registry.Rule `json:"rule,omitempty"`
	// Message explains it (for invalid args: every violation with its JSON
	// pointer; for an unknown or not-offered tool, DidYouMean in words).
	Message string `json:"message"`
	// DidYouMean is, for DropUnknownTool and DropNotOffered, up to three
	// registered tools the name most likely meant, best first
	// ([registry.Registry.Suggest]: the same name after another namespace,
	// then the names a few edits away), among the tools the request's
	// caller may run only, never the tool itself; empty when none is near.
	DidYouMean []string `json:"did_you_mean,omitempty"`
}

// Attempt records one model call.
type Attempt struct {
	// Model asked.
	Model string
	// OK is true for the attempt whose calls were returned.
	OK bool
	// Kind and Message describe a failure (empty when OK).
	Kind    FailureKind
	Message string
	// Latency from sending the request to having the reply (or failure).
	Latency time.Duration
	// PromptTokens and CompletionTokens as reported by the server.
	PromptTokens, CompletionTokens int
	// Rejected lists the calls that failed the checks in this attempt.
	Rejected []DroppedCall
	// Searches are the search rounds of this attempt, in order: the model's
	// words and the tools then offered. The attempt's latency and token
	// counts cover every round.
	Searches []Search
	// UnansweredSearch is a search the model asked for when no round was left
	// (or the offer was already every eligible tool): the attempt ended with
	// no calls, the model's decision.
	UnansweredSearch string
	// Dialect is the provider dialect the requests were shaped for; empty
	// for the generic OpenAI-compatible dialect.
	Dialect string
	// Adapted lists what this attempt changed after a 400 named a field it
	// sent (e.g. "temperature: omitted"), or what earlier attempts on the same
	// base URL and model had learned. It is not a fallback.
	Adapted []string
	// Repaired lists what the reader repaired in the model's JSON before it
	// passed the calls contract: only "trailing commas removed: N" (commas
	// before "}" or "]" outside strings). Nothing else is guessed.
	Repaired []string
}

// Search is one search round: the model's words and the canonical names of
// the tools offered in the request that followed, in its order (unchanged
// when nothing matched the words).
type Search struct {
	Query   string   `json:"query"`
	Offered []string `json:"offered"`
}

// attemptJSON is Attempt on the wire:
// {"model","ok","error":{"kind","message"}|null,"latency_ms",...}.
type attemptJSON struct {
	Model            string        `json:"model"`
	OK               bool          `json:"ok"`
	Error            *ErrorInfo    `json:"error"`
	LatencyMS        float64       `json:"latency_ms"`
	PromptTokens     int           `json:"prompt_tokens,omitempty"`
	CompletionTokens int           `json:"completion_tokens,omitempty"`
	Rejected         []DroppedCall `json:"rejected,omitempty"`
	Searches         []Search      `json:"searches,omitempty"`
	UnansweredSearch string        `json:"unanswered_search,omitempty"`
	Dialect          string        `json:"dialect,omitempty"`
	Adapted          []string      `json:"adapted,omitempty"`
	Repaired         []string      `json:"repaired,omitempty"`
}

// ErrorInfo is an error as JSON: {"kind","message"}.
type ErrorInfo struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// MarshalJSON writes {"model","ok","error":{"kind","message"}|null,"latency_ms",
// "prompt_tokens","completion_tokens","rejected"}.
func (a Attempt) MarshalJSON() ([]byte, error) {
	j := attemptJSON{
		Model: a.Model, OK: a.OK,
		LatencyMS:    float64(a.Latency.Microseconds()) / 1000,
		PromptTokens: a.PromptTokens, CompletionTokens: a.CompletionTokens,
		Rejected: a.Rejected, Searches: a.Searches, UnansweredSearch: a.UnansweredSearch,
		Dialect: a.Dialect, Adapted: a.Adapted, Repaired: a.Repaired,
	}
	if !a.OK {
		j.Error = &ErrorInfo{Kind: string(a.Kind), Message: a.Message}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (a *Attempt) UnmarshalJSON(data []byte) error {
	var j attemptJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*a = Attempt{Model: j.Model, OK: j.OK, Latency: time.Duration(j.LatencyMS * float64(time.Millisecond)),
		PromptTokens: j.PromptTokens, CompletionTokens: j.CompletionTokens, Rejected: j.Rejected,
		Searches: j.Searches, UnansweredSearch: j.UnansweredSearch, Dialect: j.Dialect, Adapted: j.Adapted,
		Repaired: j.Repaired}
	if j.Error != nil {
		a.Kind, a.Message = FailureKind(j.Error.Kind), j.Error.Message
	}
	return nil
}

// SelectionError is returned when a selection ends with no calls and not by
// the model's choice: every attempt failed (Kind EmptyFailClosed; Attempts
// lists them), or no model was asked because there was nothing to offer
// (Kind is EmptyNoEligibleTools or EmptyNoRankedTools, Message says why,
// Attempts is empty). errors.Is(err, ErrFailClosed) is always true, and
// errors.Is with ErrNoEligibleTools or ErrNoRankedTools matches the kind.
type SelectionError struct {
	Attempts []Attempt
	// Kind is always set: EmptyFailClosed when attempts failed, else the
	// Empty* kind of the selection that asked no model. (A SelectionError
	// built by hand with no Kind reads as EmptyFailClosed.)
	Kind EmptyKind
	// Message explains a Kind (counts of registered and excluded tools).
	Message string
}

// Error lists every attempt: model, kind, message; or the kind and message
// of a selection that asked no model. The text is the same from run to run:
// each attempt's latency and token counts are in [Attempt]'s fields, not in
// the message.
func (e *SelectionError) Error() string {
	if e.Kind != "" && e.Kind != EmptyFailClosed {
		return ErrFailClosed.Error() + ": " + string(e.Kind) + ": " + e.Message
	}
	if len(e.Attempts) == 0 {
		return ErrFailClosed.Error() + ": no attempt was made"
	}
	parts := make([]string, len(e.Attempts))
	for i, a := range e.Attempts {
		parts[i] = fmt.Sprintf("%s: %s: %s", a.Model, a.Kind, a.Message)
	}
	return ErrFailClosed.Error() + ": " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrFailClosed) true.
func (e *SelectionError) Is(target error) bool {
	switch target {
	case ErrFailClosed:
		return true
	case ErrNoEligibleTools:
		return e.Kind == EmptyNoEligibleTools
	case ErrNoRankedTools:
		return e.Kind == EmptyNoRankedTools
	}
	return false
}

// ErrorKind is the kind written for err in JSON output: "fail_closed" for a
// *SelectionError whose attempts failed, its Kind (EmptyNoEligibleTools,
// EmptyNoRankedTools) when no model was asked, "bad_request" for
// ErrBadRequest, "config" for ErrInvalidConfig, "prefilter" for a prefilter
// failure, "no_client" for ErrNoClient, otherwise "internal".
func ErrorKind(err error) string {
	var pe *prefilterError
	var se *SelectionError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &se) && se.Kind != "":
		return string(se.Kind)
	case errors.Is(err, ErrNoClient):
		return "no_client"
	case errors.Is(err, ErrFailClosed):
		return "fail_closed"
	case errors.Is(err, ErrBadRequest):
		return "bad_request"
	case errors.Is(err, ErrInvalidConfig):
		return "config"
	case errors.As(err, &pe):
		return "prefilter"
	}
	return "internal"
}

// newErrorInfo returns err as {"kind","message"}, or nil for a nil error.
func newErrorInfo(err error) *ErrorInfo {
	if err == nil {
		return nil
	}
	return &ErrorInfo{Kind: ErrorKind(err), Message: err.Error()}
}

type prefilterError struct{ err error }

func (e *prefilterError) Error() string { return "prefilter: " + e.err.Error() }
func (e *prefilterError) Unwrap() error { return e.err }

// classify maps a ChatClient error to a failure kind and message.
func classify(err error) (FailureKind, string) {
	var ce *ChatError
	if errors.As(err, &ce) {
		k := ce.Kind
		if !k.known() {
			k = KindTransport
		}
		return k, ce.Message
	}
	var ne net.Error
	switch {
	case errors.Is(err, ErrResponseTooLarge):
		return KindResponseTooLarge, err.Error()
	case errors.Is(err, ErrEmptyChoices):
		return KindEmptyChoices, err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout, err.Error()
	case errors.Is(err, context.Canceled):
		return KindCanceled, err.Error()
	case errors.As(err, &ne) && ne.Timeout():
		return KindTimeout, err.Error()
	}
	return KindTransport, err.Error()
}

// redact removes every occurrence of key from s.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[REDACTED]")
}

// truncate keeps messages readable: at most n bytes, cut on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
