package executor

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolselect/toolselect/internal/telemetry"
)

// Every call the executor hydrates or runs is an OpenTelemetry
// "execute_tool TOOL" span (GenAI conventions: gen_ai.operation.name,
// gen_ai.tool.name, gen_ai.tool.call.id when the call has one) through the
// global provider, ended by record with the audit record's outcome and
// policy; a refusal names its rule. Arguments, results and an approver's
// own words are recorded only with
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.

// startToolSpan starts the span of one call, from start.
func startToolSpan(ctx context.Context, id, tool string, start time.Time) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{telemetry.GenAIOperationName.String("execute_tool"), telemetry.GenAIToolName.String(tool)}
	if id != "" { // "Recommended if available": an empty id is no id
		attrs = append(attrs, telemetry.GenAIToolCallID.String(id))
	}
	return telemetry.Tracer().Start(ctx, "execute_tool "+tool, trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// endToolSpan ends a call's span with the outcome of its audit record; err
// is the refusal, if the call was refused.
func endToolSpan(span trace.Span, rec Record, err error, res ...Result) {
	end := rec.Start.Add(rec.Duration)
	defer span.End(trace.WithTimestamp(end))
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(telemetry.Outcome.String(string(rec.Outcome)), telemetry.GenAIToolName.String(rec.Tool))
	if rec.Policy != "" {
		span.SetAttributes(telemetry.Policy.String(rec.Policy))
	}
	if rec.Outcome == OutcomeRefused {
		span.SetAttributes(telemetry.Refusal.String(refusalWords(rec, err)))
	}
	if rec.Outcome != OutcomeOK {
		span.SetAttributes(telemetry.ErrorType.String(string(rec.Outcome)))
		span.SetStatus(codes.Error, string(rec.Outcome))
	}
	if telemetry.CaptureContent() {
		span.SetAttributes(telemetry.GenAIToolCallArguments.String(string(rec.Args)))
		if len(res) > 0 && rec.Outcome == OutcomeOK { // "if execution was successful"
			span.SetAttributes(telemetry.GenAIToolCallResult.String(res[0].Content()))
		}
	}
}

// refusalWords is toolselect.policy.refusal: the refusal's message, whose
// rules name only the tool, its roles and capabilities; but an approver's
// answer is free text (its reason, its error), so with content capture off
// a denied approval is only "approval denied".
func refusalWords(rec Record, err error) string {
	if errors.Is(err, ErrApprovalDenied) && !telemetry.CaptureContent() {
		return ErrApprovalDenied.Error()
	}
	return rec.Error
}
