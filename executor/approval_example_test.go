package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/registry"
)

// A tool that requires approval, called by an agent loop that cannot wait
// for the person: the call parks, the loop shows the pending call, and
// resumes it by ID when the answer comes, without selecting it again.
func ExampleExecutor_Resume() {
	pay := registry.NewTool("pay", "Pay an invoice.",
		json.RawMessage(`{"type":"object","properties":{"invoice":{"type":"string"}},"required":["invoice"]}`))
	pay.RequiresApproval = true
	// Caller.Ask without an Approver: every asked call is parked.
	ex := executor.New(registry.New(nil), &executor.Options{Caller: registry.Eligibility{Ask: true}})
	err := ex.Register(pay, func(_ context.Context, args json.RawMessage) (any, error) {
		return "paid " + string(args), nil
	})
	if err != nil {
		panic(err)
	}

	_, err = ex.Call(context.Background(), executor.Call{ID: "call_1", Tool: "pay", Args: json.RawMessage(`{"invoice":"INV-7"}`)})
	var pending *executor.CallError
	if !errors.As(err, &pending) || !errors.Is(err, executor.ErrApprovalPending) {
		panic(err)
	}
	fmt.Println("waiting:", pending.Tool, string(pending.Args))

	// ... later, the person said yes to exactly these arguments.
	res, err := ex.Resume(context.Background(), pending.PendingID, executor.Approval{Approved: true, By: "alice", ArgsSHA256: pending.ArgsSHA256})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content())
	// Output:
	// waiting: pay {"invoice":"INV-7"}
	// paid {"invoice":"INV-7"}
}
