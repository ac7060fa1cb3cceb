package selector

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolselect/toolselect/internal/chatwire"
	"github.com/toolselect/toolselect/registry"
)

// answerSchema is the JSON Schema of the answer the JSON mode asks for. It is
// embedded verbatim in the system prompt.
const answerSchema = `{"type":"object","properties":{"calls":{"type":"array","items":{"type":"object","properties":{"tool":{"type":"string","description":"the exact name of one of the tools listed"},"args":{"type":"object","description":"arguments satisfying that tool's parameters schema"},"reasoning":{"type":"string","description":"why this call is needed, in one sentence"}},"required":["tool","args"],"additionalProperties":false}}},"required":["calls"],"additionalProperties":false}`

// answerSchemaSearch is answerSchema with the search round: when the offer is
// a ranked part of the catalog, the model may answer {"calls":[],"search":"..."}.
var answerSchemaSearch = strings.Replace(answerSchema, `},"required":["calls"]`,
	`,"search":{"type":"string","description":"only with no calls: words for the capability you need, to search the full catalog"}},"required":["calls"]`, 1)

// searchToolItem is the OpenAI chat `tools` entry of SearchToolName.
const searchToolItem = `{"type":"function","function":{"name":"search_tools","description":"Search the full tool catalog when none of the other functions fits the task: the best matches for your words replace the functions offered, and you are asked again. Call it alone.","parameters":{"type":"object","properties":{"query":{"type":"string","description":"words for the capability you need"}},"required":["query"],"additionalProperties":false}}}`

const searchJSON = ` The tools listed are the best matches from a larger catalog: if none of them fits the task, answer {"calls":[],"search":"<words for the capability you need>"} and you will be asked again with the catalog's best matches for those words.`

const searchNative = ` The functions provided are the best matches from a larger catalog: if none of them fits the task, call only search_tools with words for the capability you need, and you will be asked again with the catalog's best matches for those words.`

const systemJSON = `You choose tool calls for a task. Use only the tools listed under "Tools", each by its exact "name".
Select the calls the task needs, in the order they should run, at most %d. Each call's "args" must be a JSON object that satisfies the tool's "parameters" JSON Schema; "reasoning" says briefly why the call is needed. If no tool fits the task, answer {"calls":[]}.%s

Answer with one JSON object and nothing else, matching this JSON Schema:
%s` + chatwire.ToolsHeading + `%s`

const systemNative = `You choose tool calls for a task. Call only the functions provided, with arguments that satisfy their parameters schema, in the order they should run, at most %d calls. If no function fits the task, answer without calling any.%s`

// buildSystemPrompt returns the system prompt for the offered tools; search
// says whether the model may ask for a search round.
func buildSystemPrompt(mode Mode, maxCalls int, offered []*registry.Entry, search bool) (string, error) {
	if mode == ModeNative {
		extra := ""
		if search {
			extra = searchNative
		}
		return fmt.Sprintf(systemNative, maxCalls, extra), nil
	}
	tools, err := registry.MarshalView(offered, viewFormat(mode), nil)
	if err != nil {
		return "", err
	}
	if search {
		return fmt.Sprintf(systemJSON, maxCalls, searchJSON, answerSchemaSearch, tools), nil
	}
	return fmt.Sprintf(systemJSON, maxCalls, "", answerSchema, tools), nil
}

// viewFormat is the format the offered tools travel in: the schema view in
// the JSON mode's system prompt, OpenAI `tools` entries in native mode. The
// offer budget counts this view.
func viewFormat(mode Mode) registry.Format {
	if mode == ModeNative {
		return registry.FormatOpenAI
	}
	return registry.FormatSchema
}

// searchNote is added to the user prompt after a search round.
func searchNote(query string, found bool) string {
	q, _ := json.Marshal(query)
	if !found {
		return fmt.Sprintf("\nSearch:\nYou searched the catalog for %s; nothing matched, so the tools offered are unchanged.\n", q)
	}
	return fmt.Sprintf("\nSearch:\nYou searched the catalog for %s; the tools offered now are its best matches.\n", q)
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
			return "", fmt.Errorf("%w: context is not JSON: %w", ErrBadRequest, err)
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
