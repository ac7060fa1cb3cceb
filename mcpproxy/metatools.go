package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/rank"
)

// The meta-tools are served with rank's definitions (the one text shared with
// the executor and token accounting), plus MCP's title and annotations.
func findToolDef() *mcp.Tool {
	t := rank.FindToolTool()
	return &mcp.Tool{
		Name:        t.Name,
		Title:       "Find a tool",
		Description: t.Description,
		InputSchema: t.Parameters,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}
}

func callToolDef() *mcp.Tool {
	t := rank.CallToolTool()
	return &mcp.Tool{Name: t.Name, Title: "Call a tool", Description: t.Description, InputSchema: t.Parameters}
}

// metaArgs decodes a meta-tool's arguments strictly.
func metaArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (p *Proxy) handleFind(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Query *string `json:"query"`
		Limit *int    `json:"limit"`
	}
	if err := metaArgs(req.Params.Arguments, &in); err != nil {
		return errorResult(fmt.Sprintf(`invalid arguments for find_tool: %v. Expected {"query": string, "limit"?: integer 1..%d}.`, err, MaxFindLimit),
			map[string]any{"error": "invalid_arguments", "tool": FindToolName}), nil
	}
	if in.Query == nil || strings.TrimSpace(*in.Query) == "" {
		return errorResult(`invalid arguments for find_tool: "query" is required and must not be empty.`,
			map[string]any{"error": "invalid_arguments", "tool": FindToolName}), nil
	}
	limit := DefaultFindLimit
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxFindLimit {
			return errorResult(fmt.Sprintf(`invalid arguments for find_tool: "limit" must be between 1 and %d.`, MaxFindLimit),
				map[string]any{"error": "invalid_arguments", "tool": FindToolName}), nil
		}
		limit = *in.Limit
	}
	found, err := p.FindTool(ctx, *in.Query, limit)
	if err != nil {
		return errorResult("find_tool failed: "+err.Error(), map[string]any{"error": "ranking_failed"}), nil
	}
	out := map[string]any{"tools": found}
	text, _ := json.Marshal(out)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: out}, nil
}

func (p *Proxy) handleCall(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := metaArgs(req.Params.Arguments, &in); err != nil {
		return errorResult("invalid arguments for call_tool: "+err.Error()+`. Expected {"name": string, "arguments": object}.`,
			map[string]any{"error": "invalid_arguments", "tool": CallToolName}), nil
	}
	if in.Name == nil || *in.Name == "" {
		return errorResult(`invalid arguments for call_tool: "name" is required (a tool name returned by find_tool).`,
			map[string]any{"error": "invalid_arguments", "tool": CallToolName}), nil
	}
	return p.CallTool(ctx, *in.Name, in.Arguments), nil
}
