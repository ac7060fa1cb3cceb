package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/executor/metatool"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// The meta-tools are served with rank's definitions (the one text shared with
// the executor and token accounting), plus MCP's title and annotations.
func findToolDef() *mcp.Tool {
	t := metaTool(rank.FindToolName)
	return &mcp.Tool{
		Name:        t.Name,
		Title:       "Find a tool",
		Description: t.Description,
		InputSchema: t.Parameters,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}
}

// callToolDef says call_tool is destructive exactly when the proxy runs
// destructive tools (a tool that says nothing is destructive to its
// clients, MCP's default).
func callToolDef(allowDestructive bool) *mcp.Tool {
	t := metaTool(rank.CallToolName)
	return &mcp.Tool{Name: t.Name, Title: "Call a tool", Description: t.Description, InputSchema: t.Parameters,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &allowDestructive, OpenWorldHint: new(true)}}
}

// metaTool returns rank's definition of the meta-tool name. The built-in
// definitions always register (rank's tests check it), so a failure is a bug.
func metaTool(name string) registry.Tool {
	entries, err := rank.MetaToolEntries()
	if err == nil {
		for _, e := range entries {
			if e.Name() == name {
				return e.Tool()
			}
		}
	}
	panic(fmt.Sprintf("mcpproxy: rank defines no meta-tool %q (%v)", name, err))
}

// handleMeta answers find_tool and call_tool with the meta-tools' Handle (package executor/metatool):
// one implementation of the meta-tools, one result type (metatool.FoundTool),
// one outcome vocabulary (executor.Outcome).
func (p *Proxy) handleMeta(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx = withOrigin(ctx, req)
	p.syncPins() // an approval made since counts for this find or call
	if req.Params.Name == rank.CallToolName {
		var target struct {
			Name string `json:"name"`
		}
		if raw, err := json.Marshal(req.Params.Arguments); err == nil && json.Unmarshal(raw, &target) == nil {
			if r := p.heldResult(target.Name); r != nil {
				return r, nil
			}
			p.awaitStart(ctx, target.Name)
		}
	}
	start := time.Now()
	res, _, err := p.meta.Handle(ctx, executor.Call{Tool: req.Params.Name, Args: req.Params.Arguments})
	d := time.Since(start)
	if req.Params.Name == rank.FindToolName {
		p.stats.find(d, res.IsError)
		if found, ok := res.Value.([]metatool.FoundTool); ok && !res.IsError {
			var a struct {
				Query string `json:"query"`
				Limit int    `json:"limit"`
			}
			if raw, err := json.Marshal(req.Params.Arguments); err == nil {
				_ = json.Unmarshal(raw, &a) // HandleMeta validated them
			}
			names := make([]string, len(found))
			for i, f := range found {
				names[i] = f.Name
			}
			p.learnFound(req.Session, a.Query, names)
			return p.renderFound(found, p.withheld(ctx, a.Query, a.Limit, found)), nil
		}
	} else {
		p.stats.call(p.toolLabel(res.Tool), string(res.Outcome), d)
		if err == nil {
			p.learnCall(ctx, res)
		}
	}
	return p.render(res, err), nil
}

// handleDirect answers a tools/call of a tool listed in full (keep-list, top
// K). The middleware normally answers first; this is the same path.
func (p *Proxy) handleDirect(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return p.CallTool(withOrigin(ctx, req), req.Params.Name, req.Params.Arguments), nil
}

// middleware sends every resources/read of an upstream's URI to it, and
// routes every tools/call that does not name a meta-tool to
// CallTool, whether or not tools/list shows the name: a tool found with
// find_tool may be called directly, and an unknown name gets a tool result
// with isError (what the conformance suite accepts from a conformant server)
// instead of the SDK's JSON-RPC error.
func (p *Proxy) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "resources/read" {
			// Any URI under an upstream's namespace is read from it, listed
			// or not (a template's instance, a resource_link in a result).
			if r, ok := req.(*mcp.ReadResourceRequest); ok && r.Params != nil {
				if _, _, ok := p.upstreamURI(r.Params.URI); ok {
					return p.readResource(ctx, r)
				}
			}
			return next(ctx, method, req)
		}
		if method == "tools/list" {
			p.syncPins() // an approval made since shows in this list
		}
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		r, ok := req.(*mcp.CallToolRequest)
		if !ok || r.Params == nil || (!p.topMode() && (r.Params.Name == rank.FindToolName || r.Params.Name == rank.CallToolName)) {
			return next(ctx, method, req)
		}
		return p.CallTool(withOrigin(ctx, r), r.Params.Name, r.Params.Arguments), nil
	}
}

// origin is the client request an upstream call is made for: its session (to
// relay progress and log messages), its context (so that, over streamable
// HTTP, they travel on the request's own stream) and its progress token.
type origin struct {
	ctx     context.Context
	session *mcp.ServerSession
	token   any
}

type originKey struct{}

func withOrigin(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	o := &origin{ctx: ctx, session: req.Session}
	if req.Params != nil {
		o.token = req.Params.GetProgressToken()
	}
	return context.WithValue(ctx, originKey{}, o)
}

func originOf(ctx context.Context) *origin {
	o, _ := ctx.Value(originKey{}).(*origin)
	return o
}
