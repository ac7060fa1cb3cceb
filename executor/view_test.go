package executor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/registry"
)

// A service's admin path is a view of the executor the handlers are bound
// to: another policy, approver and audit sink over the same bindings.
func TestWithViewSharesBindingsNotPolicy(t *testing.T) {
	reg := registry.New(nil)
	userSink, adminSink := &recordSink{}, &recordSink{}
	user := executor.New(reg, &executor.Options{Audit: userSink.Audit})
	admin := user.With(&executor.Options{AllowUnsafe: true, Audit: adminSink.Audit})
	ctx := context.Background()

	type ticket struct {
		ID string `json:"id"`
	}
	del := registry.Tool{Name: "delete_ticket", Description: "Delete a ticket.", Safe: false}
	// Bound on the admin view, the handler is bound for the executor too:
	// no second registration, no "already registered".
	require.NoError(t, executor.AddTool(admin, del, func(_ context.Context, in ticket) (string, error) { return "deleted " + in.ID, nil }))
	require.NoError(t, user.Register(tool("show_ticket", `{"type":"object"}`), echo))

	res, err := admin.Call(ctx, call("delete_ticket", `{"id":"T-1"}`))
	require.NoError(t, err)
	assert.Equal(t, "deleted T-1", res.Value)

	// The user's policy still refuses the unsafe tool, though its handler is bound.
	_, err = user.Call(ctx, call("delete_ticket", `{"id":"T-1"}`))
	callError(t, err, executor.OutcomeRefused, executor.ErrUnsafe)

	// A handler bound on the executor after the view was made runs through the view.
	res, err = admin.Call(ctx, call("show_ticket", `{}`))
	require.NoError(t, err)
	assert.Equal(t, executor.OutcomeOK, res.Outcome)

	// Each view audits to its own sink.
	require.Len(t, adminSink.Records(), 2)
	require.Len(t, userSink.Records(), 1)
	assert.Equal(t, "delete_ticket", userSink.Records()[0].Tool)
	assert.Equal(t, string(registry.RuleUnsafe), userSink.Records()[0].Policy)

	// A view of a view shares the same bindings; nil options are the defaults.
	plain := admin.With(nil)
	assert.NoError(t, plain.Allowed("show_ticket"))
	assert.ErrorIs(t, plain.Allowed("delete_ticket"), executor.ErrUnsafe)
	assert.Same(t, reg, plain.Registry())
}

// An invocation hydrated by the admin view does not run through the user's:
// Run applies the policy of the executor it is called on.
func TestWithInvocationRunsUnderTheRunningViewsPolicy(t *testing.T) {
	reg := registry.New(nil)
	user := executor.New(reg, nil)
	admin := user.With(&executor.Options{AllowUnsafe: true})
	require.NoError(t, admin.Register(tool("purge", `{"type":"object"}`, func(t *registry.Tool) { t.Safe = false }), echo))
	inv, err := admin.Hydrate(context.Background(), call("purge", `{}`))
	require.NoError(t, err)
	_, err = user.Run(context.Background(), inv)
	callError(t, err, executor.OutcomeRefused, executor.ErrUnsafe)
}

// An executor made with New over the same registry is not a view: its
// bindings are its own, and the refusal says where handlers are bound.
func TestNoHandlerSaysWhereHandlersAreBound(t *testing.T) {
	reg := registry.New(nil)
	first := executor.New(reg, nil)
	require.NoError(t, first.Register(tool("delete_ticket", `{"type":"object"}`), echo))
	other := executor.New(reg, nil)
	_, err := other.Call(context.Background(), call("delete_ticket", `{}`))
	ce := callError(t, err, executor.OutcomeRefused, executor.ErrNoHandler)
	assert.Contains(t, ce.Error(), "any view of it from With")
	_, err = first.With(nil).Call(context.Background(), call("delete_ticket", `{}`))
	assert.NoError(t, err)
}

// A call parked through one request's view is resumed through another's (a
// service makes a view per request): the pending approvals are shared,
// and a view whose policy no longer asks about the tool refuses to resume.
func TestWithViewsShareParkedApprovals(t *testing.T) {
	base, _, ran := approvalFixture(t, executor.Options{})
	ctx := context.Background()
	asking := base.With(&executor.Options{Caller: registry.Eligibility{Ask: true}})
	_, err := asking.Call(ctx, call("pay", `{"msg":"5 EUR"}`))
	ce := callError(t, err, executor.OutcomePending, executor.ErrApprovalPending)

	// Another request's view, with the same policy, resumes it once.
	later := base.With(&executor.Options{Caller: registry.Eligibility{Ask: true}})
	res, err := later.Resume(ctx, ce.PendingID, executor.Approval{Approved: true, By: "bob", ArgsSHA256: ce.ArgsSHA256})
	require.NoError(t, err)
	assert.Equal(t, "done", res.Value)
	assert.Equal(t, []string{`{"msg":"5 EUR"}`}, *ran)
	_, err = asking.Resume(ctx, ce.PendingID, executor.Approval{Approved: true, By: "bob", ArgsSHA256: ce.ArgsSHA256})
	assert.Error(t, err, "an approval is used once, whichever view")

	// A view that cannot ask (no approver, no Ask) does not resume one.
	_, err = asking.Call(ctx, call("pay", `{"msg":"6 EUR"}`))
	ce = callError(t, err, executor.OutcomePending, executor.ErrApprovalPending)
	_, err = base.Resume(ctx, ce.PendingID, executor.Approval{Approved: true, By: "bob", ArgsSHA256: ce.ArgsSHA256})
	assert.Error(t, err)
	assert.Len(t, *ran, 1)
}
