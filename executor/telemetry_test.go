package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/internal/telemetry"
	"github.com/toolselect/toolselect/internal/testing/telemetrytest"
)

func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func onlySpan(t *testing.T, rec *tracetest.SpanRecorder) sdktrace.ReadOnlySpan {
	t.Helper()
	spans := rec.Ended()
	require.Len(t, spans, 1)
	return spans[0]
}

// One execute_tool span per call, named and attributed as the GenAI
// execute_tool span convention says, under the caller's span.
func TestExecuteToolSpan(t *testing.T) {
	rec, _ := telemetrytest.Install(t)
	ex, _ := fixture(t, nil)
	ctx, parent := otel.Tracer("test").Start(context.Background(), "agent turn")
	_, err := ex.Call(ctx, executor.Call{ID: "call_1", Tool: "echo", Args: json.RawMessage(`{"msg":"ARGSECRET"}`)})
	parent.End()
	require.NoError(t, err)
	var s sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.Name() == "execute_tool echo" {
			s = sp
		}
	}
	require.NotNil(t, s)
	assert.Equal(t, trace.SpanKindInternal, s.SpanKind())
	assert.Equal(t, parent.SpanContext().SpanID(), s.Parent().SpanID())
	a := spanAttrs(s)
	assert.Equal(t, "execute_tool", a["gen_ai.operation.name"].AsString())
	assert.Equal(t, "echo", a["gen_ai.tool.name"].AsString())
	assert.Equal(t, "call_1", a["gen_ai.tool.call.id"].AsString())
	assert.Equal(t, "ok", a["toolselect.outcome"].AsString())
	assert.Equal(t, "schema", a["toolselect.policy"].AsString())
	_, hasErr := a["error.type"]
	assert.False(t, hasErr)
	assert.Equal(t, codes.Unset, s.Status().Code)
	for _, k := range []attribute.Key{"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
		_, has := a[k]
		assert.False(t, has, "%s without content capture", k)
	}
}

// A call without an ID has no gen_ai.tool.call.id (not an empty one).
func TestExecuteToolSpanWithoutCallID(t *testing.T) {
	rec, _ := telemetrytest.Install(t)
	ex, _ := fixture(t, nil)
	_, err := ex.Call(context.Background(), call("echo", `{"msg":"x"}`))
	require.NoError(t, err)
	_, has := spanAttrs(onlySpan(t, rec))["gen_ai.tool.call.id"]
	assert.False(t, has)
}

// Failed calls: error.type is the outcome, the status Error; a refusal
// names its rule; no argument, result or approver text without capture.
func TestExecuteToolSpanFailures(t *testing.T) {
	rec, _ := telemetrytest.Install(t)
	deny := func(context.Context, executor.ApprovalRequest) (executor.Approval, error) {
		return executor.Approval{By: "bob", Reason: "REASONSECRET"}, nil
	}
	ex, _ := fixture(t, &executor.Options{Approver: deny})
	var all []sdktrace.ReadOnlySpan
	for _, c := range []struct {
		call    executor.Call
		outcome string
		refusal string
	}{
		// With an approver an unsafe tool is asked about, and bob says no.
		{call("danger", `{"msg":"ARGSECRET"}`), "refused", "approval denied"},
		{call("runbook", `{"name":"ARGSECRET"}`), "refused", "approval denied"},
		{call("echo", `{"msg":""}`), "invalid", ""},
		{call("no such tool", `{"msg":"ARGSECRET"}`), "invalid", ""},
	} {
		all = append(all, rec.Ended()...)
		rec.Reset()
		_, err := ex.Call(context.Background(), c.call)
		require.Error(t, err)
		s := onlySpan(t, rec)
		a := spanAttrs(s)
		assert.Equal(t, c.outcome, a["error.type"].AsString(), c.call.Tool)
		assert.Equal(t, c.outcome, a["toolselect.outcome"].AsString())
		assert.Equal(t, codes.Error, s.Status().Code)
		assert.Equal(t, c.outcome, s.Status().Description)
		if c.refusal != "" {
			assert.Contains(t, a["toolselect.policy.refusal"].AsString(), c.refusal)
		}
	}
	all = append(all, rec.Ended()...)
	rec.Reset()
	ctx := context.Background()
	ex2, _ := fixture(t, &executor.Options{Approver: deny, Roles: []string{"sre"}})
	require.NoError(t, ex2.Handle("deploy", func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("RESULTSECRET") }))
	res, err := ex2.Call(ctx, call("deploy", `{"msg":"ARGSECRET"}`))
	require.NoError(t, err)
	require.True(t, res.IsError)
	s := onlySpan(t, rec)
	assert.Equal(t, "tool_error", spanAttrs(s)["error.type"].AsString())

	all = append(all, rec.Ended()...)
	require.Len(t, all, 5)
	for _, sp := range all {
		for _, kv := range sp.Attributes() {
			for _, secret := range []string{"ARGSECRET", "RESULTSECRET", "REASONSECRET", "bob"} {
				assert.NotContains(t, kv.Value.Emit(), secret, "%s %s", sp.Name(), kv.Key)
			}
		}
		assert.NotContains(t, sp.Status().Description, "SECRET")
	}
}

// With content capture on, arguments are recorded, the result only of a
// call that succeeded, and the approver's words in the refusal.
func TestExecuteToolSpanContent(t *testing.T) {
	defer telemetry.SetCaptureContent(true)()
	rec, _ := telemetrytest.Install(t)
	deny := func(context.Context, executor.ApprovalRequest) (executor.Approval, error) {
		return executor.Approval{By: "bob", Reason: "freeze"}, nil
	}
	ex, _ := fixture(t, &executor.Options{Approver: deny})
	_, err := ex.Call(context.Background(), call("echo", `{"msg":"hello"}`))
	require.NoError(t, err)
	a := spanAttrs(onlySpan(t, rec))
	assert.JSONEq(t, `{"msg":"hello"}`, a["gen_ai.tool.call.arguments"].AsString())
	assert.JSONEq(t, `{"msg":"hello"}`, a["gen_ai.tool.call.result"].AsString())

	rec.Reset()
	require.NoError(t, ex.Handle("echo", func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("disk full") }))
	_, err = ex.Call(context.Background(), call("echo", `{"msg":"hello"}`))
	require.NoError(t, err)
	_, hasResult := spanAttrs(onlySpan(t, rec))["gen_ai.tool.call.result"]
	assert.False(t, hasResult, "no result for a call that failed")

	rec.Reset()
	_, err = ex.Call(context.Background(), call("runbook", `{}`))
	require.Error(t, err)
	assert.Contains(t, spanAttrs(onlySpan(t, rec))["toolselect.policy.refusal"].AsString(), "denied by bob: freeze")
}
