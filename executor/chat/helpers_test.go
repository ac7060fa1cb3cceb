package chat_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/internal/testing/exectest"
	"github.com/toolselect/toolselect/registry"
)

const msgSchema = `{"type":"object","properties":{"msg":{"type":"string","minLength":1}},"required":["msg"],"additionalProperties":false}`

// fixture is an executor over echo, an unsafe tool, a role-restricted one
// and a read-only schema-less status, all bound to echo, auditing to the sink.
// The shared helpers (internal/testing/exectest), under this file's names.
var (
	echo       = exectest.Echo
	call       = exectest.Call
	callError  = exectest.CallError
	onlyRecord = exectest.OnlyRecord
)

type recordSink = exectest.RecordSink

func fixture(t *testing.T, opts *executor.Options) (*executor.Executor, *recordSink) {
	t.Helper()
	status := registry.NewTool("status", "test tool status", nil)
	status.AllowNoSchema, status.NoSchemaMode, status.Capabilities = true, registry.NoSchemaReadOnly, []string{registry.CapabilityReadOnly}
	danger := registry.NewTool("danger", "test tool danger", json.RawMessage(msgSchema))
	danger.Safe = false
	deploy := registry.NewTool("deploy", "test tool deploy", json.RawMessage(msgSchema))
	deploy.Roles = []string{"sre"}
	reg := registry.New(nil)
	require.NoError(t, reg.RegisterAll([]registry.Tool{registry.NewTool("echo", "test tool echo", json.RawMessage(msgSchema)), danger, deploy, status}))
	sink := &recordSink{}
	o := executor.Options{}
	if opts != nil {
		o = *opts
	}
	o.Audit = sink.Audit
	ex := executor.New(reg, &o)
	for _, name := range []string{"echo", "danger", "deploy", "status"} {
		require.NoError(t, ex.Handle(name, echo))
	}
	return ex, sink
}

func registryWithEcho(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New(nil)
	require.NoError(t, reg.Register(registry.NewTool("echo", "test tool echo", json.RawMessage(msgSchema))))
	return reg
}
