package metatool_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/executor"
)

func echo(_ context.Context, args json.RawMessage) (any, error) {
	var v map[string]any
	err := json.Unmarshal(args, &v)
	return v, err
}

// recordSink collects audit records.
type recordSink struct {
	mu      sync.Mutex
	records []executor.Record
}

func (s *recordSink) Audit(_ context.Context, r executor.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, r)
}

func (s *recordSink) Records() []executor.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]executor.Record(nil), s.records...)
}

func call(tool, args string) executor.Call {
	return executor.Call{Tool: tool, Args: json.RawMessage(args)}
}

// callError asserts err is a *executor.CallError with outcome, matching sentinel.
func callError(t *testing.T, err error, outcome executor.Outcome, sentinel error) *executor.CallError {
	t.Helper()
	var ce *executor.CallError
	require.True(t, errors.As(err, &ce), "want a *CallError, got %T: %v", err, err)
	require.Equal(t, outcome, ce.Outcome, "%v", err)
	require.ErrorIs(t, err, sentinel)
	return ce
}
