package chat_test

import (
	"encoding/json"
	"testing"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/internal/testing/exectest"
	"github.com/toolselect/toolselect/registry"
)

const msgSchema = exectest.MsgSchema

// The shared helpers (internal/testing/exectest), under this file's names.
var (
	echo             = exectest.Echo
	call             = exectest.Call
	callError        = exectest.CallError
	onlyRecord       = exectest.OnlyRecord
	registryWithEcho = exectest.RegistryWithEcho
)

type recordSink = exectest.RecordSink

// fixture is an executor over echo, an unsafe tool, a role-restricted one
// and a read-only schema-less status, all bound to echo, auditing to the sink.
func fixture(t *testing.T, opts *executor.Options) (*executor.Executor, *recordSink) {
	t.Helper()
	status := registry.NewTool("status", "test tool status", nil)
	status.AllowNoSchema, status.NoSchemaMode, status.Capabilities = true, registry.NoSchemaReadOnly, []string{registry.CapabilityReadOnly}
	danger := registry.NewTool("danger", "test tool danger", json.RawMessage(msgSchema))
	danger.Safe = false
	deploy := registry.NewTool("deploy", "test tool deploy", json.RawMessage(msgSchema))
	deploy.Roles = []string{"sre"}
	echoTool := registry.NewTool("echo", "test tool echo", json.RawMessage(msgSchema))
	return exectest.Executor(t, []registry.Tool{echoTool, danger, deploy, status}, opts, "echo", "danger", "deploy", "status")
}
