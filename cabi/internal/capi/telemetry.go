package capi

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/toolselect/toolselect/otelsetup"
)

var (
	telemetryOnce     sync.Once
	telemetryWarnings []string
)

// StartTelemetry sets up OpenTelemetry export from the host's OTEL_*
// environment, once per process (the library's load). A setting it cannot
// use turns its signal off; it is said once on stderr (there is no caller
// yet to return it to) and listed by every FlushTelemetry.
func StartTelemetry() {
	telemetryOnce.Do(func() {
		if _, err := otelsetup.Setup(context.Background(), os.Getenv, os.Stderr); err != nil {
			telemetryWarnings = strings.Split(err.Error(), "\n")
			for _, w := range telemetryWarnings {
				fmt.Fprintln(os.Stderr, "libtoolselect: warning: telemetry:", w)
			}
		}
	})
}

// FlushTelemetry exports the spans and metrics still held (within 5 s):
// {"flushed":true}, with "warnings" listing the OTEL_* settings that were
// not used (each turned its signal off) when there are any.
func FlushTelemetry() Result {
	StartTelemetry()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := otelsetup.Flush(ctx); err != nil {
		return Fail(ErrInternal, "telemetry: flushing: %v", err)
	}
	if len(telemetryWarnings) > 0 {
		return Ok(map[string]any{"flushed": true, "warnings": telemetryWarnings})
	}
	return Ok(map[string]bool{"flushed": true})
}
