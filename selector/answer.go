package selector

import (
	"fmt"
	"slices"
	"strings"
)

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
		ss.att.repaired = append(ss.att.repaired, fmt.Sprintf("trailing commas removed: %d", repaired))
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
			len(reasoning), thinkingHint(ss.cfg, ss.att.dialect, ss.models[max(ss.next-1, 0)]))
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
	_, limit := tokenLimit(&ss.cfg, ss.att.dialect)
	spent := "an unreported number of"
	if resp.CompletionTokens > 0 {
		spent = fmt.Sprint(resp.CompletionTokens)
	}
	msg := fmt.Sprintf("the reply stopped at the token limit, %s, after %s completion tokens, with %s", limit, spent, what)
	if strings.TrimSpace(reasoning) != "" {
		msg += fmt.Sprintf("; %d bytes of it were reasoning: %s", len(reasoning), thinkingHint(ss.cfg, ss.att.dialect, ss.models[max(ss.next-1, 0)]))
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
