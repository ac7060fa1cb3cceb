package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/executor/chat"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// scriptedChat answers each Chat with the next reply and records the requests.
type scriptedChat struct {
	replies []string
	errs    []error
	reqs    []selector.ChatRequest
}

func (c *scriptedChat) Chat(_ context.Context, req selector.ChatRequest) (selector.ChatResponse, error) {
	i := len(c.reqs)
	c.reqs = append(c.reqs, req)
	if i < len(c.errs) && c.errs[i] != nil {
		return selector.ChatResponse{}, c.errs[i]
	}
	if i >= len(c.replies) {
		return selector.ChatResponse{}, errors.New("no more replies")
	}
	return selector.ChatResponse{Content: c.replies[i]}, nil
}

func newSelector(t *testing.T, client selector.ChatClient) *selector.ToolSelector {
	t.Helper()
	var cfg selector.Config
	cfg.Logger = slog.New(slog.DiscardHandler)
	s, err := selector.New(client, &cfg)
	require.NoError(t, err)
	return s
}

func TestResolveThenRun(t *testing.T) {
	model := &scriptedChat{replies: []string{`{"calls":[{"tool":"echo","args":{"msg":"one"},"reasoning":"first"},{"tool":"status","args":{}}]}`}}
	ex, sink := fixture(t, &executor.Options{})
	ex2 := ex.With(&executor.Options{Audit: sink.Audit})
	calls, err := chat.Resolve(context.Background(), ex2, newSelector(t, model).SelectToolCalls, selector.Request{Task: selector.Task{Description: "say one, then check status"}})
	require.NoError(t, err)
	require.Len(t, calls, 2)
	assert.Equal(t, "echo", calls[0].Tool)
	assert.Equal(t, "first", calls[0].Reasoning)

	// The executor's policy decides what is offered: no unsafe tool, no role-restricted one.
	require.Len(t, model.reqs, 1)
	system := model.reqs[0].Messages[0].Content
	assert.NotContains(t, system, `"danger"`)
	assert.NotContains(t, system, `"deploy"`)
	assert.Contains(t, system, `"echo"`)

	outs := ex2.CallAll(context.Background(), calls)
	require.Len(t, outs, 2)
	for _, o := range outs {
		require.NoError(t, o.Err)
		assert.Equal(t, executor.OutcomeOK, o.Result.Outcome)
	}
	assert.Len(t, sink.Records(), 2)
}

// An executor that runs only read-only tools has the model offered only
// those: its required capabilities join the request's.
func TestResolveOffersOnlyCapableTools(t *testing.T) {
	reg := registry.New(nil)
	obj := json.RawMessage(`{"type":"object"}`)
	read := registry.NewTool("read_file", "Read a file.", obj)
	read.Capabilities = []string{registry.CapabilityReadOnly}
	require.NoError(t, reg.RegisterAll([]registry.Tool{read, registry.NewTool("write_file", "Write a file.", obj)}))
	model := &scriptedChat{replies: []string{`{"calls":[{"tool":"read_file","args":{}}]}`}}
	ex := executor.New(reg, &executor.Options{Capabilities: []string{registry.CapabilityReadOnly}})
	sel := newSelector(t, model).SelectToolCalls
	req := selector.Request{Task: selector.Task{Description: "read then write the file"}, Capabilities: []string{"streaming"}}
	_, err := chat.Resolve(context.Background(), ex, sel, req)
	// read_file lacks streaming, which the request asked for: nothing is eligible.
	assert.Error(t, err)
	assert.Equal(t, []string{"streaming"}, req.Capabilities, "the caller's request is not modified")

	calls, err := chat.Resolve(context.Background(), ex, sel, selector.Request{Task: selector.Task{Description: "read then write the file"}})
	require.NoError(t, err)
	require.Len(t, calls, 1)
	require.Len(t, model.reqs, 1)
	system := model.reqs[0].Messages[0].Content
	assert.Contains(t, system, `"read_file"`)
	assert.NotContains(t, system, `"write_file"`)
}

// A request's roles count only where the executor holds them too.
func TestResolveRolesAreTheExecutors(t *testing.T) {
	reg := registry.New(nil)
	obj := json.RawMessage(`{"type":"object"}`)
	deploy := registry.NewTool("deploy", "Deploy the service.", obj)
	deploy.Roles = []string{"admin"}
	status := registry.NewTool("status", "Service status.", obj)
	status.Roles = []string{"ops"}
	require.NoError(t, reg.RegisterAll([]registry.Tool{deploy, status}))
	model := &scriptedChat{replies: []string{`{"calls":[{"tool":"status","args":{}}]}`}}
	ex := executor.New(reg, &executor.Options{Roles: []string{"ops"}})
	_, err := chat.Resolve(context.Background(), ex, newSelector(t, model).SelectToolCalls, selector.Request{Task: selector.Task{Description: "deploy, then check the status"},
		Roles: []string{"admin", "ops"}})
	require.NoError(t, err)
	require.Len(t, model.reqs, 1)
	system := model.reqs[0].Messages[0].Content
	assert.Contains(t, system, `"status"`)
	assert.NotContains(t, system, `"deploy"`, "the executor does not hold admin: deploy would be refused")
}

func TestResolveFailClosed(t *testing.T) {
	model := &scriptedChat{replies: []string{`not json`}}
	reg := registryWithEcho(t)
	ex := executor.New(reg, nil)
	calls, err := chat.Resolve(context.Background(), ex, newSelector(t, model).SelectToolCalls, selector.Request{Task: selector.Task{Description: "x"}})
	assert.Empty(t, calls)
	assert.ErrorIs(t, err, selector.ErrFailClosed)
	var se *selector.SelectionError
	assert.True(t, errors.As(err, &se))
}

func TestResolveWithoutSelector(t *testing.T) {
	ex := executor.New(registryWithEcho(t), nil)
	_, err := chat.Resolve(context.Background(), ex, nil, selector.Request{Task: selector.Task{Description: "x"}})
	assert.ErrorIs(t, err, chat.ErrNoSelector)
}

func TestNativeAndSelectorCalls(t *testing.T) {
	ex, _ := fixture(t, nil)
	nc := selector.NativeCall{ID: "call_1", Name: "echo", Arguments: `{"msg":"native"}`}
	res, err := ex.Call(context.Background(), executor.Call{ID: nc.ID, Tool: nc.Name, Args: json.RawMessage(nc.Arguments)})
	require.NoError(t, err)
	assert.Equal(t, "call_1", res.ID)
	assert.Equal(t, map[string]any{"msg": "native"}, res.Value)

	tcs := chat.FromToolCalls([]selector.ToolCall{{Tool: "echo", Args: json.RawMessage(`{"msg":"sel"}`), Reasoning: "r"}})
	assert.Equal(t, []executor.Call{{Tool: "echo", Args: json.RawMessage(`{"msg":"sel"}`), Reasoning: "r"}}, tcs)
}

func TestChatRepairer(t *testing.T) {
	t.Run("repairs through the chat client", func(t *testing.T) {
		model := &scriptedChat{replies: []string{"```json\n{\"args\":{\"msg\":\"fixed\"}}\n```"}}
		ex, sink := fixture(t, &executor.Options{Repairer: (&chat.Repairer{Client: model, Model: selector.DefaultModel, Timeout: 30 * time.Second}).RepairArgs})
		res, err := ex.Call(context.Background(), call("echo", `{"message":"fixed"}`))
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"msg": "fixed"}, res.Value)
		require.Len(t, model.reqs, 1, "one repair request")
		req := model.reqs[0]
		assert.Equal(t, selector.DefaultModel, req.Model)
		assert.Equal(t, "json_object", req.ResponseFormat)
		assert.Zero(t, req.Temperature)
		user := req.Messages[1].Content
		for _, want := range []string{`"tool": "echo"`, `"message": "fixed"`, `"rule": "required"`, `"rule": "additionalProperties"`, `"minLength"`} {
			assert.Contains(t, user, want, "the model sees the tool, args, schema and violations")
		}
		assert.True(t, onlyRecord(t, sink).Repaired)
	})
	t.Run("broken JSON args are shown as text", func(t *testing.T) {
		model := &scriptedChat{replies: []string{`{"args":"{\"msg\":\"ok\"}"}`}}
		ex, _ := fixture(t, &executor.Options{Repairer: (&chat.Repairer{Client: model}).RepairArgs})
		_, err := ex.Call(context.Background(), call("echo", `"{msg: ok"`))
		require.NoError(t, err)
		assert.Contains(t, model.reqs[0].Messages[1].Content, `"args": "{msg: ok"`)
	})
	for name, reply := range map[string]string{
		"declined":   `{"args":null}`,
		"not json":   `sure, here you go`,
		"not object": `{"args":[1]}`,
	} {
		t.Run(name, func(t *testing.T) {
			model := &scriptedChat{replies: []string{reply}}
			ex, _ := fixture(t, &executor.Options{Repairer: (&chat.Repairer{Client: model}).RepairArgs})
			_, err := ex.Call(context.Background(), call("echo", `{}`))
			ce := callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
			assert.Error(t, ce.RepairErr)
			assert.Len(t, model.reqs, 1)
			if name == "declined" {
				assert.ErrorIs(t, ce.RepairErr, chat.ErrRepairDeclined)
			}
		})
	}
	// With the selector's Config the repair request speaks its dialect
	// (it once sent temperature 0 to reasoning models, which refuse it).
	t.Run("speaks the selector's dialect", func(t *testing.T) {
		for _, tc := range []struct {
			cfg            selector.Config
			omitTemp       bool
			format, effort string
			limitField     string
		}{
			{selector.Config{Settings: selector.Settings{Provider: selector.ProviderOpenAI, Model: "o3-mini"}}, true, "json_object", `"low"`, "max_completion_tokens"},
			{selector.Config{Settings: selector.Settings{Provider: selector.ProviderLMStudio, Model: "qwen/qwen3-4b"}}, false, "json_schema", "", ""},
			{selector.Config{Settings: selector.Settings{Provider: selector.ProviderGeneric, Model: "llama3"}}, false, "json_object", "", ""},
		} {
			model := &scriptedChat{replies: []string{`{"args":{"msg":"fixed"}}`}}
			cfg := tc.cfg
			ex, _ := fixture(t, &executor.Options{Repairer: (&chat.Repairer{Client: model, Config: &cfg}).RepairArgs})
			_, err := ex.Call(context.Background(), call("echo", `{"message":"fixed"}`))
			require.NoError(t, err)
			req := model.reqs[0]
			assert.Equal(t, tc.cfg.Model, req.Model, "the Config's model")
			assert.Equal(t, tc.omitTemp, req.OmitTemperature, tc.cfg.Model)
			assert.Equal(t, tc.format, req.ResponseFormat, tc.cfg.Model)
			if tc.effort != "" {
				assert.Equal(t, tc.effort, string(req.Params["reasoning_effort"]))
			}
			if tc.limitField != "" {
				assert.Contains(t, req.Params, tc.limitField)
			}
			if tc.format == "json_schema" {
				assert.Contains(t, string(req.Params["response_format"]), `"name":"repair"`)
				assert.Contains(t, string(req.Params["response_format"]), `"args"`)
			}
		}
	})
	t.Run("transport error", func(t *testing.T) {
		model := &scriptedChat{errs: []error{errors.New("connection refused")}}
		ex, _ := fixture(t, &executor.Options{Repairer: (&chat.Repairer{Client: model}).RepairArgs})
		_, err := ex.Call(context.Background(), call("echo", `{}`))
		ce := callError(t, err, executor.OutcomeInvalid, executor.ErrInvalidArgs)
		assert.True(t, strings.Contains(ce.RepairErr.Error(), "connection refused"))
	})
}

// The executor's per-tool rules reach the offer: a tool a deny rule names
// is not offered (it would be refused), and the executor's unsafe mode
// "allow" does not offer unsafe tools to a request that allows none.
func TestResolveCarriesTheExecutorsRules(t *testing.T) {
	reg := registry.New(nil)
	obj := json.RawMessage(`{"type":"object"}`)
	wipe := registry.NewTool("wipe_disk", "Wipe the disk.", obj)
	wipe.Safe = false
	require.NoError(t, reg.RegisterAll([]registry.Tool{registry.NewTool("read_disk", "Read the disk.", obj),
		registry.NewTool("format_disk", "Format the disk.", obj), wipe}))
	model := &scriptedChat{replies: []string{`{"calls":[{"tool":"read_disk","args":{}}]}`}}
	ex := executor.New(reg, &executor.Options{Caller: registry.Eligibility{Rules: registry.ToolRules{Deny: []string{"format_*"}, Unsafe: "allow"}}})
	_, err := chat.Resolve(context.Background(), ex, newSelector(t, model).SelectToolCalls, selector.Request{Task: selector.Task{Description: "format, wipe or read the disk"}})
	require.NoError(t, err)
	system := model.reqs[0].Messages[0].Content
	assert.Contains(t, system, `"read_disk"`)
	assert.NotContains(t, system, `"format_disk"`, "denied by the executor's rule")
	assert.NotContains(t, system, `"wipe_disk"`, "the request allows no unsafe tool")
	require.NoError(t, ex.Handle("format_disk", func(context.Context, json.RawMessage) (any, error) { return "formatted", nil }))
	err = ex.Allowed("format_disk")
	assert.ErrorIs(t, err, executor.ErrDenied)
	var ce *executor.CallError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, registry.RuleDenied, ce.Rule)
}
