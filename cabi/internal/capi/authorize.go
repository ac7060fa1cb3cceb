package capi

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/registry"
)

// The run policy for callers that run tools themselves (Python's
// ToolRegistry.run): the Go executor decides, the caller runs the callable
// only when it may. One policy, every run path.

// policyJSON is the caller's side of the policy, as the Go executor's
// Options carry it.
type policyJSON struct {
	AllowUnsafe  bool     `json:"allow_unsafe"`
	Roles        []string `json:"roles"`
	Capabilities []string `json:"capabilities"`
	// Approver says the caller can ask for approval: registry.Eligibility.Decide
	// then asks about unsafe and requires-approval tools (approval_required),
	// as the Go executor does with an Approver.
	Approver bool `json:"approver"`
	// Hints, when given, word what would let a refused call run, by rule
	// (executor.Options.Hint), in the caller's own names: they go into the
	// message and the audit record instead of Go's (a rule it lacks gets
	// none). Absent: Go's words.
	Hints map[string]string `json:"hints"`
	// Rules are per-tool allow, ask and deny patterns of tool names
	// (registry.ToolRules, read by Decide before the rest): {"allow":[...],
	// "ask":[...],"deny":[...]}.
	Rules registry.ToolRules `json:"rules"`
}

type callJSON struct {
	ID   string          `json:"id"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// Authorization is the verdict: Allowed with the canonical tool, the
// arguments it may run with, the rule that lets it run (Policy) and whether
// an approval must be asked first; or a refusal naming its Rule, with the
// audit record of the refusal.
type Authorization struct {
	Allowed          bool            `json:"allowed"`
	Tool             string          `json:"tool"`
	Args             json.RawMessage `json:"args,omitempty"`
	Policy           string          `json:"policy,omitempty"`
	Validated        bool            `json:"validated"`
	ApprovalRequired bool            `json:"approval_required"`
	// ArgsSHA256 is the hash of Args when an approval must be asked: the
	// caller's audit record carries it beside who approved.
	ArgsSHA256 string           `json:"args_sha256,omitempty"`
	Outcome    executor.Outcome `json:"outcome,omitempty"`
	Rule       string           `json:"rule,omitempty"`
	Message    string           `json:"message,omitempty"`
	// Reason is a policy refusal's reason without the Go executor's hint
	// (which names Options fields): the caller words its own hint from Rule.
	Reason     string               `json:"reason,omitempty"`
	Violations []registry.Violation `json:"violations,omitempty"`
	Audit      *executor.Record     `json:"audit,omitempty"`
}

type captureSink struct{ rec *executor.Record }

func (c *captureSink) Audit(_ context.Context, r executor.Record) { c.rec = &r }

// RegistryAuthorize asks the executor's policy about one call before the
// caller runs it: resolve, static policy (unsafe, roles, capabilities,
// no-schema modes, approval), argument validation. A refused call is OK with
// "allowed": false; bad arguments are ErrArgument.
func RegistryAuthorize(h uint64, call []byte, callPresent bool, policy []byte, policyPresent bool) Result {
	reg, r := getRegistry(h)
	if r != nil {
		return *r
	}
	var c callJSON
	if r := Strict("call_json", call, callPresent, &c); r != nil {
		return *r
	}
	var p policyJSON
	if policyPresent {
		if r := Strict("policy_json", policy, true, &p); r != nil {
			return *r
		}
	}
	if c.Tool == "" {
		return Fail(ErrArgument, "call_json: \"tool\" is required")
	}
	if err := p.Rules.Validate(); err != nil {
		return Fail(ErrArgument, "policy_json: rules.%s", err)
	}
	sink := &captureSink{}
	opts := &executor.Options{AllowUnsafe: p.AllowUnsafe, Roles: p.Roles, Capabilities: p.Capabilities, Audit: sink.Audit, Timeout: -1,
		Caller: registry.Eligibility{Rules: p.Rules}}
	if p.Approver {
		opts.Approver = func(context.Context, executor.ApprovalRequest) (executor.Approval, error) {
			return executor.Approval{}, errors.New("asked of the caller")
		}
	}
	if p.Hints != nil {
		opts.Hint = func(r registry.Rule) string { return p.Hints[string(r)] }
	}
	ex := executor.New(reg, opts)
	if e, ok := reg.Lookup(c.Tool); ok {
		// The caller holds the callable: the executor needs a binding to judge.
		_ = ex.Handle(e.Name(), func(context.Context, json.RawMessage) (any, error) { return nil, nil })
	}
	inv, err := ex.Hydrate(context.Background(), executor.Call{ID: c.ID, Tool: c.Tool, Args: c.Args})
	if err == nil {
		out := Authorization{Allowed: true, Tool: inv.Tool, Args: inv.Args, Policy: inv.Policy(), Validated: inv.Validated,
			ApprovalRequired: inv.NeedsApproval()}
		if out.ApprovalRequired {
			out.ArgsSHA256 = inv.ArgsSHA256()
		}
		return Ok(out)
	}
	out := Authorization{Tool: c.Tool, Message: err.Error(), Audit: sink.rec, Rule: "refused"}
	var ce *executor.CallError
	if errors.As(err, &ce) {
		out.Outcome = ce.Outcome
		if ce.Rule != "" {
			out.Rule = string(ce.Rule) // the executor's typed rule
		}
		var ve *registry.ValidationError
		if errors.As(err, &ve) {
			out.Violations = ve.Violations
		}
	}
	var pr interface{ PolicyReason() string } // the executor's static-policy refusals
	if errors.As(err, &pr) {
		out.Reason = pr.PolicyReason()
	}
	if out.Audit != nil {
		out.Tool = out.Audit.Tool
		out.Audit.Start = out.Audit.Start.UTC().Truncate(time.Microsecond)
	}
	return Ok(out)
}
