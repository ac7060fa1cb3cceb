package executor

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolselect/toolselect/internal/telemetry"
)

// Every call the executor hydrates or runs is an OpenTelemetry
// "execute_tool TOOL" span (GenAI conventions: gen_ai.operation.name,
// gen_ai.tool.name, gen_ai.tool.call.id) through the global provider, ended
// by record with the audit record's outcome and policy; a refusal names its
// rule. Arguments and results are recorded only with
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.

// startToolSpan starts the span of one call, from start.
func startToolSpan(ctx context.Context, id, tool string, start time.Time) (context.Context, trace.Span) {
	return telemetry.Tracer().Start(ctx, "execute_tool "+tool, trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(telemetry.GenAIOperationName.String("execute_tool"), telemetry.GenAIToolName.String(tool),
			telemetry.GenAIToolCallID.String(id)))
}

// endToolSpan ends a call's span with the outcome of its audit record.
func endToolSpan(span trace.Span, rec Record, res ...Result) {
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
		span.SetAttributes(telemetry.Refusal.String(rec.Error))
	}
	if rec.Outcome != OutcomeOK {
		span.SetAttributes(telemetry.ErrorType.String(string(rec.Outcome)))
		span.SetStatus(codes.Error, string(rec.Outcome))
	}
	if telemetry.CaptureContent() {
		span.SetAttributes(telemetry.GenAIToolCallArguments.String(string(rec.Args)))
		if len(res) > 0 {
			span.SetAttributes(telemetry.GenAIToolCallResult.String(res[0].Content()))
		}
	}
}
