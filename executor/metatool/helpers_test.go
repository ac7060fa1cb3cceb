package metatool_test

import "github.com/toolselect/toolselect/internal/testing/exectest"

// The shared helpers (internal/testing/exectest), under this file's names.
var (
	echo      = exectest.Echo
	call      = exectest.Call
	callError = exectest.CallError
)

type recordSink = exectest.RecordSink
