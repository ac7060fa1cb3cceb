// Package otelsetup installs OpenTelemetry's SDK from the standard OTEL_*
// environment: OTLP exporters over http/protobuf (grpc is refused with a
// warning) or the console, for traces and metrics. The library packages (registry, rank, selector,
// executor, mcpproxy) record through the OpenTelemetry API only, so a
// program that imports them links neither the SDK nor gRPC; the command
// line and the C library call [Setup], and a Go program that wants the same
// reading of OTEL_* may call it too (or install its own providers instead).
//
//	func main() {
//		stop, warnings := otelsetup.Setup(context.Background(), os.Getenv, os.Stderr)
//		if warnings != nil {
//			log.Print(warnings) // each unusable setting turned its signal off
//		}
//		defer stop(context.Background())
//		// registry, rank, selector, executor and mcpproxy now export
//		// their spans and metrics where OTEL_* says
//	}
//
// With no OTEL_* variable set nothing is installed. [Flush] exports what the
// installed providers still hold, for a host that exits without stopping them.
package otelsetup
