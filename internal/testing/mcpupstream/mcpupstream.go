// Package mcpupstream holds small MCP servers that test binaries serve over
// stdio when they double as an upstream of the proxy.
package mcpupstream

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeNoTools serves, over stdio until stdin closes, a prompt ("greet") and a
// resource ("zoo://animals/owl") and no tool: no tools capability, and
// tools/* is "Method not found", as a TypeScript SDK server without tools
// answers.
func ServeNoTools(name string) {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "tools/") {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"}
			}
			return next(ctx, method, req)
		}
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greet someone"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "zoo://animals/owl", Name: "owl", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "hoot"}}}, nil
		})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// ServeEcho serves, over stdio until stdin closes, one read-only tool:
// echo(text), which answers with the text it was given.
func ServeEcho(name string) {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text back, unchanged", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil
		})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}
