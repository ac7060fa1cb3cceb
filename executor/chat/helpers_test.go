package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/registry"
)

const msgSchema = `{"type":"object","properties":{"msg":{"type":"string","minLength":1}},"required":["msg"],"additionalProperties":false}`

func echo(_ context.Context, args json.RawMessage) (any, error) {
	var v map[string]any
	err := json.Unmarshal(args, &v)
	return v, err
}

// recordSink keeps audit records in memory, in the order they arrived.
type recordSink struct {
	mu      sync.Mutex
	records []executor.Record
}

func (s *recordSink) Audit(_ context.Context, r executor.Record) {
	s.mu.Lock()
	s.records = append(s.records, r)
	s.mu.Unlock()
}

func (s *recordSink) Records() []executor.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]executor.Record(nil), s.records...)
}

// fixture is an executor over echo, an unsafe tool, a role-restricted one
// and a read-only schema-less status, all bound to echo, auditing to the sink.
func fixture(t *testing.T, opts *executor.Options) (*executor.Executor, *recordSink) {
	t.Helper()
	status := registry.NewTool("status", "test tool status", nil)
	status.AllowNoSchema, status.NoSchemaMode, status.Capabilities = true, registry.NoSchemaReadOnly, []string{registry.CapabilityReadOnly}
	danger := registry.NewTool("danger", "test tool danger", json.RawMessage(msgSchema))
	danger.Safe = false
	deploy := registry.NewTool("deploy", "test tool deploy", json.RawMessage(msgSchema))
	deploy.Roles = []string{"sre"}
	reg := registry.New(nil)
	require.NoError(t, reg.RegisterAll([]registry.Tool{registry.NewTool("echo", "test tool echo", json.RawMessage(msgSchema)), danger, deploy, status}))
	sink := &recordSink{}
	o := executor.Options{}
	if opts != nil {
		o = *opts
	}
	o.Audit = sink.Audit
	ex := executor.New(reg, &o)
	for _, name := range []string{"echo", "danger", "deploy", "status"} {
		require.NoError(t, ex.Handle(name, echo))
	}
	return ex, sink
}

func registryWithEcho(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New(nil)
	require.NoError(t, reg.Register(registry.NewTool("echo", "test tool echo", json.RawMessage(msgSchema))))
	return reg
}

func call(tool, args string) executor.Call {
	return executor.Call{Tool: tool, Args: json.RawMessage(args)}
}

func onlyRecord(t *testing.T, sink *recordSink) executor.Record {
	t.Helper()
	recs := sink.Records()
	require.Len(t, recs, 1, "one audit record per call")
	return recs[0]
}

func callError(t *testing.T, err error, outcome executor.Outcome, sentinel error) *executor.CallError {
	t.Helper()
	require.Error(t, err)
	var ce *executor.CallError
	require.True(t, errors.As(err, &ce), "want *CallError, got %T: %v", err, err)
	assert.Equal(t, outcome, ce.Outcome)
	if sentinel != nil {
		assert.ErrorIs(t, err, sentinel)
	}
	return ce
}
