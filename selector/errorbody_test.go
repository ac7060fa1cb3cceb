package selector

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each error body shape is read by the one reader: its message, code,
// wait, failed generation and flagged categories.
func TestReadErrorBody(t *testing.T) {
	gemini := `[{"error":{"code":429,"message":"Resource exhausted.","status":"RESOURCE_EXHAUSTED",
		"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}]`
	eb := readErrorBody([]byte(gemini))
	assert.Equal(t, "Resource exhausted.", eb.message)
	assert.Equal(t, "RESOURCE_EXHAUSTED", eb.code)
	assert.Equal(t, 429, eb.status)
	assert.True(t, eb.hasRetryAfter)
	assert.Equal(t, 2*time.Second, eb.retryAfter, "rounded to the second")

	groq := `{"error":{"message":"Failed to generate JSON.","type":"invalid_request_error","code":"json_validate_failed","failed_generation":"` + strings.Repeat("x", 600) + `END"}}`
	text := readErrorBody([]byte(groq)).text()
	assert.Contains(t, text, "Failed to generate JSON. (json_validate_failed); the model wrote (failed_generation): ")
	assert.Contains(t, text, `xEND"`, "clipped in the middle, its end kept")
	assert.Less(t, len(text), 400)

	azure := `{"error":{"message":"The response was filtered","code":"content_filter","innererror":{"code":"ResponsibleAIPolicyViolation",
		"content_filter_result":{"hate":{"filtered":true,"severity":"high"},"violence":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":true,"detected":true}}}}}`
	assert.Equal(t, "The response was filtered (content_filter); flagged: hate (high), jailbreak", readErrorBody([]byte(azure)).text())

	// Anthropic's envelope: the error's type is its code. Elsewhere a type is
	// a class and stays out of the message.
	anthropic := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`
	assert.Equal(t, "Overloaded (overloaded_error)", readErrorBody([]byte(anthropic)).text())
	assert.Equal(t, "Rate limit reached", readErrorBody([]byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`)).text())

	// The bare error object an OpenAI SDK keeps as .body, and an error in a 200.
	assert.Equal(t, "slow down (rate_limit_exceeded)", serverMessage([]byte(`{"message":"slow down","code":"rate_limit_exceeded"}`)))
	err := providerError(json.RawMessage(`{"message":"busy","code":503,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"9s"}]}`))
	var ce *ChatError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 503, ce.StatusCode)
	assert.Equal(t, 9*time.Second, ce.RetryAfter)

	// A Retry-After header wins over the body's delay.
	e := httpFailure(429, []byte(gemini), "", 5*time.Second, true)
	assert.Equal(t, 5*time.Second, e.RetryAfter)
	assert.Equal(t, "HTTP 429: Resource exhausted. (RESOURCE_EXHAUSTED) (retry after 5s)", e.Message)
}

func TestClipMiddle(t *testing.T) {
	assert.Equal(t, "short", clipMiddle("short", 10))
	s := strings.Repeat("é", 300) + "the end"
	got := clipMiddle(s, 101)
	assert.LessOrEqual(t, len(got), 101)
	assert.True(t, utf8.ValidString(got))
	assert.True(t, strings.HasSuffix(got, "the end"))
	assert.Contains(t, got, " … ")
}

// A driver's HTTP failure with the body and header its client kept is read
// as the Go transport reads it.
func TestFeedErrorBody(t *testing.T) {
	doc := `{"error":{"kind":"http_status","message":"Error code: 429","status_code":429,"retry_after":"12",
		"body":{"message":"Rate limit reached","code":"rate_limit_exceeded"},"source":"RateLimitError"}}`
	_, chatErr, err := parseFeed([]byte(doc))
	require.NoError(t, err)
	var ce *ChatError
	require.ErrorAs(t, chatErr, &ce)
	assert.Equal(t, "RateLimitError: HTTP 429: Rate limit reached (rate_limit_exceeded) (retry after 12s)", ce.Message)
	assert.Equal(t, 12*time.Second, ce.RetryAfter)
	_, chatErr, err = parseFeed([]byte(`{"error":{"kind":"http_status","message":"Error code: 502","status_code":502,"body":"<html><title>Bad Gateway</title></html>"}}`))
	require.NoError(t, err)
	assert.Equal(t, "HTTP 502: Bad Gateway", chatErr.Error())
}
