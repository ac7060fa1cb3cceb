// Package exectest holds the test helpers the executor's packages share
// (executor, executor/metatool, executor/chat): a handler that echoes its
// arguments, an audit sink kept in memory, an executor over test tools
// auditing to one, and the CallError assertion.
package exectest

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

// MsgSchema is the argument schema of the test tools: an object holding one
// non-empty string "msg", nothing else.
const MsgSchema = `{"type":"object","properties":{"msg":{"type":"string","minLength":1}},"required":["msg"],"additionalProperties":false}`

// Executor registers tools, builds an executor over them with opts (nil:
// defaults) auditing to a new RecordSink, and binds Echo to each name in
// bound.
func Executor(t testing.TB, tools []registry.Tool, opts *executor.Options, bound ...string) (*executor.Executor, *RecordSink) {
	t.Helper()
	reg := registry.New(nil)
	require.NoError(t, reg.RegisterAll(tools))
	sink := &RecordSink{}
	o := executor.Options{}
	if opts != nil {
		o = *opts
	}
	o.Audit = sink.Audit
	ex := executor.New(reg, &o)
	for _, name := range bound {
		require.NoError(t, ex.Handle(name, Echo))
	}
	return ex, sink
}

// RegistryWithEcho is a registry holding one tool, echo, of MsgSchema.
func RegistryWithEcho(t testing.TB) *registry.Registry {
	t.Helper()
	reg := registry.New(nil)
	require.NoError(t, reg.Register(registry.NewTool("echo", "test tool echo", json.RawMessage(MsgSchema))))
	return reg
}

// Echo is a handler returning its arguments decoded as an object.
func Echo(_ context.Context, args json.RawMessage) (any, error) {
	var v map[string]any
	err := json.Unmarshal(args, &v)
	return v, err
}

// RecordSink keeps audit records in memory, in the order they arrived.
type RecordSink struct {
	mu      sync.Mutex
	records []executor.Record
}

// Audit is an [executor.Options.Audit] sink.
func (s *RecordSink) Audit(_ context.Context, r executor.Record) {
	s.mu.Lock()
	s.records = append(s.records, r)
	s.mu.Unlock()
}

// Records returns a copy of the records so far.
func (s *RecordSink) Records() []executor.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]executor.Record(nil), s.records...)
}

// Reset forgets the records so far.
func (s *RecordSink) Reset() {
	s.mu.Lock()
	s.records = nil
	s.mu.Unlock()
}

// Call is a call of tool with args.
func Call(tool, args string) executor.Call {
	return executor.Call{Tool: tool, Args: json.RawMessage(args)}
}

// CallError asserts err is a *executor.CallError with outcome that matches
// sentinel (nil: any) and returns it.
func CallError(t *testing.T, err error, outcome executor.Outcome, sentinel error) *executor.CallError {
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

// OnlyRecord returns the only audit record, failing unless there is exactly one.
func OnlyRecord(t *testing.T, sink *RecordSink) executor.Record {
	t.Helper()
	recs := sink.Records()
	require.Len(t, recs, 1, "one audit record per call")
	return recs[0]
}
