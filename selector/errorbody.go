package selector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file is the one reader of a provider's error body, for every driver:
// the Go transport hands it the body of an error status or the "error" of a
// 200, and a non-Go driver the body its client kept. Each shape below has
// its source in docs/providers.md ("Error bodies"):
//
//   - {"error":{"message","type","code"}} (OpenAI), {"error":"..."} (Ollama),
//     {"message":...} (vLLM), {"detail":...} (FastAPI), HTML pages, plain text;
//   - a JSON list wrapping the error object (Gemini: [{"error":{...}}]);
//   - "details" holding a google.rpc.RetryInfo with "retryDelay":"30s"
//     (Gemini, Vertex AI): the delay reaches ChatError.RetryAfter;
//   - "failed_generation" (Groq: json_validate_failed, tool_use_failed): the
//     model's words, clipped, in the message;
//   - Azure's "innererror": the content filter's flagged categories;
//   - Anthropic's envelope, {"type":"error","error":{"type":"overloaded_error",
//     "message":...},"request_id":...}: the error's type is its code (in
//     other shapes a type is a class, "requests" or "BadRequestError", and
//     says nothing the status does not).

// errorBody is what a provider's error body says.
type errorBody struct {
	message string
	// code is the provider's own code ("json_validate_failed",
	// "RESOURCE_EXHAUSTED"), "" when none or numeric.
	code string
	// status is a numeric code from 100 to 599, else 0.
	status int
	// retryAfter is the body's retry delay (google.rpc.RetryInfo), when it has one.
	retryAfter    time.Duration
	hasRetryAfter bool
	// failedGeneration is what the model wrote, when the provider returns it.
	failedGeneration string
	// filtered lists the content filter categories flagged (Azure).
	filtered []string
}

// Bounds of what an error message quotes.
const (
	// maxErrorMessage bounds an attempt's message: long ones are clipped in
	// the middle (clipMiddle), so the end, where the reason often is, stays.
	maxErrorMessage = 1024
	// maxServerMessage bounds the server's own words within it.
	maxServerMessage = 512
	// maxFailedGeneration bounds the quoted failed_generation.
	maxFailedGeneration = 240
)

// readErrorBody reads an error body of any of the shapes above.
func readErrorBody(body []byte) errorBody {
	body = bytes.TrimSpace(body)
	var eb errorBody
	switch {
	case len(body) == 0:
	case body[0] == '[':
		var list []json.RawMessage
		if json.Unmarshal(body, &list) == nil && len(list) > 0 {
			return readErrorBody(list[0])
		}
		eb.message = plainText(string(body))
	case body[0] == '{':
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil {
			eb.message = plainText(string(body))
			break
		}
		if e := bytes.TrimSpace(m["error"]); len(e) > 0 && e[0] == '{' {
			eb.readObject(e)
			if eb.code == "" && jsonMessage(m["type"]) == "error" {
				var o struct {
					Type string `json:"type"`
				}
				if json.Unmarshal(e, &o) == nil {
					eb.code = o.Type
				}
			}
		} else if msg := jsonMessage(m["error"]); msg != "" {
			eb.message = msg
		} else {
			eb.readObject(body)
		}
		if eb.message == "" {
			eb.message = clipMiddle(string(body), maxServerMessage)
		}
	default:
		eb.message = plainText(string(body))
	}
	return eb
}

// readObject reads an error object: its message, code, status, retry delay,
// failed generation and flagged categories.
func (eb *errorBody) readObject(raw json.RawMessage) {
	var o struct {
		Message          json.RawMessage   `json:"message"`
		Msg              json.RawMessage   `json:"msg"`
		Detail           json.RawMessage   `json:"detail"`
		Description      json.RawMessage   `json:"error_description"`
		Code             json.RawMessage   `json:"code"`
		Status           json.RawMessage   `json:"status"`
		FailedGeneration json.RawMessage   `json:"failed_generation"`
		Details          []json.RawMessage `json:"details"`
		InnerError       *struct {
			Code   string                     `json:"code"`
			Result map[string]json.RawMessage `json:"content_filter_result"`
		} `json:"innererror"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return
	}
	for _, r := range []json.RawMessage{o.Message, o.Msg, o.Detail, o.Description} {
		if eb.message = jsonMessage(r); eb.message != "" {
			break
		}
	}
	for _, r := range []json.RawMessage{o.Code, o.Status} {
		c := strings.Trim(strings.TrimSpace(string(r)), `"`)
		if c == "" || c == "null" {
			continue
		}
		if n, err := strconv.Atoi(c); err == nil {
			if n >= 100 && n <= 599 && eb.status == 0 {
				eb.status = n
			}
		} else if eb.code == "" {
			eb.code = c
		}
	}
	if s, _, _ := contentText(o.FailedGeneration); s != "" {
		eb.failedGeneration = s
	} else if len(o.FailedGeneration) > 0 && !isNull(o.FailedGeneration) && !isJSONString(o.FailedGeneration) {
		eb.failedGeneration = string(o.FailedGeneration)
	}
	for _, d := range o.Details {
		var info struct {
			Type       string `json:"@type"`
			RetryDelay string `json:"retryDelay"`
		}
		if json.Unmarshal(d, &info) == nil && strings.HasSuffix(info.Type, "google.rpc.RetryInfo") {
			if dur, err := time.ParseDuration(strings.TrimSpace(info.RetryDelay)); err == nil && dur >= 0 {
				eb.retryAfter, eb.hasRetryAfter = min(dur, maxRetryAfter).Round(time.Second), true
			}
		}
	}
	if o.InnerError != nil {
		eb.filtered = flaggedCategories(o.InnerError.Result)
	}
}

// text is the body's message with what else it says: the code, the
// categories a content filter flagged, what the model wrote, and what to do
// about a failure the selector's settings avoid.
func (eb errorBody) text() string {
	msg := clipMiddle(eb.message, maxServerMessage)
	if eb.code != "" && !strings.Contains(msg, eb.code) {
		msg = strings.TrimSpace(msg + " (" + eb.code + ")")
	}
	if len(eb.filtered) > 0 {
		msg += "; flagged: " + strings.Join(eb.filtered, ", ")
	}
	if eb.failedGeneration != "" {
		msg += "; the model wrote (failed_generation): " + strconv.Quote(clipMiddle(eb.failedGeneration, maxFailedGeneration))
	}
	if eb.code == "tool_use_failed" {
		msg += fmt.Sprintf("; %s=json avoids it: the selector then reads the model's JSON itself instead of the server", envOf("mode"))
	}
	return msg
}

// httpFailure is the *ChatError of an HTTP error status: the server's words
// from its body (readErrorBody; fallback when the body says nothing), and
// how long it asked to wait, from the Retry-After header (header, ok) or the
// body's retry delay, at the end of the message and in RetryAfter.
func httpFailure(status int, body []byte, fallback string, header time.Duration, hasHeader bool) *ChatError {
	eb := readErrorBody(body)
	msg := eb.text()
	if strings.TrimSpace(eb.message) == "" && strings.TrimSpace(fallback) != "" {
		eb.message = fallback
		msg = eb.text()
	}
	if strings.TrimSpace(msg) == "" {
		msg = http.StatusText(status)
	}
	text := fmt.Sprintf("HTTP %d: %s", status, strings.TrimSpace(msg))
	e := &ChatError{Kind: KindHTTPStatus, StatusCode: status}
	wait, ok := header, hasHeader
	if !ok {
		wait, ok = eb.retryAfter, eb.hasRetryAfter
	}
	if !ok {
		e.Message = clipMiddle(text, maxErrorMessage)
		return e
	}
	suffix := fmt.Sprintf(" (retry after %s)", wait)
	e.Message = clipMiddle(text, maxErrorMessage-len(suffix)) + suffix
	e.RetryAfter = wait
	return e
}

// providerError reads an "error" member of a 200 body: nil when absent or
// null, else a *ChatError of kind http_status carrying the provider's
// message and code (a numeric code from 100 to 599 is the status; others are
// quoted in the message, and the status is 200).
func providerError(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) || string(raw) == "{}" || string(raw) == `""` {
		return nil
	}
	var eb errorBody
	if raw[0] == '{' {
		eb.readObject(raw)
	} else {
		eb.message = jsonMessage(raw)
	}
	if eb.message == "" {
		eb.message = "the provider reported an error without a message"
	}
	code := eb.code
	eb.code = "" // said in the prefix
	text := fmt.Sprintf("HTTP 200 with an error in the body: %s", eb.text())
	status := 200
	switch {
	case eb.status != 0:
		status = eb.status
		text = fmt.Sprintf("HTTP 200 with an error in the body (code %d): %s", status, eb.text())
	case code != "":
		text = fmt.Sprintf("HTTP 200 with an error in the body (code %s): %s", code, eb.text())
	}
	e := &ChatError{Kind: KindHTTPStatus, StatusCode: status, Message: clipMiddle(text, maxErrorMessage)}
	if eb.hasRetryAfter {
		e.RetryAfter = eb.retryAfter
	}
	return e
}

// serverMessage is the server's own message in an error body, with what
// else the body says (errorBody.text).
func serverMessage(body []byte) string { return readErrorBody(body).text() }

var (
	titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	dropRE  = regexp.MustCompile(`(?is)<(script|style|head)[^>]*>.*?</(script|style|head)>`)
	tagRE   = regexp.MustCompile(`(?s)<[^>]*>`)
	spaceRE = regexp.MustCompile(`\s+`)
)

// plainText reads a body that is not JSON: an HTML page (its title and
// text) or plain text, spaces collapsed.
func plainText(s string) string {
	if strings.Contains(s, "<") && strings.Contains(s, ">") {
		title := ""
		if t := titleRE.FindStringSubmatch(s); t != nil {
			title = strings.TrimSpace(html.UnescapeString(spaceRE.ReplaceAllString(t[1], " ")))
		}
		s = dropRE.ReplaceAllString(s, " ")
		s = tagRE.ReplaceAllString(s, " ")
		s = strings.TrimSpace(spaceRE.ReplaceAllString(html.UnescapeString(s), " "))
		if title != "" && !strings.HasPrefix(s, title) {
			s = strings.TrimSpace(title + ": " + s)
		}
	} else {
		s = strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
	}
	return clipMiddle(s, maxServerMessage)
}

// jsonMessage reads a message from a JSON value: a string, an object with a
// "message" (or "msg"/"detail"), or anything else compacted.
func jsonMessage(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		for _, k := range []string{"message", "msg", "detail"} {
			if msg := jsonMessage(m[k]); msg != "" {
				return msg
			}
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return clipMiddle(buf.String(), maxServerMessage)
	}
	return ""
}

// flaggedCategories lists the categories of an Azure content filter result
// ({"hate":{"filtered":true,"severity":"high"},"jailbreak":{"filtered":true,"detected":true}})
// that were filtered, with their severity, in name order.
func flaggedCategories(results map[string]json.RawMessage) []string {
	var out []string
	for name, raw := range results {
		var r struct {
			Filtered bool   `json:"filtered"`
			Severity string `json:"severity"`
		}
		if json.Unmarshal(raw, &r) != nil || !r.Filtered {
			continue
		}
		if r.Severity != "" {
			name += " (" + r.Severity + ")"
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// clipMiddle keeps a message within n bytes by cutting its middle, on rune
// boundaries: the start says what failed, and the end often says why.
func clipMiddle(s string, n int) string {
	const gap = " … "
	if len(s) <= n {
		return s
	}
	if n <= len(gap)+2 {
		return truncate(s, n)
	}
	keep := n - len(gap)
	head := keep / 2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - (keep - head)
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + gap + s[tail:]
}
