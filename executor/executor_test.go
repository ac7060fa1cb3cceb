package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/internal/testing/exectest"
	"github.com/toolselect/toolselect/registry"
)

const msgSchema = exectest.MsgSchema

// The shared helpers (internal/testing/exectest), under this file's names.
var (
	echo             = exectest.Echo
	call             = exectest.Call
	callError        = exectest.CallError
	onlyRecord       = exectest.OnlyRecord
	registryWithEcho = exectest.RegistryWithEcho
)

type recordSink = exectest.RecordSink

func tool(name, schema string, mod ...func(*registry.Tool)) registry.Tool {
	t := registry.NewTool(name, "test tool "+name, json.RawMessage(schema))
	if schema == "" {
		t.Parameters = nil
	}
	for _, m := range mod {
		m(&t)
	}
	return t
}

func noSchema(mode registry.NoSchemaMode, caps ...string) func(*registry.Tool) {
	return func(t *registry.Tool) {
		t.AllowNoSchema, t.NoSchemaMode, t.Capabilities = true, mode, caps
	}
}

// fixture returns a registry of test tools; every tool is bound to echo
// unless the test binds something else.

func fixture(t *testing.T, opts *executor.Options) (*executor.Executor, *recordSink) {
	t.Helper()
	return exectest.Executor(t, []registry.Tool{
		tool("echo", msgSchema),
		tool("ops.restart service", msgSchema), // needs provider name mapping
		tool("danger", msgSchema, func(t *registry.Tool) { t.Safe = false }),
		tool("deploy", msgSchema, func(t *registry.Tool) { t.Roles = []string{"sre", "release-manager"} }),
		tool("status", "", noSchema(registry.NoSchemaReadOnly, registry.CapabilityReadOnly)),
		tool("status_rw", "", noSchema(registry.NoSchemaReadOnly)),
		tool("runbook", "", noSchema(registry.NoSchemaHumanApproval)),
		tool("anything", "", noSchema(registry.NoSchemaFull)),
		tool("unbound", msgSchema),
	}, opts, "echo", "ops.restart service", "danger", "deploy", "status", "status_rw", "runbook", "anything")
}

func TestCallOK(t *testing.T) {
	ex, sink := fixture(t, nil)
	res, err := ex.Call(context.Background(), executor.Call{ID: "c1", Tool: "echo", Args: json.RawMessage(`{ "msg" : "hi" }`)})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, executor.OutcomeOK, res.Outcome)
	assert.Equal(t, map[string]any{"msg": "hi"}, res.Value)
	assert.Equal(t, `{"msg":"hi"}`, res.Content())

	rec := onlyRecord(t, sink)
	assert.Equal(t, "c1", rec.ID)
	assert.Equal(t, "echo", rec.Tool)
	assert.JSONEq(t, `{"msg":"hi"}`, string(rec.Args))
	assert.True(t, rec.Validated)
	assert.False(t, rec.Repaired)
	assert.Equal(t, "schema", rec.Policy)
	assert.Empty(t, rec.ApprovedBy)
	assert.Equal(t, executor.OutcomeOK, rec.Outcome)
	assert.Empty(t, rec.Error)
	assert.Positive(t, rec.Duration)
	assert.False(t, rec.Start.IsZero())
}

func TestHydrateProviderToolCall(t *testing.T) {
	ex, sink := fixture(t, nil)
	mapped := ex.Registry().ProviderName(registry.FormatOpenAI, "ops.restart service")
	require.NotEqual(t, "ops.restart service", mapped)

	// An OpenAI assistant message: arguments arrive as a JSON string, the name as mapped.
	msg := fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[
		{"id":"call_9","type":"function","function":{"name":%q,"arguments":"{\"msg\":\"restart\"}"}}]}`, mapped)
	calls, err := executor.ParseToolCalls([]byte(msg))
	require.NoError(t, err)
	require.Len(t, calls, 1)

	inv, err := ex.Hydrate(context.Background(), calls[0])
	require.NoError(t, err)
	assert.Equal(t, "ops.restart service", inv.Tool)
	assert.Equal(t, "call_9", inv.ID)
	assert.JSONEq(t, `{"msg":"restart"}`, string(inv.Args))
	assert.True(t, inv.Validated)
	assert.Empty(t, sink.Records(), "a successful hydrate is audited when it runs")

	res, err := ex.Run(context.Background(), inv)
	require.NoError(t, err)
	assert.Equal(t, "call_9", res.ID)
	rec := onlyRecord(t, sink)
	assert.Equal(t, "ops.restart service", rec.Tool)
	assert.Equal(t, executor.OutcomeOK, rec.Outcome)
}

func TestHydrateArgsForms(t *testing.T) {
	ex, _ := fixture(t, nil)
	for name, args := range map[string]string{
		"object":        `{"msg":"x"}`,
		"json string":   `"{\"msg\":\"x\"}"`,
		"padded string": `"  {\"msg\":\"x\"}  "`,
	} {
		t.Run(name, func(t *testing.T) {
			inv, err := ex.Hydrate(context.Background(), call("echo", args))
			require.NoError(t, err)
			assert.JSONEq(t, `{"msg":"x"}`, string(inv.Args))
		})
	}
	for name, args := range map[string]string{"empty": ``, "null": `null`, "empty string": `""`} {
		t.Run(name, func(t *testing.T) {
			inv, err := ex.Hydrate(context.Background(), call("anything", args))
			require.NoError(t, err)
			assert.Equal(t, `{}`, string(inv.Args))
		})
	}
	t.Run("not JSON", func(t *testing.T) {
		_, err := ex.Hydrate(context.Background(), call("echo", `"{msg: x}"`))
		ce := callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
		require.Len(t, ce.Violations, 1)
		assert.Equal(t, "json", ce.Violations[0].Rule)
	})
	t.Run("array", func(t *testing.T) {
		_, err := ex.Hydrate(context.Background(), call("anything", `[1]`))
		callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
	})
}

func TestParseToolCalls(t *testing.T) {
	cases := map[string]struct {
		in   string
		want []executor.Call
	}{
		"openai chat": {
			`[{"id":"a","type":"function","function":{"name":"echo","arguments":"{\"msg\":\"1\"}"}}]`,
			[]executor.Call{{ID: "a", Tool: "echo", Args: json.RawMessage(`"{\"msg\":\"1\"}"`)}},
		},
		"openai responses": {
			`[{"type":"function_call","call_id":"r1","name":"echo","arguments":"{}"}]`,
			[]executor.Call{{ID: "r1", Tool: "echo", Args: json.RawMessage(`"{}"`)}},
		},
		"anthropic content": {
			`{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"tu1","name":"echo","input":{"msg":"2"}}]}`,
			[]executor.Call{{ID: "tu1", Tool: "echo", Args: json.RawMessage(`{"msg":"2"}`)}},
		},
		"mcp params": {
			`{"name":"echo","arguments":{"msg":"3"}}`,
			[]executor.Call{{Tool: "echo", Args: json.RawMessage(`{"msg":"3"}`)}},
		},
		"toolselect calls": {
			`{"calls":[{"tool":"echo","args":{"msg":"4"},"reasoning":"why"}]}`,
			[]executor.Call{{Tool: "echo", Args: json.RawMessage(`{"msg":"4"}`), Reasoning: "why"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := executor.ParseToolCalls([]byte(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	for _, bad := range []string{``, `42`, `[{"type":"function","function":{"arguments":"{}"}}]`, `[1]`} {
		_, err := executor.ParseToolCalls([]byte(bad))
		assert.Error(t, err, "input %q", bad)
	}
}

func TestUnknownTool(t *testing.T) {
	ex, sink := fixture(t, nil)
	_, err := ex.Call(context.Background(), call("invented", `{}`))
	ce := callError(t, err, executor.OutcomeInvalid, executor.ErrUnknownTool)
	assert.Equal(t, "invented", ce.Tool)
	rec := onlyRecord(t, sink)
	assert.Equal(t, executor.OutcomeInvalid, rec.Outcome)
	assert.Equal(t, "invented", rec.Tool)
	assert.False(t, rec.Validated)
	assert.Contains(t, rec.Error, "unknown tool")
}

// A misspelt name is answered with the nearest names the caller may run
// (the ranker's suggestion order); a tool the caller may not run is not
// named.
func TestUnknownToolSuggests(t *testing.T) {
	ex, sink := fixture(t, nil)
	_, err := ex.Call(context.Background(), call("ecoh", `{}`))
	callError(t, err, executor.OutcomeInvalid, executor.ErrUnknownTool)
	assert.Contains(t, err.Error(), `unknown tool "ecoh" (did you mean "echo"?)`)
	assert.Contains(t, onlyRecord(t, sink).Error, `did you mean "echo"`)

	_, err = ex.Call(context.Background(), call("dangr", `{}`))
	assert.NotContains(t, err.Error(), "danger", "an unsafe tool this caller may not run is not suggested")
	ex2, _ := fixture(t, &executor.Options{AllowUnsafe: true})
	_, err = ex2.Call(context.Background(), call("dangr", `{}`))
	assert.Contains(t, err.Error(), `did you mean "danger"`)
}

func TestNoHandler(t *testing.T) {
	ex, sink := fixture(t, nil)
	_, err := ex.Call(context.Background(), call("unbound", `{"msg":"x"}`))
	callError(t, err, executor.OutcomeRefused, executor.ErrNoHandler)
	assert.Equal(t, executor.OutcomeRefused, onlyRecord(t, sink).Outcome)
	assert.Error(t, ex.Handle("nope", echo), "binding an unregistered tool")
	assert.ErrorIs(t, ex.Handle("nope", echo), registry.ErrUnknownTool)
}

func TestInvalidArgs(t *testing.T) {
	ex, sink := fixture(t, nil)
	_, err := ex.Call(context.Background(), call("echo", `{"msg":"","extra":1}`))
	ce := callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
	assert.False(t, ce.RepairAttempted)
	rules := []string{}
	for _, v := range ce.Violations {
		rules = append(rules, v.Rule)
	}
	assert.ElementsMatch(t, []string{"additionalProperties", "minLength"}, rules)
	var ve *registry.ValidationError
	assert.True(t, errors.As(err, &ve), "the registry's violations stay reachable")
	rec := onlyRecord(t, sink)
	assert.Equal(t, executor.OutcomeInvalid, rec.Outcome)
	assert.JSONEq(t, `{"msg":"","extra":1}`, string(rec.Args))
}

// countingRepairer records what it was shown and answers from a script.
type countingRepairer struct {
	calls  atomic.Int32
	last   executor.RepairRequest
	answer string
	err    error
}

func (r *countingRepairer) RepairArgs(_ context.Context, req executor.RepairRequest) (json.RawMessage, error) {
	r.calls.Add(1)
	r.last = req
	return json.RawMessage(r.answer), r.err
}

func TestRepair(t *testing.T) {
	t.Run("success", func(t *testing.T) {
		rep := &countingRepairer{answer: `{"msg":"fixed"}`}
		ex, sink := fixture(t, &executor.Options{Repairer: rep.RepairArgs})
		res, err := ex.Call(context.Background(), call("echo", `{"message":"fixed"}`))
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"msg": "fixed"}, res.Value)
		assert.EqualValues(t, 1, rep.calls.Load())
		// The model is shown the tool, its schema, the args and every violation.
		assert.Equal(t, "echo", rep.last.Tool)
		assert.JSONEq(t, msgSchema, string(rep.last.Schema))
		assert.JSONEq(t, `{"message":"fixed"}`, string(rep.last.Args))
		require.NotEmpty(t, rep.last.Violations)
		rec := onlyRecord(t, sink)
		assert.True(t, rec.Repaired)
		assert.True(t, rec.Validated)
		assert.JSONEq(t, `{"msg":"fixed"}`, string(rec.Args))
		assert.JSONEq(t, `{"message":"fixed"}`, string(rec.OriginalArgs))
	})
	t.Run("repaired args still invalid: no second repair", func(t *testing.T) {
		rep := &countingRepairer{answer: `{"msg":42}`}
		ex, sink := fixture(t, &executor.Options{Repairer: rep.RepairArgs})
		_, err := ex.Call(context.Background(), call("echo", `{}`))
		ce := callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
		assert.True(t, ce.RepairAttempted)
		assert.NoError(t, ce.RepairErr)
		assert.Equal(t, "type", ce.Violations[0].Rule, "violations are those of the repaired args")
		assert.EqualValues(t, 1, rep.calls.Load())
		assert.Contains(t, err.Error(), "after one repair attempt")
		rec := onlyRecord(t, sink)
		assert.Equal(t, executor.OutcomeInvalid, rec.Outcome)
		assert.True(t, rec.Repaired)
	})
	t.Run("repairer fails", func(t *testing.T) {
		rep := &countingRepairer{err: errors.New("model unavailable")}
		ex, _ := fixture(t, &executor.Options{Repairer: rep.RepairArgs})
		_, err := ex.Call(context.Background(), call("echo", `{}`))
		ce := callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
		assert.EqualError(t, ce.RepairErr, "model unavailable")
		assert.Equal(t, "required", ce.Violations[0].Rule, "the original violations are kept")
		assert.EqualValues(t, 1, rep.calls.Load())
	})
	t.Run("repairer answers a JSON string", func(t *testing.T) {
		rep := &countingRepairer{answer: `"{\"msg\":\"s\"}"`}
		ex, _ := fixture(t, &executor.Options{Repairer: rep.RepairArgs})
		_, err := ex.Call(context.Background(), call("echo", `{}`))
		require.NoError(t, err)
	})
	t.Run("not asked for valid, unknown or refused calls", func(t *testing.T) {
		rep := &countingRepairer{answer: `{"msg":"x"}`}
		ex, _ := fixture(t, &executor.Options{Repairer: rep.RepairArgs})
		_, err := ex.Call(context.Background(), call("echo", `{"msg":"ok"}`))
		require.NoError(t, err)
		_, err = ex.Call(context.Background(), call("invented", `{}`))
		require.Error(t, err)
		_, err = ex.Call(context.Background(), call("danger", `{}`))
		callError(t, err, executor.OutcomeRefused, executor.ErrUnsafe)
		assert.EqualValues(t, 0, rep.calls.Load())
	})
}

type order struct {
	Count int `json:"count"`
}

func newOrder(args json.RawMessage) (func(context.Context) (any, error), error) {
	var o order
	if err := json.Unmarshal(args, &o); err != nil {
		return nil, err
	}
	if o.Count%2 != 0 {
		return nil, &registry.ValidationError{Tool: "order", Violations: []registry.Violation{{Pointer: "/count", Rule: "even", Message: "count must be even"}}}
	}
	if o.Count > 100 {
		return nil, errors.New("count is over the stock of 100")
	}
	return func(context.Context) (any, error) { return o.Count / 2, nil }, nil
}

func TestConstructor(t *testing.T) {
	rep := &countingRepairer{answer: `{"count":4}`}
	reg := registry.New(nil)
	require.NoError(t, reg.Register(tool("order", `{"type":"object","properties":{"count":{"type":"integer","minimum":0}},"required":["count"]}`)))
	sink := &recordSink{}
	ex := executor.New(reg, &executor.Options{Audit: sink.Audit})
	require.NoError(t, ex.HandleConstructor("order", newOrder))

	res, err := ex.Call(context.Background(), call("order", `{"count":6}`))
	require.NoError(t, err)
	assert.Equal(t, 3, res.Value)

	_, err = ex.Call(context.Background(), call("order", `{"count":3}`))
	ce := callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
	assert.Equal(t, []registry.Violation{{Pointer: "/count", Rule: "even", Message: "count must be even"}}, ce.Violations)

	_, err = ex.Call(context.Background(), call("order", `{"count":102}`))
	ce = callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
	assert.Equal(t, "constructor", ce.Violations[0].Rule)
	assert.Contains(t, ce.Violations[0].Message, "stock of 100")

	_, err = ex.Call(context.Background(), call("order", `{"count":-1}`))
	callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs) // the schema runs first

	// A constructor's refusal is repairable like a schema violation.
	ex2 := executor.New(reg, &executor.Options{Repairer: rep.RepairArgs})
	require.NoError(t, ex2.HandleConstructor("order", newOrder))
	res, err = ex2.Call(context.Background(), call("order", `{"count":3}`))
	require.NoError(t, err)
	assert.Equal(t, 2, res.Value)
	assert.Equal(t, "even", rep.last.Violations[0].Rule)
}

func TestUnsafePolicy(t *testing.T) {
	ex, sink := fixture(t, nil)
	_, err := ex.Call(context.Background(), call("danger", `{"msg":"x"}`))
	callError(t, err, executor.OutcomeRefused, executor.ErrUnsafe)
	rec := onlyRecord(t, sink)
	assert.Equal(t, executor.OutcomeRefused, rec.Outcome)
	assert.Equal(t, "unsafe", rec.Policy)
	// The rule is data: a front door with its own names shows Reason and
	// words its own hint; Go's message keeps Go's.
	var pr interface{ PolicyReason() string }
	require.ErrorAs(t, err, &pr)
	assert.Equal(t, `"danger" is marked unsafe`, pr.PolicyReason())
	assert.Contains(t, err.Error(), `unsafe tool not allowed: "danger" is marked unsafe (set Options.AllowUnsafe to run it)`)

	ex, sink = fixture(t, &executor.Options{AllowUnsafe: true})
	_, err = ex.Call(context.Background(), call("danger", `{"msg":"x"}`))
	require.NoError(t, err)
	assert.Equal(t, "schema,unsafe-allowed", onlyRecord(t, sink).Policy)
}

func TestRolePolicy(t *testing.T) {
	for _, tc := range []struct {
		roles []string
		ok    bool
	}{{nil, false}, {[]string{"dev"}, false}, {[]string{"dev", "sre"}, true}, {[]string{"release-manager"}, true}} {
		ex, _ := fixture(t, &executor.Options{Roles: tc.roles})
		_, err := ex.Call(context.Background(), call("deploy", `{"msg":"v1"}`))
		if tc.ok {
			assert.NoError(t, err, "roles %v", tc.roles)
		} else {
			callError(t, err, executor.OutcomeRefused, executor.ErrRoleDenied)
		}
		// A tool without roles is open to everyone.
		_, err = ex.Call(context.Background(), call("echo", `{"msg":"x"}`))
		assert.NoError(t, err)
	}
}

func TestNoSchemaModes(t *testing.T) {
	t.Run("read-only declared", func(t *testing.T) {
		ex, sink := fixture(t, nil)
		res, err := ex.Call(context.Background(), call("status", `{"anything":["goes"]}`))
		require.NoError(t, err)
		assert.Equal(t, executor.OutcomeOK, res.Outcome)
		rec := onlyRecord(t, sink)
		assert.False(t, rec.Validated, "allowNoSchema calls are audited validated:false")
		assert.Equal(t, "no-schema:read-only", rec.Policy)
	})
	t.Run("read-only undeclared", func(t *testing.T) {
		ex, sink := fixture(t, nil)
		_, err := ex.Call(context.Background(), call("status_rw", `{}`))
		callError(t, err, executor.OutcomeRefused, executor.ErrNotReadOnly)
		assert.Equal(t, executor.OutcomeRefused, onlyRecord(t, sink).Outcome)
	})
	t.Run("full", func(t *testing.T) {
		ex, sink := fixture(t, nil)
		_, err := ex.Call(context.Background(), call("anything", `{"x":1}`))
		require.NoError(t, err)
		rec := onlyRecord(t, sink)
		assert.False(t, rec.Validated)
		assert.Equal(t, executor.OutcomeOK, rec.Outcome)
		assert.Equal(t, "no-schema:full", rec.Policy)
	})
	t.Run("no-schema args must still be an object", func(t *testing.T) {
		ex, _ := fixture(t, nil)
		_, err := ex.Call(context.Background(), call("anything", `"not json"`))
		callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
	})
}

func TestHumanApproval(t *testing.T) {
	t.Run("no approver", func(t *testing.T) {
		ex, sink := fixture(t, nil)
		_, err := ex.Call(context.Background(), call("runbook", `{"name":"flush-cache"}`))
		callError(t, err, executor.OutcomeRefused, executor.ErrApprovalRequired)
		assert.Equal(t, executor.OutcomeRefused, onlyRecord(t, sink).Outcome)
	})
	t.Run("approved", func(t *testing.T) {
		var seen executor.ApprovalRequest
		ap := func(_ context.Context, req executor.ApprovalRequest) (executor.Approval, error) {
			seen = req
			return executor.Approval{Approved: true, By: "alice"}, nil
		}
		ex, sink := fixture(t, &executor.Options{Approver: ap})
		_, err := ex.Call(context.Background(), executor.Call{ID: "r1", Tool: "runbook", Args: json.RawMessage(`{"name":"flush-cache"}`)})
		require.NoError(t, err)
		assert.Equal(t, "runbook", seen.Tool.Name)
		assert.Equal(t, "r1", seen.ID)
		assert.JSONEq(t, `{"name":"flush-cache"}`, string(seen.Args))
		rec := onlyRecord(t, sink)
		assert.Equal(t, "alice", rec.ApprovedBy)
		assert.False(t, rec.Validated)
		assert.Equal(t, executor.OutcomeOK, rec.Outcome)
	})
	t.Run("denied", func(t *testing.T) {
		ap := func(context.Context, executor.ApprovalRequest) (executor.Approval, error) {
			return executor.Approval{Approved: false, By: "bob", Reason: "not during the freeze"}, nil
		}
		ran := false
		ex, sink := fixture(t, &executor.Options{Approver: ap})
		require.NoError(t, ex.Handle("runbook", func(context.Context, json.RawMessage) (any, error) { ran = true; return nil, nil }))
		_, err := ex.Call(context.Background(), call("runbook", `{}`))
		callError(t, err, executor.OutcomeRefused, executor.ErrApprovalDenied)
		assert.Contains(t, err.Error(), "denied by bob: not during the freeze")
		assert.False(t, ran)
		rec := onlyRecord(t, sink)
		assert.Equal(t, executor.OutcomeRefused, rec.Outcome)
		assert.Empty(t, rec.ApprovedBy)
	})
	t.Run("approver error", func(t *testing.T) {
		ap := func(context.Context, executor.ApprovalRequest) (executor.Approval, error) {
			return executor.Approval{}, errors.New("ticket system down")
		}
		ex, _ := fixture(t, &executor.Options{Approver: ap})
		_, err := ex.Call(context.Background(), call("runbook", `{}`))
		callError(t, err, executor.OutcomeRefused, executor.ErrApprovalDenied)
		assert.Contains(t, err.Error(), "ticket system down")
	})
	t.Run("context canceled while waiting", func(t *testing.T) {
		waiting := make(chan struct{})
		ap := func(ctx context.Context, _ executor.ApprovalRequest) (executor.Approval, error) {
			close(waiting)
			<-ctx.Done()
			return executor.Approval{}, ctx.Err()
		}
		ex, sink := fixture(t, &executor.Options{Approver: ap})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-waiting; cancel() }()
		_, err := ex.Call(ctx, call("runbook", `{}`))
		callError(t, err, executor.OutcomeCanceled, context.Canceled)
		assert.Equal(t, executor.OutcomeCanceled, onlyRecord(t, sink).Outcome)
	})
	t.Run("schema tools never wait for approval", func(t *testing.T) {
		ap := func(context.Context, executor.ApprovalRequest) (executor.Approval, error) {
			require.FailNow(t, "approver called for a schema tool")
			return executor.Approval{}, nil
		}
		ex, _ := fixture(t, &executor.Options{Approver: ap})
		_, err := ex.Call(context.Background(), call("echo", `{"msg":"x"}`))
		require.NoError(t, err)
	})
}

func TestToolErrorIsAResult(t *testing.T) {
	ex, sink := fixture(t, nil)
	require.NoError(t, ex.Handle("echo", func(context.Context, json.RawMessage) (any, error) {
		return nil, errors.New("disk full")
	}))
	res, err := ex.Call(context.Background(), call("echo", `{"msg":"x"}`))
	require.NoError(t, err, "a tool's own failure is not an error")
	assert.True(t, res.IsError)
	assert.Equal(t, "disk full", res.Error)
	assert.Equal(t, "disk full", res.Content())
	assert.Equal(t, executor.OutcomeToolError, res.Outcome)
	rec := onlyRecord(t, sink)
	assert.Equal(t, executor.OutcomeToolError, rec.Outcome)
	assert.Equal(t, "disk full", rec.Error)
}

func TestPanicIsAToolError(t *testing.T) {
	ex, _ := fixture(t, nil)
	require.NoError(t, ex.Handle("echo", func(context.Context, json.RawMessage) (any, error) { panic("boom") }))
	res, err := ex.Call(context.Background(), call("echo", `{"msg":"x"}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, executor.OutcomeToolError, res.Outcome)
	assert.Contains(t, res.Error, "panicked: boom")
}

func TestTimeout(t *testing.T) {
	t.Run("tool ignoring its context", func(t *testing.T) {
		ex, sink := fixture(t, &executor.Options{Timeout: time.Hour, ToolTimeouts: map[string]time.Duration{"echo": 20 * time.Millisecond}})
		release := make(chan struct{})
		defer close(release)
		require.NoError(t, ex.Handle("echo", func(context.Context, json.RawMessage) (any, error) {
			<-release
			return "late", nil
		}))
		start := time.Now()
		res, err := ex.Call(context.Background(), call("echo", `{"msg":"x"}`))
		require.NoError(t, err, "a timeout is the tool's failure, a result")
		assert.Less(t, time.Since(start), 5*time.Second)
		assert.True(t, res.IsError)
		assert.Equal(t, executor.OutcomeTimeout, res.Outcome)
		assert.Contains(t, res.Error, "timed out after 20ms")
		assert.Equal(t, executor.OutcomeTimeout, onlyRecord(t, sink).Outcome)
	})
	t.Run("executor-wide timeout reaches the handler's context", func(t *testing.T) {
		ex, _ := fixture(t, &executor.Options{Timeout: 20 * time.Millisecond})
		require.NoError(t, ex.Handle("echo", func(ctx context.Context, _ json.RawMessage) (any, error) {
			_, ok := ctx.Deadline()
			if !ok {
				return nil, errors.New("no deadline")
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}))
		res, err := ex.Call(context.Background(), call("echo", `{"msg":"x"}`))
		require.NoError(t, err)
		assert.Equal(t, executor.OutcomeTimeout, res.Outcome)
	})
	t.Run("negative means none", func(t *testing.T) {
		ex, _ := fixture(t, &executor.Options{Timeout: -1})
		require.NoError(t, ex.Handle("echo", func(ctx context.Context, _ json.RawMessage) (any, error) {
			_, ok := ctx.Deadline()
			return ok, nil
		}))
		res, err := ex.Call(context.Background(), call("echo", `{"msg":"x"}`))
		require.NoError(t, err)
		assert.Equal(t, false, res.Value)
	})
	t.Run("caller cancels during the run", func(t *testing.T) {
		ex, sink := fixture(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		require.NoError(t, ex.Handle("echo", func(c context.Context, _ json.RawMessage) (any, error) {
			cancel()
			<-c.Done()
			return nil, c.Err()
		}))
		_, err := ex.Call(ctx, call("echo", `{"msg":"x"}`))
		callError(t, err, executor.OutcomeCanceled, context.Canceled)
		assert.Equal(t, executor.OutcomeCanceled, onlyRecord(t, sink).Outcome)
	})
}

func TestRunRejectsForeignInvocation(t *testing.T) {
	ex, _ := fixture(t, nil)
	_, err := ex.Run(context.Background(), &executor.Invocation{Tool: "echo"})
	assert.Error(t, err)
	_, err = ex.Run(context.Background(), nil)
	assert.Error(t, err)
}

func TestRunRechecksPolicy(t *testing.T) {
	permissive, _ := fixture(t, &executor.Options{AllowUnsafe: true})
	inv, err := permissive.Hydrate(context.Background(), call("danger", `{"msg":"x"}`))
	require.NoError(t, err)
	strict, sink := fixture(t, nil)
	_, err = strict.Run(context.Background(), inv)
	callError(t, err, executor.OutcomeRefused, executor.ErrUnsafe)
	assert.Equal(t, executor.OutcomeRefused, onlyRecord(t, sink).Outcome)
}

func TestRegister(t *testing.T) {
	ex := executor.New(registry.New(nil), nil)
	require.NoError(t, ex.Register(tool("hello", msgSchema), echo))
	assert.Error(t, ex.Register(tool("hello", msgSchema), echo), "duplicate")
	assert.Error(t, ex.Register(tool("", msgSchema), echo), "invalid tool")
	assert.Error(t, ex.Register(tool("nil", msgSchema), nil))
	assert.Error(t, ex.Handle("hello", nil))
	assert.Error(t, ex.HandleConstructor("hello", nil))
	res, err := ex.Call(context.Background(), call("hello", `{"msg":"x"}`))
	require.NoError(t, err)
	assert.Equal(t, executor.OutcomeOK, res.Outcome)
}

func TestConcurrentCalls(t *testing.T) {
	ex, sink := fixture(t, &executor.Options{AllowUnsafe: true})
	var wg sync.WaitGroup
	const n = 64
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := []string{"echo", "danger", "status", "invented"}[i%4]
			_, _ = ex.Call(context.Background(), call(name, fmt.Sprintf(`{"msg":"%d"}`, i)))
			if i%8 == 0 { // rebinding while others call
				_ = ex.Handle("echo", echo)
			}
		}()
	}
	wg.Wait()
	recs := sink.Records()
	assert.Len(t, recs, n)
	counts := map[executor.Outcome]int{}
	for _, r := range recs {
		counts[r.Outcome]++
	}
	assert.Equal(t, map[executor.Outcome]int{executor.OutcomeOK: 48, executor.OutcomeInvalid: 16}, counts)
}

func TestSlogSink(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	reg := registry.New(nil)
	ex := executor.New(reg, &executor.Options{Audit: executor.SlogSink{Logger: logger}.Audit})
	require.NoError(t, ex.Register(tool("echo", msgSchema), echo))
	_, err := ex.Call(context.Background(), executor.Call{ID: "c7", Tool: "echo", Args: json.RawMessage(`{"msg":"secret-ish"}`)})
	require.NoError(t, err)
	_, err = ex.Call(context.Background(), call("echo", `{}`))
	require.Error(t, err)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2)
	var ok, bad map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &ok))
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &bad))
	assert.Equal(t, "INFO", ok["level"])
	assert.Equal(t, "tool call", ok["msg"])
	assert.Equal(t, "echo", ok["tool"])
	assert.Equal(t, "c7", ok["id"])
	assert.Equal(t, "ok", ok["outcome"])
	assert.Equal(t, true, ok["validated"])
	assert.Equal(t, `{"msg":"secret-ish"}`, ok["args"])
	assert.Contains(t, ok, "duration")
	assert.Equal(t, "WARN", bad["level"])
	assert.Equal(t, "invalid", bad["outcome"])
	assert.Contains(t, bad["error"], "required")

	buf.Reset()
	ex = executor.New(reg, &executor.Options{Audit: executor.SlogSink{Logger: logger, OmitArgs: true}.Audit})
	require.NoError(t, ex.Handle("echo", echo))
	_, err = ex.Call(context.Background(), call("echo", `{"msg":"secret-ish"}`))
	require.NoError(t, err)
	assert.NotContains(t, buf.String(), "secret-ish")
}

func TestRecordJSON(t *testing.T) {
	ex, sink := fixture(t, nil)
	_, err := ex.Call(context.Background(), call("anything", `{"a":1}`))
	require.NoError(t, err)
	b, err := json.Marshal(onlyRecord(t, sink))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"tool", "args", "validated", "policy", "start", "durationMs", "outcome"} {
		assert.Contains(t, m, k)
	}
	assert.Equal(t, false, m["validated"])
	assert.Equal(t, map[string]any{"a": float64(1)}, m["args"])
}

func TestAuditFunctionAndNilSink(t *testing.T) {
	var got []executor.Outcome
	reg := registry.New(nil)
	ex := executor.New(reg, &executor.Options{Audit: func(_ context.Context, r executor.Record) {
		got = append(got, r.Outcome)
	}})
	require.NoError(t, ex.Register(tool("echo", msgSchema), echo))
	_, _ = ex.Call(context.Background(), call("echo", `{"msg":"x"}`))
	assert.Equal(t, []executor.Outcome{executor.OutcomeOK}, got)

	quiet := executor.New(reg, nil) // no sink: nothing to deliver, nothing breaks
	require.NoError(t, quiet.Handle("echo", echo))
	_, err := quiet.Call(context.Background(), call("echo", `{"msg":"x"}`))
	require.NoError(t, err)
}

func TestResultContent(t *testing.T) {
	assert.Equal(t, "", executor.Result{}.Content())
	assert.Equal(t, "plain", executor.Result{Value: "plain"}.Content())
	assert.Equal(t, `{"a":1}`, executor.Result{Value: json.RawMessage(`{"a":1}`)}.Content())
	assert.Equal(t, `[1,2]`, executor.Result{Value: []int{1, 2}}.Content())
	assert.Equal(t, "bad", executor.Result{IsError: true, Error: "bad", Value: "ignored"}.Content())
}

func TestValidatedFlagOnInvalidCalls(t *testing.T) {
	ex, sink := fixture(t, nil)
	_, err := ex.Call(context.Background(), call("echo", `{}`))
	require.Error(t, err)
	assert.True(t, onlyRecord(t, sink).Validated, "the schema ran and said no")
}
func TestCallAllContinuesAfterFailures(t *testing.T) {
	ex, sink := fixture(t, nil)
	outs := ex.CallAll(context.Background(), []executor.Call{
		call("danger", `{"msg":"x"}`), call("echo", `{}`), call("echo", `{"msg":"ok"}`),
	})
	require.Len(t, outs, 3)
	assert.ErrorIs(t, outs[0].Err, executor.ErrUnsafe)
	assert.ErrorIs(t, outs[1].Err, executor.ErrInvalidArgs)
	assert.NoError(t, outs[2].Err)
	assert.Len(t, sink.Records(), 3)
}
