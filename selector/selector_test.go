package selector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolselect/toolselect/registry"
)

func sevenCalls() string {
	var calls []string
	for i := range 7 {
		calls = append(calls, fmt.Sprintf(`{"tool":"search","args":{"query":"q%d"}}`, i))
	}
	return `{"calls":[` + strings.Join(calls, ",") + `]}`
}

// Required case: 7 calls returned -> 5 kept, in the model's order.
func TestSevenCallsCappedToFive(t *testing.T) {
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(sevenCalls())}}
	s := newSel(t, fc, cfgWith(nil))
	r, err := s.Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	require.Len(t, r.Calls, 5)
	for i, c := range r.Calls {
		assert.Equal(t, "search", c.Tool)
		assert.JSONEq(t, fmt.Sprintf(`{"query":"q%d"}`, i), string(c.Args))
	}
	require.Len(t, r.Dropped, 2)
	for _, d := range r.Dropped {
		assert.Equal(t, DropMaxCalls, d.Reason)
	}
	assert.Equal(t, []string{"primary"}, fc.models())
}

// Required case: primary returns invalid JSON -> fallback valid -> its calls, and the fallback was called.
func TestFallbackAfterInvalidJSON(t *testing.T) {
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){
		"primary":  content(`{"calls": [ oops`),
		"fallback": content(validReply),
	}}
	s := newSel(t, fc, cfgWith(nil))
	calls, err := s.SelectToolCalls(context.Background(), testRequest(t))
	require.NoError(t, err)
	require.Len(t, calls, 2)
	assert.Equal(t, "get_weather", calls[0].Tool)
	assert.Equal(t, "need the weather", calls[0].Reasoning)
	assert.Equal(t, "send.email", calls[1].Tool)
	assert.Equal(t, []string{"primary", "fallback"}, fc.models())

	r, err := s.Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	require.Len(t, r.Attempts, 2)
	assert.False(t, r.Attempts[0].OK)
	assert.Equal(t, KindParse, r.Attempts[0].Kind)
	assert.True(t, r.Attempts[1].OK)
}

// Required case: both fail -> empty result and the typed error listing both attempts.
func TestBothFailEmptyAndTypedError(t *testing.T) {
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){
		"primary":  content("not json at all"),
		"fallback": failing(&ChatError{Kind: KindHTTPStatus, StatusCode: 500, Message: "HTTP 500: boom"}),
	}}
	s := newSel(t, fc, cfgWith(nil))
	calls, err := s.SelectToolCalls(context.Background(), testRequest(t))
	require.Error(t, err)
	assert.NotNil(t, calls)
	assert.Empty(t, calls)
	assert.ErrorIs(t, err, ErrFailClosed)
	var se *SelectionError
	require.ErrorAs(t, err, &se)
	require.Len(t, se.Attempts, 2)
	assert.Equal(t, "primary", se.Attempts[0].Model)
	assert.Equal(t, KindParse, se.Attempts[0].Kind)
	assert.Equal(t, "fallback", se.Attempts[1].Model)
	assert.Equal(t, KindHTTPStatus, se.Attempts[1].Kind)
	assert.Contains(t, err.Error(), "HTTP 500: boom")

	r, err := s.Select(context.Background(), testRequest(t))
	require.Error(t, err)
	assert.Empty(t, r.Calls)
	assert.Len(t, r.Attempts, 2)
}

func TestNoFallbackConfiguredOneAttempt(t *testing.T) {
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content("nope")}}
	s := newSel(t, fc, cfgWith(func(c *Config) { c.FallbackModel = "" }))
	_, err := s.Select(context.Background(), testRequest(t))
	var se *SelectionError
	require.ErrorAs(t, err, &se)
	assert.Len(t, se.Attempts, 1)
	assert.Equal(t, []string{"primary"}, fc.models())
}

func TestZeroCallsIsSuccess(t *testing.T) {
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(`{"calls":[]}`)}}
	r, err := newSel(t, fc, cfgWith(nil)).Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	assert.Empty(t, r.Calls)
	assert.NotNil(t, r.Calls)
	assert.Equal(t, []string{"primary"}, fc.models())
}

func TestRejectedCallsFailClosed(t *testing.T) {
	cases := map[string]struct {
		reply  string
		reason DropReason
	}{
		"invented tool":      {`{"calls":[{"tool":"launch_rockets","args":{}}]}`, DropUnknownTool},
		"unsafe tool":        {`{"calls":[{"tool":"delete_files","args":{"path":"/"}}]}`, DropNotOffered},
		"role-excluded tool": {`{"calls":[{"tool":"admin_reset","args":{}}]}`, DropNotOffered},
		"invalid args":       {`{"calls":[{"tool":"get_weather","args":{"units":"k"}}]}`, DropInvalidArgs},
		"one bad among good": {`{"calls":[{"tool":"search","args":{"query":"x"}},{"tool":"search","args":{"query":""}}]}`, DropInvalidArgs},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(tc.reply), "fallback": content(tc.reply)}}
			r, err := newSel(t, fc, cfgWith(nil)).Select(context.Background(), testRequest(t))
			require.ErrorIs(t, err, ErrFailClosed)
			assert.Empty(t, r.Calls)
			require.Len(t, r.Attempts, 2)
			for _, a := range r.Attempts {
				assert.Equal(t, KindValidation, a.Kind)
				require.NotEmpty(t, a.Rejected)
				assert.Equal(t, tc.reason, a.Rejected[len(a.Rejected)-1].Reason)
			}
		})
	}
}

func TestInvalidArgsMessageNamesPointerAndRule(t *testing.T) {
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(`{"calls":[{"tool":"get_weather","args":{"city":"Paris","units":"k"}}]}`)}}
	r, err := newSel(t, fc, cfgWith(func(c *Config) { c.FallbackModel = "" })).Select(context.Background(), testRequest(t))
	require.Error(t, err)
	msg := r.Attempts[0].Message
	assert.Contains(t, msg, "/units")
	assert.Contains(t, msg, "enum")
}

func TestFailOpenDropsOnlyInvalid(t *testing.T) {
	reply := `{"calls":[
		{"tool":"search","args":{"query":"a"}},
		{"tool":"launch_rockets","args":{}},
		{"tool":"delete_files","args":{"path":"/"}},
		{"tool":"get_weather","args":{}},
		{"tool":"get_weather","args":{"city":"Rome"}}]}`
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(reply)}}
	r, err := newSel(t, fc, cfgWith(func(c *Config) { c.FailOpen = true })).Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	require.Len(t, r.Calls, 2)
	assert.Equal(t, "search", r.Calls[0].Tool)
	assert.Equal(t, "get_weather", r.Calls[1].Tool)
	var reasons []DropReason
	for _, d := range r.Dropped {
		reasons = append(reasons, d.Reason)
	}
	assert.Equal(t, []DropReason{DropUnknownTool, DropNotOffered, DropInvalidArgs}, reasons)
	assert.Equal(t, []string{"primary"}, fc.models(), "a fail-open success does not call the fallback")
	assert.True(t, r.Attempts[0].OK)
	assert.Len(t, r.Attempts[0].Rejected, 3)
}

func TestFailOpenCapAfterDropping(t *testing.T) {
	var calls []string
	for i := range 4 {
		calls = append(calls, `{"tool":"nope","args":{}}`, fmt.Sprintf(`{"tool":"search","args":{"query":"q%d"}}`, i))
	}
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(`{"calls":[` + strings.Join(calls, ",") + `]}`)}}
	r, err := newSel(t, fc, cfgWith(func(c *Config) { c.FailOpen = true; c.MaxCalls = 3 })).Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	require.Len(t, r.Calls, 3)
	assert.JSONEq(t, `{"query":"q2"}`, string(r.Calls[2].Args))
	assert.Len(t, r.Dropped, 5)
}

func TestFiltersDecideWhatIsOffered(t *testing.T) {
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(`{"calls":[{"tool":"delete_files","args":{"path":"/tmp/x"}},{"tool":"admin_reset","args":{}}]}`)}}
	s := newSel(t, fc, cfgWith(nil))

	req := testRequest(t)
	ss, err := s.Begin(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, []string{"search", "get_weather", "send.email", "tail_logs"}, ss.Offered())
	sys := ss.Next().Chat.Messages[0].Content
	assert.NotContains(t, sys, "delete_files")
	assert.NotContains(t, sys, "admin_reset")

	req.AllowUnsafe, req.Roles = true, []string{"admin"}
	r, err := s.Select(context.Background(), req)
	require.NoError(t, err)
	assert.Len(t, r.Calls, 2)
	assert.Contains(t, r.Offered, "delete_files")

	req = testRequest(t)
	req.Capabilities = []string{"readOnly"}
	ss, err = s.Begin(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, []string{"tail_logs"}, ss.Offered())
}

func TestPrefilterNarrowsNeverWidens(t *testing.T) {
	outsider := registry.New(nil)
	require.NoError(t, outsider.Register(registry.NewTool("delete_files", "x", json.RawMessage(`{"type":"object"}`))))
	var gotQuery string
	pf := func(ctx context.Context, q string, eligible []*registry.Entry) ([]*registry.Entry, error) {
		gotQuery = q
		return append([]*registry.Entry{outsider.Entries()[0], eligible[1]}, eligible[1]), nil
	}
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(`{"calls":[{"tool":"search","args":{"query":"x"}}]}`)}}
	s := newSel(t, fc, cfgWith(nil), withPrefilter(pf))
	r, err := s.Select(context.Background(), testRequest(t))
	require.ErrorIs(t, err, ErrFailClosed, "search was filtered out, so calling it fails closed")
	assert.Equal(t, []string{"get_weather"}, r.Offered)
	assert.Equal(t, "weather paris email", gotQuery)
	assert.Equal(t, DropNotOffered, r.Attempts[0].Rejected[0].Reason)

	req := testRequest(t)
	req.Query = ""
	_, _ = s.Begin(context.Background(), req)
	assert.Contains(t, gotQuery, "Find the weather in Paris")
	assert.Contains(t, gotQuery, "send the email")
}

// Whatever order the prefilter returns, the offered tools (and so the prompt
// bytes) follow the catalog order.
func TestPrefilterOrderIsCatalogOrder(t *testing.T) {
	reversed := func(ctx context.Context, q string, eligible []*registry.Entry) ([]*registry.Entry, error) {
		out := make([]*registry.Entry, 0, len(eligible))
		for i := len(eligible) - 1; i >= 0; i-- {
			out = append(out, eligible[i])
		}
		return out, nil
	}
	identity := func(ctx context.Context, q string, eligible []*registry.Entry) ([]*registry.Entry, error) {
		return eligible, nil
	}
	a, err := newSel(t, &fakeClient{}, cfgWith(nil), withPrefilter(reversed)).Begin(context.Background(), testRequest(t))
	require.NoError(t, err)
	b, err := newSel(t, &fakeClient{}, cfgWith(nil), withPrefilter(identity)).Begin(context.Background(), testRequest(t))
	require.NoError(t, err)
	assert.Equal(t, b.Offered(), a.Offered())
	assert.Equal(t, string(b.Next().JSON()), string(a.Next().JSON()), "same tools, same prompt bytes")
}

// A request's own Prefilter replaces the selector's, and still only narrows.
func TestRequestPrefilterOverridesTheSelectors(t *testing.T) {
	first := func(ctx context.Context, q string, eligible []*registry.Entry) ([]*registry.Entry, error) {
		return eligible[:1], nil
	}
	last := func(ctx context.Context, q string, eligible []*registry.Entry) ([]*registry.Entry, error) {
		return eligible[len(eligible)-1:], nil
	}
	s := newSel(t, &fakeClient{}, cfgWith(nil), withPrefilter(first))
	a, err := s.Begin(context.Background(), testRequest(t))
	require.NoError(t, err)
	req := testRequest(t)
	req.Prefilter = last
	b, err := s.Begin(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, a.Offered(), 1)
	require.Len(t, b.Offered(), 1)
	assert.NotEqual(t, a.Offered(), b.Offered())
	all, err := newSel(t, &fakeClient{}, cfgWith(nil)).Begin(context.Background(), testRequest(t))
	require.NoError(t, err)
	assert.Equal(t, all.Offered()[len(all.Offered())-1:], b.Offered())
}

func TestPrefilterError(t *testing.T) {
	boom := errors.New("index unavailable")
	s := newSel(t, &fakeClient{}, cfgWith(nil), withPrefilter(func(context.Context, string, []*registry.Entry) ([]*registry.Entry, error) {
		return nil, boom
	}))
	r, err := s.Select(context.Background(), testRequest(t))
	require.ErrorIs(t, err, boom)
	assert.Equal(t, "prefilter", ErrorKind(err))
	assert.Empty(t, r.Calls)
}

func TestNothingEligibleIsAKindAndAsksNoModel(t *testing.T) {
	fc := &fakeClient{}
	req := testRequest(t)
	req.Capabilities = []string{"teleport"}
	r, err := newSel(t, fc, cfgWith(nil)).Select(context.Background(), req)
	require.ErrorIs(t, err, ErrNoEligibleTools)
	require.ErrorIs(t, err, ErrFailClosed)
	assert.Equal(t, string(EmptyNoEligibleTools), ErrorKind(err))
	assert.Contains(t, err.Error(), "none of the 6 registered tools is eligible: 1 unsafe (allow_unsafe is off), 1 restricted to roles the caller does not hold, 4 lacking a required capability")
	assert.Empty(t, r.Calls)
	assert.Empty(t, r.Attempts)
	assert.Empty(t, r.Offered)
	assert.Empty(t, fc.models(), "no request was sent")

	empty := Request{Task: Task{Description: "x"}, Registry: registry.New(nil)}
	_, err = newSel(t, fc, cfgWith(nil)).Select(context.Background(), empty)
	require.ErrorIs(t, err, ErrNoEligibleTools)
	assert.Contains(t, err.Error(), "the registry is empty")
	assert.Empty(t, fc.models())
}

func TestBadRequests(t *testing.T) {
	s := newSel(t, &fakeClient{}, cfgWith(nil))
	_, err := s.Select(context.Background(), Request{Task: Task{Description: "x"}})
	assert.ErrorIs(t, err, ErrBadRequest)
	req := testRequest(t)
	req.Task.Description, req.Query = " ", ""
	_, err = s.Select(context.Background(), req)
	assert.ErrorIs(t, err, ErrBadRequest)
	req = testRequest(t)
	req.Context = map[string]any{"f": func() {}}
	_, err = s.Select(context.Background(), req)
	assert.ErrorIs(t, err, ErrBadRequest)
	noClient := newSel(t, nil, nil)
	_, err = noClient.Select(context.Background(), testRequest(t))
	assert.ErrorIs(t, err, ErrNoClient)
}

func TestPerAttemptTimeoutFromContext(t *testing.T) {
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(`{"calls":[]}`)}}
	s := newSel(t, fc, cfgWith(func(c *Config) { c.Timeout = 30 * time.Second }))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := s.Select(ctx, testRequest(t))
	require.NoError(t, err)
	assert.LessOrEqual(t, fc.seen[0].Timeout, 2*time.Second)
	assert.Greater(t, fc.seen[0].Timeout, time.Second)

	_, err = s.Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	assert.Equal(t, 30*time.Second, fc.seen[1].Timeout)
}

func TestCanceledContextStopsWithoutCalling(t *testing.T) {
	fc := &fakeClient{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := newSel(t, fc, cfgWith(nil)).Select(ctx, testRequest(t))
	require.ErrorIs(t, err, ErrFailClosed)
	require.Len(t, r.Attempts, 2)
	assert.Equal(t, KindCanceled, r.Attempts[0].Kind)
	assert.Empty(t, fc.models())
}

func TestExpiredDeadlineRecordsTimeouts(t *testing.T) {
	fc := &fakeClient{}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	r, err := newSel(t, fc, cfgWith(nil)).Select(ctx, testRequest(t))
	require.ErrorIs(t, err, ErrFailClosed)
	require.Len(t, r.Attempts, 2)
	for _, a := range r.Attempts {
		assert.Equal(t, KindTimeout, a.Kind)
	}
	assert.Empty(t, fc.models())
}

func TestClassifyClientErrors(t *testing.T) {
	cases := []struct {
		err  error
		want FailureKind
	}{
		{context.DeadlineExceeded, KindTimeout},
		{fmt.Errorf("wrapped: %w", context.Canceled), KindCanceled},
		{ErrEmptyChoices, KindEmptyChoices},
		{&tooLargeError{limit: 1}, KindResponseTooLarge},
		{errors.New("connection reset"), KindTransport},
		{&ChatError{Kind: "weird", Message: "x"}, KindTransport},
		{&ChatError{Kind: KindHTTPStatus, Message: "x"}, KindHTTPStatus},
	}
	for _, tc := range cases {
		k, _ := classify(tc.err)
		assert.Equal(t, tc.want, k, "%v", tc.err)
	}
}

func TestNativeModeWithFakeClient(t *testing.T) {
	req := testRequest(t)
	mapped := req.Registry.ProviderName(registry.FormatOpenAI, "send.email")
	require.NotEqual(t, "send.email", mapped)
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": func(cr ChatRequest) (ChatResponse, error) {
		return ChatResponse{ToolCalls: []NativeCall{
			{ID: "1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "2", Name: mapped, Arguments: `"{\"to\":\"bob\"}"`},
		}}, nil
	}}}
	r, err := newSel(t, fc, cfgWith(func(c *Config) { c.Mode = ModeNative })).Select(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, r.Calls, 2)
	assert.Equal(t, "send.email", r.Calls[1].Tool, "mapped names come back canonical")
	assert.JSONEq(t, `{"to":"bob"}`, string(r.Calls[1].Args))
	sent := fc.seen[0]
	assert.Empty(t, sent.ResponseFormat)
	require.Len(t, sent.Tools, 4)
	assert.Contains(t, string(sent.Tools[2]), mapped)
}

func TestNativeModeNoToolCallsIsZeroCalls(t *testing.T) {
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content("No tool is needed.")}}
	r, err := newSel(t, fc, cfgWith(func(c *Config) { c.Mode = ModeNative })).Select(context.Background(), testRequest(t))
	require.NoError(t, err)
	assert.Empty(t, r.Calls)
}

func TestNativeModeBadArguments(t *testing.T) {
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": func(ChatRequest) (ChatResponse, error) {
		return ChatResponse{ToolCalls: []NativeCall{{Name: "get_weather", Arguments: `[1,2]`}}}, nil
	}}}
	r, err := newSel(t, fc, cfgWith(func(c *Config) { c.Mode = ModeNative; c.FallbackModel = "" })).Select(context.Background(), testRequest(t))
	require.ErrorIs(t, err, ErrFailClosed)
	assert.Equal(t, KindParse, r.Attempts[0].Kind)
}

func TestConcurrentSelect(t *testing.T) {
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(validReply)}}
	s := newSel(t, fc, cfgWith(nil))
	req := testRequest(t)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := s.Select(context.Background(), req)
			errs <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
}

func TestMappedNameInJSONModeResolves(t *testing.T) {
	req := testRequest(t)
	mapped := req.Registry.ProviderName(registry.FormatOpenAI, "send.email")
	fc := &fakeClient{replies: map[string]func(ChatRequest) (ChatResponse, error){"primary": content(`{"calls":[{"tool":"` + mapped + `","args":{"to":"bob"}}]}`)}}
	r, err := newSel(t, fc, cfgWith(nil)).Select(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, r.Calls, 1)
	assert.Equal(t, "send.email", r.Calls[0].Tool)
}
