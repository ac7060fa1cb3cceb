package capi

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/toolselect/toolselect/internal/telemetry"
)

var (
	telemetryOnce sync.Once
	telemetryErr  error
)

// StartTelemetry sets up OpenTelemetry export from the host's OTEL_*
// environment, once per process (the library's load). A setting it cannot
// use is said once on stderr (there is no caller yet to return it to) and
// again by every FlushTelemetry.
func StartTelemetry() {
	telemetryOnce.Do(func() {
		if _, err := telemetry.Setup(context.Background(), os.Getenv, os.Stderr); err != nil {
			telemetryErr = err
			fmt.Fprintln(os.Stderr, "libtoolselect:", err)
		}
	})
}

// FlushTelemetry exports the spans and metrics still held (within 5 s):
// {"flushed":true}, or an ErrArgument naming the unusable OTEL_* setting.
func FlushTelemetry() Result {
	StartTelemetry()
	if telemetryErr != nil {
		return Fail(ErrArgument, "telemetry: %v", telemetryErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := telemetry.Flush(ctx); err != nil {
		return Fail(ErrInternal, "telemetry: flushing: %v", err)
	}
	return Ok(map[string]bool{"flushed": true})
}
