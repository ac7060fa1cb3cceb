package selector

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolselect/toolselect/internal/testing/providerreplica"
	"github.com/toolselect/toolselect/rank"
)

// providersDir holds one file per provider behaviour, replayed here
// through the real go-openai client, and by the CLI and Python tests.
const providersDir = "../testdata/providers"

// caseConfig is the case's configuration over the defaults, pointed at srv.
func caseConfig(t *testing.T, c providerreplica.Case, srv *providerreplica.Server) *Config {
	t.Helper()
	settings := map[string]any{}
	for k, v := range c.Config {
		settings[k] = v
	}
	settings["base_url"] = srv.URL
	settings["api_key"] = "sk-test-SECRET-0123456789"
	b, err := json.Marshal(settings)
	require.NoError(t, err)
	cfg, err := ConfigFromJSON(b)
	require.NoError(t, err, "case config %s", b)
	return &cfg
}

// eachCase runs fn on every case with its replica started and the process's
// learned adaptations forgotten. The selectors get the offer budget's ranker,
// as the CLI and the C ABI give theirs, so a case can ask for search rounds.
func eachCase(t *testing.T, fn func(t *testing.T, c providerreplica.Case, srv *providerreplica.Server, cfg *Config)) {
	eachCaseWhere(t, nil, fn)
}

// eachCaseWhere is eachCase over the cases include accepts (nil: all).
func eachCaseWhere(t *testing.T, include func(providerreplica.Case) bool, fn func(t *testing.T, c providerreplica.Case, srv *providerreplica.Server, cfg *Config)) {
	cases, err := providerreplica.Load(providersDir)
	require.NoError(t, err)
	for _, c := range cases {
		if include != nil && !include(c) {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			learned.Clear()
			srv, err := c.Serve()
			require.NoError(t, err)
			defer srv.Close()
			fn(t, c, srv, caseConfig(t, c, srv))
		})
	}
}

func TestProviderDialects(t *testing.T) {
	eachCase(t, func(t *testing.T, c providerreplica.Case, srv *providerreplica.Server, cfg *Config) {
		{
			client, err := NewOpenAIClient(cfg, http.DefaultClient)
			require.NoError(t, err)
			s, err := newWith(client, cfg, quiet(), withRanker(&rank.Offering{}))
			require.NoError(t, err)
			res, err := s.Select(context.Background(), testRequest(t))
			checkCase(t, c, srv, res, err)
			if len(c.Expect.Adapted) > 0 {
				// Remembered for the base URL and model: the next selection
				// sends the adapted request at once, unless the case says
				// the adaptation is tried once and forgotten.
				before := len(srv.Requests())
				res, err = s.Select(context.Background(), testRequest(t))
				require.NoError(t, err)
				require.NotEmpty(t, res.Attempts)
				if c.Expect.Forgotten {
					assert.Len(t, srv.Requests(), before+requestsOf(c), "a forgotten adaptation is tried again")
					assert.Equal(t, c.Expect.Adapted, res.Attempts[0].Adapted)
				} else {
					assert.Len(t, srv.Requests(), before+1, "an adaptation is remembered")
					assert.Contains(t, strings.Join(res.Attempts[0].Adapted, ";"), "learned earlier")
				}
			}
		}
	})
}

// checkCase asserts a case's outcome and what each request carried.
func checkCase(t *testing.T, c providerreplica.Case, srv *providerreplica.Server, res *Result, err error) {
	t.Helper()
	reqs := srv.Requests()
	if c.Reaches() {
		require.NotEmpty(t, reqs, "no request reached the server")
	}
	if c.Expect.Adapted == nil {
		for i, body := range reqs {
			assert.Empty(t, c.Check(body), "request %d", i)
		}
	} else if len(reqs) > 0 {
		assert.Empty(t, c.Check(reqs[len(reqs)-1]), "the adapted request")
	}
	if c.Expect.Requests != nil {
		assert.Len(t, reqs, *c.Expect.Requests, "requests sent")
	}
	require.NotNil(t, res)
	last := res.Attempts[len(res.Attempts)-1]
	if c.Expect.Kind != "" {
		require.Error(t, err)
		var se *SelectionError
		require.True(t, errors.As(err, &se), "%v", err)
		assert.Equal(t, FailureKind(c.Expect.Kind), last.Kind, last.Message)
		for _, w := range c.Expect.MessageContains {
			assert.Contains(t, last.Message, w)
		}
		assert.NotContains(t, last.Message, "sk-test-SECRET")
	} else {
		require.NoError(t, err)
		got := make([]map[string]any, len(res.Calls))
		for i, call := range res.Calls {
			var args map[string]any
			require.NoError(t, json.Unmarshal(call.Args, &args))
			got[i] = map[string]any{"tool": call.Tool, "args": args}
		}
		assert.True(t, providerreplica.Same(got, c.Expect.Calls), "calls %v, want %v", got, c.Expect.Calls)
	}
	assert.Equal(t, c.Expect.Dialect, last.Dialect)
	assert.Equal(t, c.Expect.Adapted, last.Adapted)
	assert.Equal(t, c.Expect.Repaired, last.Repaired)
}

// requestsOf is how many requests a case's selection sends (its
// expect.requests, 1 when unset).
func requestsOf(c providerreplica.Case) int {
	if c.Expect.Requests == nil {
		return 1
	}
	return *c.Expect.Requests
}

// The same cases through the sans-I/O session, fed the completions as a
// non-Go driver would (the reply reader is one for both). A case that is the
// go-openai client's own behaviour has no replay here.
func TestProviderDialectsFedAsJSON(t *testing.T) {
	fed := func(c providerreplica.Case) bool { return !c.ViaGoOpenAIOnly() }
	eachCaseWhere(t, fed, func(t *testing.T, c providerreplica.Case, srv *providerreplica.Server, cfg *Config) {
		{
			s, err := newWith(nil, cfg, quiet(), withRanker(&rank.Offering{}))
			require.NoError(t, err)
			ss, err := s.Begin(context.Background(), testRequest(t))
			require.NoError(t, err)
			for act := ss.Next(); act.Kind == ActionChat; {
				doc := driveOnce(t, srv.URL, act)
				act, err = ss.FeedJSON(context.Background(), doc)
				require.NoError(t, err)
			}
			act := ss.Next()
			checkCase(t, c, srv, act.Result, act.Err)
		}
	})
}

// driveOnce sends a chat action as a plain HTTP client would (params as
// keywords, extra_body flattened) and returns what to feed: the completion
// body, or the error report.
func driveOnce(t *testing.T, baseURL string, act Action) []byte {
	t.Helper()
	var a struct {
		Model    string          `json:"model"`
		Messages json.RawMessage `json:"messages"`
		Params   map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal(act.JSON(), &a))
	body := map[string]json.RawMessage{"model": mustJSON(a.Model), "messages": a.Messages, "stream": json.RawMessage("false")}
	for k, v := range a.Params {
		switch k {
		case "timeout_s":
		case "extra_body":
			var extra map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(v, &extra))
			for ek, ev := range extra {
				body[ek] = ev
			}
		default:
			body[k] = v
		}
	}
	b, _ := json.Marshal(body)
	resp, err := http.Post(baseURL+"/chat/completions", "application/json", strings.NewReader(string(b)))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if resp.StatusCode >= 400 {
		// As an OpenAI SDK's error keeps it: its text, the body, the header.
		e := map[string]any{"kind": "http_status", "message": "Error code: " + resp.Status, "status_code": resp.StatusCode}
		if json.Valid(raw) {
			e["body"] = json.RawMessage(raw)
		} else {
			e["body"] = string(raw)
		}
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			e["retry_after"] = ra
		}
		out, _ := json.Marshal(map[string]any{"error": e})
		return out
	}
	if !json.Valid(raw) {
		// A driver whose client reads streams hands over the assembled reply.
		r, err := readCompletion(raw)
		require.NoError(t, err)
		out, _ := json.Marshal(map[string]any{"content": r.Content, "finish_reason": r.FinishReason})
		return out
	}
	return raw
}

func mustJSON(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
