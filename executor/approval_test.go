package executor_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/registry"
)

// approvalFixture: "danger" (unsafe, schema), "pay" (requires approval,
// schema); ran counts the runs and keeps the arguments each run got.
func approvalFixture(t *testing.T, opts executor.Options) (*executor.Executor, *recordSink, *[]string) {
	t.Helper()
	reg := registry.New(nil)
	require.NoError(t, reg.RegisterAll([]registry.Tool{
		tool("danger", msgSchema, func(t *registry.Tool) { t.Safe = false }),
		tool("pay", msgSchema, func(t *registry.Tool) { t.RequiresApproval = true }),
	}))
	sink := &recordSink{}
	opts.Audit = sink.Audit
	ex := executor.New(reg, &opts)
	var ran []string
	h := func(_ context.Context, args json.RawMessage) (any, error) {
		ran = append(ran, string(args))
		return "done", nil
	}
	require.NoError(t, ex.Handle("danger", h))
	require.NoError(t, ex.Handle("pay", h))
	return ex, sink, &ran
}

func sha(s string) string {
	b := sha256.Sum256([]byte(s))
	return hex.EncodeToString(b[:])
}

// A user's report: an unsafe tool with a schema, allow-unsafe and an
// approver that says no. The approver is asked and the tool does not run.
func TestApproverGivenIsApproverAsked(t *testing.T) {
	var seen []executor.ApprovalRequest
	no := func(_ context.Context, req executor.ApprovalRequest) (executor.Approval, error) {
		seen = append(seen, req)
		return executor.Approval{By: "alice", Reason: "not now"}, nil
	}
	ex, sink, ran := approvalFixture(t, executor.Options{AllowUnsafe: true, Approver: no})
	_, err := ex.Call(context.Background(), call("danger", `{ "msg" : "ev-42" }`))
	callError(t, err, executor.OutcomeRefused, executor.ErrApprovalDenied)
	assert.Contains(t, err.Error(), "denied by alice: not now")
	assert.Empty(t, *ran)
	require.Len(t, seen, 1)
	assert.Equal(t, `{"msg":"ev-42"}`, string(seen[0].Args), "the approver sees the validated value")
	assert.True(t, seen[0].Validated)
	assert.Equal(t, registry.RuleUnsafe, seen[0].Reason)
	assert.Equal(t, sha(`{"msg":"ev-42"}`), seen[0].ArgsSHA256)
	rec := onlyRecord(t, sink)
	assert.Equal(t, string(registry.RuleApprovalDenied), rec.Policy)
	assert.Equal(t, sha(`{"msg":"ev-42"}`), rec.ArgsSHA256, "the record names what was declined")
	assert.Empty(t, rec.ApprovedBy)

	// An invalid call is refused before anyone is asked.
	seen = nil
	_, err = ex.Call(context.Background(), call("danger", `{"msg":""}`))
	callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
	assert.Empty(t, seen)
}

func TestRequiresApprovalWithoutApproverIsRefused(t *testing.T) {
	ex, _, ran := approvalFixture(t, executor.Options{AllowUnsafe: true})
	_, err := ex.Call(context.Background(), call("pay", `{"msg":"10 EUR"}`))
	ce := callError(t, err, executor.OutcomeRefused, executor.ErrApprovalRequired)
	assert.Equal(t, registry.RuleApprovalRequired, ce.Rule)
	assert.Contains(t, err.Error(), "set Options.Approver")
	assert.Empty(t, *ran)
}

func TestApprovedRunsTheApprovedCopy(t *testing.T) {
	ap := func(_ context.Context, req executor.ApprovalRequest) (executor.Approval, error) {
		// An approver (or anyone holding the request) scribbling on the
		// arguments it was shown changes nothing that runs.
		copy(req.Args, `{"msg":"XXXXXX"}`)
		return executor.Approval{Approved: true, By: "alice"}, nil
	}
	ex, sink, ran := approvalFixture(t, executor.Options{Approver: ap})
	inv, err := ex.Hydrate(context.Background(), call("pay", `{"msg":"10 EUR"}`))
	require.NoError(t, err)
	assert.True(t, inv.NeedsApproval())
	res, err := ex.Run(context.Background(), inv)
	require.NoError(t, err)
	assert.Equal(t, "done", res.Value)
	assert.Equal(t, []string{`{"msg":"10 EUR"}`}, *ran)
	rec := onlyRecord(t, sink)
	assert.Equal(t, "alice", rec.ApprovedBy)
	assert.Equal(t, sha(`{"msg":"10 EUR"}`), rec.ArgsSHA256)
	assert.Equal(t, `{"msg":"10 EUR"}`, string(rec.Args))
	assert.False(t, rec.ApprovalEdited)
}

// Arguments changed after approval: the caller mutates the invocation's
// Args while the approver is deciding; what runs is what was approved.
func TestArgsChangedAfterApprovalDoNotRun(t *testing.T) {
	var inv *executor.Invocation
	ap := func(_ context.Context, req executor.ApprovalRequest) (executor.Approval, error) {
		copy(inv.Args, `{"msg":"1000 EUR"}`) // same length, the attacker's amount
		return executor.Approval{Approved: true, By: "alice", ArgsSHA256: req.ArgsSHA256}, nil
	}
	ex, sink, ran := approvalFixture(t, executor.Options{Approver: ap})
	var err error
	inv, err = ex.Hydrate(context.Background(), call("pay", `{"msg":"0010 EUR"}`))
	require.NoError(t, err)
	_, err = ex.Run(context.Background(), inv)
	require.NoError(t, err)
	assert.Equal(t, []string{`{"msg":"0010 EUR"}`}, *ran)
	assert.Equal(t, sha(`{"msg":"0010 EUR"}`), onlyRecord(t, sink).ArgsSHA256)
}

func TestEditedArgsAreValidatedAndRecorded(t *testing.T) {
	edit := `{"msg":"5 EUR"}`
	ap := func(context.Context, executor.ApprovalRequest) (executor.Approval, error) {
		return executor.Approval{Approved: true, By: "alice", Args: json.RawMessage(edit)}, nil
	}
	ex, sink, ran := approvalFixture(t, executor.Options{Approver: ap})
	_, err := ex.Call(context.Background(), call("pay", `{"msg":"10 EUR"}`))
	require.NoError(t, err)
	assert.Equal(t, []string{edit}, *ran)
	rec := onlyRecord(t, sink)
	assert.True(t, rec.ApprovalEdited)
	assert.Equal(t, edit, string(rec.Args))
	assert.Equal(t, sha(edit), rec.ArgsSHA256)

	// Edited into something the schema refuses: invalid, nothing runs.
	edit = `{"msg":"5 EUR","to":"attacker"}`
	sink.Reset()
	_, err = ex.Call(context.Background(), call("pay", `{"msg":"11 EUR"}`))
	callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
	assert.Len(t, *ran, 1)
	assert.True(t, onlyRecord(t, sink).ApprovalEdited)
}

// An approval answered for one call, replayed for another: bound to the
// arguments' hash, it is refused.
func TestApprovalForOneCallUsedForAnother(t *testing.T) {
	var first *executor.Approval
	ap := func(_ context.Context, req executor.ApprovalRequest) (executor.Approval, error) {
		if first == nil {
			first = &executor.Approval{Approved: true, By: "alice", ArgsSHA256: req.ArgsSHA256}
		}
		return *first, nil // a cached answer, replayed
	}
	ex, _, ran := approvalFixture(t, executor.Options{Approver: ap})
	_, err := ex.Call(context.Background(), call("pay", `{"msg":"1 EUR"}`))
	require.NoError(t, err)
	_, err = ex.Call(context.Background(), call("pay", `{"msg":"9999 EUR"}`))
	callError(t, err, executor.OutcomeRefused, executor.ErrApprovalDenied)
	assert.Contains(t, err.Error(), "given for other arguments")
	assert.Equal(t, []string{`{"msg":"1 EUR"}`}, *ran)
}

func TestApproverFailingIsARefusal(t *testing.T) {
	for name, ap := range map[string]func(context.Context, executor.ApprovalRequest) (executor.Approval, error){
		"error": func(context.Context, executor.ApprovalRequest) (executor.Approval, error) {
			return executor.Approval{Approved: true}, errors.New("ticket system down")
		},
		"panic": func(context.Context, executor.ApprovalRequest) (executor.Approval, error) {
			panic("approver bug")
		},
		"timeout": func(ctx context.Context, _ executor.ApprovalRequest) (executor.Approval, error) {
			<-ctx.Done()
			return executor.Approval{Approved: true}, nil // says yes too late
		},
		"timeout ignoring ctx": func(context.Context, executor.ApprovalRequest) (executor.Approval, error) {
			time.Sleep(100 * time.Millisecond)
			return executor.Approval{Approved: true}, nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			ex, sink, ran := approvalFixture(t, executor.Options{Approver: ap, ApprovalTimeout: 20 * time.Millisecond})
			_, err := ex.Call(context.Background(), call("pay", `{"msg":"x"}`))
			callError(t, err, executor.OutcomeRefused, executor.ErrApprovalDenied)
			assert.Empty(t, *ran)
			assert.Equal(t, executor.OutcomeRefused, onlyRecord(t, sink).Outcome)
		})
	}
}

// A model retrying a declined call: the approver is asked once; each retry
// is refused with the count, not asked again.
func TestDeclinedCallRetriedInALoop(t *testing.T) {
	var asked atomic.Int32
	ap := func(context.Context, executor.ApprovalRequest) (executor.Approval, error) {
		asked.Add(1)
		return executor.Approval{By: "alice"}, nil
	}
	ex, _, ran := approvalFixture(t, executor.Options{Approver: ap})
	var last error
	for range 5 {
		_, last = ex.Call(context.Background(), call("pay", `{"msg":"again"}`))
		callError(t, last, executor.OutcomeRefused, executor.ErrApprovalDenied)
	}
	assert.Equal(t, int32(1), asked.Load())
	assert.Contains(t, last.Error(), "declined before and is not asked about again (declined or retried 5 times)")
	// Other arguments are another question.
	_, err := ex.Call(context.Background(), call("pay", `{"msg":"other"}`))
	callError(t, err, executor.OutcomeRefused, executor.ErrApprovalDenied)
	assert.Equal(t, int32(2), asked.Load())
	assert.Empty(t, *ran)
}

// An agent loop that waits for a person: the call parks, the error carries
// its ID, and Resume runs it later without selecting or hydrating again.
func TestPendingApprovalResumedByID(t *testing.T) {
	ex, sink, ran := approvalFixture(t, executor.Options{Caller: registry.Eligibility{Ask: true}})
	_, err := ex.Call(context.Background(), executor.Call{ID: "c1", Tool: "pay", Args: json.RawMessage(`{"msg":"10 EUR"}`)})
	ce := callError(t, err, executor.OutcomePending, executor.ErrApprovalPending)
	assert.Equal(t, registry.RuleApprovalRequired, ce.Rule)
	assert.Equal(t, "c1", ce.ID)
	assert.Equal(t, `{"msg":"10 EUR"}`, string(ce.Args))
	assert.Len(t, ce.PendingID, 32)
	assert.Empty(t, *ran)
	assert.Equal(t, executor.OutcomePending, onlyRecord(t, sink).Outcome)

	// An approval bound to other arguments does not resume it...
	_, err = ex.Resume(context.Background(), ce.PendingID, executor.Approval{Approved: true, ArgsSHA256: sha(`{"msg":"9 EUR"}`)})
	callError(t, err, executor.OutcomeRefused, executor.ErrApprovalDenied)
	// ... and used it up: an ID resumes once.
	_, err = ex.Resume(context.Background(), ce.PendingID, executor.Approval{Approved: true})
	callError(t, err, executor.OutcomeRefused, executor.ErrApprovalDenied)
	assert.Contains(t, err.Error(), "resumed already")
	_, err = ex.Resume(context.Background(), "guessed", executor.Approval{Approved: true})
	callError(t, err, executor.OutcomeRefused, executor.ErrApprovalDenied)
	assert.Empty(t, *ran)

	_, err = ex.Call(context.Background(), executor.Call{ID: "c2", Tool: "pay", Args: json.RawMessage(`{"msg":"10 EUR"}`)})
	require.ErrorAs(t, err, &ce)
	sink.Reset()
	res, err := ex.Resume(context.Background(), ce.PendingID, executor.Approval{Approved: true, By: "bob", ArgsSHA256: ce.ArgsSHA256})
	require.NoError(t, err)
	assert.Equal(t, "done", res.Value)
	assert.Equal(t, []string{`{"msg":"10 EUR"}`}, *ran)
	rec := onlyRecord(t, sink)
	assert.Equal(t, "bob", rec.ApprovedBy)
	assert.Equal(t, "c2", rec.ID)
	assert.Equal(t, executor.OutcomeOK, rec.Outcome)
	assert.Equal(t, sha(`{"msg":"10 EUR"}`), rec.ArgsSHA256)
}

// An approver may defer: returning ErrApprovalPending parks the call; a
// decline on Resume is a refusal, counted like any other.
func TestApproverDefers(t *testing.T) {
	var asked atomic.Int32
	ap := func(context.Context, executor.ApprovalRequest) (executor.Approval, error) {
		asked.Add(1)
		return executor.Approval{}, fmt.Errorf("ticket T-1 opened: %w", executor.ErrApprovalPending)
	}
	ex, _, ran := approvalFixture(t, executor.Options{Approver: ap})
	_, err := ex.Call(context.Background(), call("danger", `{"msg":"x"}`))
	ce := callError(t, err, executor.OutcomePending, executor.ErrApprovalPending)
	_, err = ex.Resume(context.Background(), ce.PendingID, executor.Approval{Approved: false, By: "carol"})
	callError(t, err, executor.OutcomeRefused, executor.ErrApprovalDenied)
	_, err = ex.Call(context.Background(), call("danger", `{"msg":"x"}`))
	callError(t, err, executor.OutcomeRefused, executor.ErrApprovalDenied)
	assert.Contains(t, err.Error(), "not asked about again")
	assert.Equal(t, int32(1), asked.Load())
	assert.Empty(t, *ran)
}
