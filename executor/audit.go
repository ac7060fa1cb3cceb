package executor

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"
)

// Outcome is how a call ended.
type Outcome string

// The outcomes recorded in the audit trail.
const (
	// OutcomeOK: the tool ran and returned a value.
	OutcomeOK Outcome = "ok"
	// OutcomeToolError: the tool ran and failed (its error, or a panic); a Result with IsError.
	OutcomeToolError Outcome = "tool_error"
	// OutcomeTimeout: the tool did not finish within the per-call timeout; a Result with IsError.
	OutcomeTimeout Outcome = "timeout"
	// OutcomeRefused: policy refused the call (unsafe, role, no-schema mode, approval); a *CallError.
	OutcomeRefused Outcome = "refused"
	// OutcomeInvalid: unknown tool or invalid arguments (after at most one repair); a *CallError.
	OutcomeInvalid Outcome = "invalid"
	// OutcomeCanceled: the caller's context ended before the call finished; a *CallError.
	OutcomeCanceled Outcome = "canceled"
	// OutcomePending: the call waits for an approval ([Executor.Resume]); a
	// *CallError with its [CallError.PendingID].
	OutcomePending Outcome = "pending"
)

// Record is the audit record of one call: every call that reaches Hydrate,
// Run or Call produces exactly one, whatever its outcome.
type Record struct {
	// ID is the call's ID (e.g. a provider tool_call id), if it had one.
	ID string `json:"id,omitempty"`
	// Tool is the canonical tool name (the name as received when unknown).
	Tool string `json:"tool"`
	// Args are the arguments the tool ran with (after repair), or the ones received.
	Args json.RawMessage `json:"args"`
	// OriginalArgs are the arguments as received, set only when a repair changed them.
	OriginalArgs json.RawMessage `json:"originalArgs,omitempty"`
	// Validated is true when the arguments were checked against the tool's
	// schema (whether they passed or not); false for a tool without a schema
	// (allowNoSchema) and for calls refused before validation.
	Validated bool `json:"validated"`
	// Repaired is true when the arguments that ran came from a model-assisted repair.
	Repaired bool `json:"repaired,omitempty"`
	// Policy names the rule that let the call run, e.g. "schema",
	// "no-schema:full", "no-schema:human-approval,unsafe-allowed", or the
	// [registry.Rule] that refused it or found it invalid, the value of the
	// error's [CallError.Rule] ("unsafe", "role", "no_schema_read_only",
	// "invalid_args", ...).
	Policy string `json:"policy,omitempty"`
	// ApprovedBy is who approved an asked call ("" when none was needed or given).
	ApprovedBy string `json:"approvedBy,omitempty"`
	// ArgsSHA256 is the hex SHA-256 of Args for a call an approver was
	// asked about: the arguments approved are the arguments that ran.
	ArgsSHA256 string `json:"argsSha256,omitempty"`
	// ApprovalEdited is true when the approver answered with edited
	// arguments (validated again; Args are they).
	ApprovalEdited bool `json:"approvalEdited,omitempty"`
	// Start is when the call reached the executor.
	Start time.Time `json:"start"`
	// Duration is the time from Start to the outcome, approval wait included.
	Duration time.Duration `json:"-"`
	// DurationMS is Duration in milliseconds, for JSON readers.
	DurationMS float64 `json:"durationMs"`
	// Outcome is how the call ended.
	Outcome Outcome `json:"outcome"`
	// Error is the refusal, validation or tool error message ("" for ok).
	Error string `json:"error,omitempty"`
}

// SlogSink writes each record as one structured log entry: Info for ok,
// Warn for everything else.
type SlogSink struct {
	// Logger receives the records; nil means slog.Default().
	Logger *slog.Logger
	// OmitArgs leaves the arguments out of the log (they may hold personal data).
	OmitArgs bool
}

// Audit logs r.
func (s SlogSink) Audit(ctx context.Context, r Record) {
	l := s.Logger
	if l == nil {
		l = slog.Default()
	}
	attrs := []slog.Attr{
		slog.String("tool", r.Tool),
		slog.String("outcome", string(r.Outcome)),
		slog.Bool("validated", r.Validated),
		slog.Duration("duration", r.Duration),
	}
	if r.ID != "" {
		attrs = append(attrs, slog.String("id", r.ID))
	}
	if !s.OmitArgs {
		attrs = append(attrs, slog.String("args", string(r.Args)))
	}
	if r.Repaired {
		attrs = append(attrs, slog.Bool("repaired", true))
	}
	if r.Policy != "" {
		attrs = append(attrs, slog.String("policy", r.Policy))
	}
	if r.ApprovedBy != "" {
		attrs = append(attrs, slog.String("approved_by", r.ApprovedBy))
	}
	if r.ArgsSHA256 != "" {
		attrs = append(attrs, slog.String("args_sha256", r.ArgsSHA256))
	}
	if r.ApprovalEdited {
		attrs = append(attrs, slog.Bool("approval_edited", true))
	}
	if r.Error != "" {
		attrs = append(attrs, slog.String("error", r.Error))
	}
	level := slog.LevelInfo
	if r.Outcome != OutcomeOK {
		level = slog.LevelWarn
	}
	l.LogAttrs(ctx, level, "tool call", attrs...)
}
