package selector

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolselect/toolselect/registry"
)

// AnswerSchema is the JSON Schema of the answer the JSON mode asks for. It is
// embedded verbatim in the system prompt.
const AnswerSchema = `{"type":"object","properties":{"calls":{"type":"array","items":{"type":"object","properties":{"tool":{"type":"string","description":"the exact name of one of the tools listed"},"args":{"type":"object","description":"arguments satisfying that tool's parameters schema"},"reasoning":{"type":"string","description":"why this call is needed, in one sentence"}},"required":["tool","args"],"additionalProperties":false}}},"required":["calls"],"additionalProperties":false}`

const systemJSON = `You choose tool calls for a task. Use only the tools listed under "Tools", each by its exact "name".
Select the calls the task needs, in the order they should run, at most %d. Each call's "args" must be a JSON object that satisfies the tool's "parameters" JSON Schema; "reasoning" says briefly why the call is needed. If no tool fits the task, answer {"calls":[]}.

Answer with one JSON object and nothing else, matching this JSON Schema:
%s

Tools:
%s`

const systemNative = `You choose tool calls for a task. Call only the functions provided, with arguments that satisfy their parameters schema, in the order they should run, at most %d calls. If no function fits the task, answer without calling any.`

// buildSystemPrompt returns the system prompt for the offered tools.
func buildSystemPrompt(mode string, maxCalls int, offered []*registry.Entry) (string, error) {
	if mode == ModeNative {
		return fmt.Sprintf(systemNative, maxCalls), nil
	}
	tools, err := registry.MarshalView(offered, registry.FormatSchema, nil)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(systemJSON, maxCalls, AnswerSchema, tools), nil
}

// buildUserPrompt renders the task, sub-tasks, query and context.
func buildUserPrompt(req *Request) (string, error) {
	var b strings.Builder
	b.WriteString("Task")
	if req.Task.ID != "" {
		fmt.Fprintf(&b, " (id %s)", req.Task.ID)
	}
	b.WriteString(":\n")
	b.WriteString(strings.TrimSpace(req.Task.Description))
	b.WriteString("\n")
	if len(req.Task.SubTasks) > 0 {
		b.WriteString("\nSub-tasks:\n")
		for i, st := range req.Task.SubTasks {
			fmt.Fprintf(&b, "%d. ", i+1)
			if st.ID != "" {
				fmt.Fprintf(&b, "(id %s) ", st.ID)
			}
			b.WriteString(strings.TrimSpace(st.Description))
			b.WriteString("\n")
		}
	}
	if q := strings.TrimSpace(req.Query); q != "" {
		b.WriteString("\nQuery:\n")
		b.WriteString(q)
		b.WriteString("\n")
	}
	if len(req.Context) > 0 {
		ctxJSON, err := json.Marshal(req.Context)
		if err != nil {
			return "", fmt.Errorf("%w: context is not JSON: %v", ErrBadRequest, err)
		}
		b.WriteString("\nContext (JSON):\n")
		b.Write(ctxJSON)
		b.WriteString("\n")
	}
	return b.String(), nil
}

// rankQuery is the text a Prefilter ranks by: the query, or the task.
func rankQuery(req *Request) string {
	if q := strings.TrimSpace(req.Query); q != "" {
		return q
	}
	parts := []string{strings.TrimSpace(req.Task.Description)}
	for _, st := range req.Task.SubTasks {
		parts = append(parts, strings.TrimSpace(st.Description))
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}
