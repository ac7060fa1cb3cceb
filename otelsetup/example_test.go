package otelsetup_test

import (
	"context"
	"fmt"
	"os"

	"github.com/toolselect/toolselect/otelsetup"
)

// Setup reads the OTEL_* environment (here a map): a setting it cannot use
// turns its signal off and comes back as a warning, never as a failure.
func ExampleSetup() {
	env := map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}
	stop, warnings := otelsetup.Setup(context.Background(), func(k string) string { return env[k] }, os.Stderr)
	fmt.Println(warnings)
	fmt.Println(stop(context.Background()))
	// Output:
	// OTEL_TRACES_EXPORTER="zipkin": zipkin not supported (toolselect exports traces with otlp or console, or none); traces are off
	// <nil>
}

// Flush exports what the providers Setup installed still hold; with none
// installed it has nothing to do.
func ExampleFlush() {
	fmt.Println(otelsetup.Flush(context.Background()))
	// Output:
	// <nil>
}
