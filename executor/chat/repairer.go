package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/selector"
)

// ErrRepairDeclined: the Repairer's model answered {"args": null} (a
// CallError's RepairErr).
var ErrRepairDeclined = errors.New("the model declined to repair the arguments")

// Repairer repairs arguments ([executor.Options.Repairer] = its RepairArgs) by asking a chat model, through the selector's
// ChatClient, to correct invalid arguments. It shows the model the tool's
// description and schema, the arguments and every violation, and expects
// {"args": {...}} back (JSON mode, optionally in a Markdown fence):
//
//	ex := executor.New(reg, &executor.Options{
//		Repairer: (&chat.Repairer{Client: client, Config: &cfg}).RepairArgs,
//	})
type Repairer struct {
	// Client sends the chat request (e.g. selector.NewOpenAIClient).
	Client selector.ChatClient
	// Config, when set, is the selector's configuration: the repair request
	// then speaks its provider dialect (docs/providers.md; Config.Shape): no
	// temperature for OpenAI's reasoning models, 1 where only 1 is taken,
	// the token limit in the dialect's field, the lowest reasoning setting,
	// json_schema where json_object is refused. Its Model is the default of
	// Model. nil sends the plain OpenAI-compatible request.
	Config *selector.Config
	// Model to ask; empty means Config.Model, else selector.DefaultModel.
	Model string
	// Temperature is sent as given (0 keeps repairs deterministic), or as
	// Config's dialect has it (omitted, or 1) when Config is set.
	Temperature float64
	// Timeout bounds the one request (0: 30s); the caller's deadline, if sooner, wins.
	Timeout time.Duration
}

const repairSystemPrompt = `You repair the arguments of a tool call that failed validation.
You are given the tool's name, description and JSON Schema, the arguments that were sent, and every violation (a JSON pointer into the arguments, the schema rule broken, and a message).
Reply with exactly one JSON object: {"args": {...}} holding the corrected arguments.
Keep the caller's intent and every valid value; change only what the violations require; never add properties the schema does not define.
If the arguments cannot be repaired without guessing, reply {"args": null}.`

// RepairArgs asks the model once.
func (r *Repairer) RepairArgs(ctx context.Context, req executor.RepairRequest) (json.RawMessage, error) {
	if r.Client == nil {
		return nil, errors.New("repair: no chat client")
	}
	user := struct {
		Tool        string          `json:"tool"`
		Description string          `json:"description,omitempty"`
		Schema      json.RawMessage `json:"schema,omitempty"`
		Args        any             `json:"args"`
		Violations  any             `json:"violations"`
	}{Tool: req.Tool, Description: req.Description, Schema: req.Schema, Violations: req.Violations}
	if json.Valid(req.Args) {
		user.Args = req.Args
	} else {
		user.Args = string(req.Args) // broken JSON is shown as text
	}
	content, err := json.MarshalIndent(user, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	creq := selector.ChatRequest{
		Model: r.model(),
		Messages: []selector.Message{
			{Role: "system", Content: repairSystemPrompt},
			{Role: "user", Content: string(content)},
		},
		Temperature:    r.Temperature,
		ResponseFormat: "json_object",
		Timeout:        timeout,
	}
	if r.Config != nil {
		r.Config.Shape(&creq, "repair", json.RawMessage(repairSchema))
	}
	resp, err := r.Client.Chat(cctx, creq)
	if err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	return parseRepair(resp.Content)
}

// repairSchema is the answer RepairArgs expects, for dialects that take a
// json_schema response format only.
const repairSchema = `{"type":"object","properties":{"args":{"type":["object","null"]}},"required":["args"]}`

// model is the model to ask.
func (r *Repairer) model() string {
	m := r.Model
	if m == "" && r.Config != nil {
		m = r.Config.Model
	}
	return cmp.Or(m, selector.DefaultModel)
}

// parseRepair reads {"args": {...}} (the object, or a JSON string holding it).
func parseRepair(content string) (json.RawMessage, error) {
	s := strings.TrimSpace(content)
	if strings.HasPrefix(s, "```") && strings.HasSuffix(s, "```") && len(s) >= 6 {
		body := s[3 : len(s)-3]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 {
			s = strings.TrimSpace(body[nl+1:])
		}
	}
	var reply struct {
		Args *json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal([]byte(s), &reply); err != nil {
		return nil, fmt.Errorf("repair: the reply is not a JSON object: %w", err)
	}
	if reply.Args == nil || string(*reply.Args) == "null" {
		return nil, ErrRepairDeclined
	}
	args := executor.Call{Args: *reply.Args}.Arguments()
	if len(args) == 0 || args[0] != '{' {
		return nil, errors.New(`repair: the reply's "args" is not a JSON object`)
	}
	return args, nil
}
