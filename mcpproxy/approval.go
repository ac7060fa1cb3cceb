package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolselect/toolselect/executor"
)

// The values of [Config.Destructive] (unexported: a configuration file
// and the --destructive flag spell them as strings).
const (
	destructiveDeny  = "deny"  // destructive tools are neither findable nor callable
	destructiveAsk   = "ask"   // findable; each call asks the client's user (elicitation)
	destructiveAllow = "allow" // findable and callable
)

// destructive is the mode in force: Destructive, or "allow" for
// AllowDestructive, else "deny".
func (c *Config) destructive() string {
	switch {
	case c.Destructive != "":
		return c.Destructive
	case c.AllowDestructive:
		return destructiveAllow
	}
	return destructiveDeny
}

// errNoElicitation is why a call could not be asked about; the executor
// makes it a refusal (approval_denied) the model reads.
var errNoElicitation = errors.New("nobody can be asked")

// elicitApprover is the executor's Approver in "ask" mode: it sends the
// client that made the call an MCP elicitation request showing the tool, its
// upstream, the validated arguments and what its annotations say, and
// approves only on "accept". "decline" and "cancel" are refusals. A client
// that did not declare the elicitation capability, or that speaks the
// stateless 2026-07-28 protocol (where a server cannot send a request in the
// middle of one), gets a refusal saying so and naming --destructive allow
// (and the permissions.ask rule, which takes precedence over it). It asks,
// too, about the tools an ask rule names ([Config.Permissions]).
func (p *Proxy) elicitApprover(ctx context.Context, req executor.ApprovalRequest) (executor.Approval, error) {
	o := originOf(ctx)
	if o == nil || o.session == nil {
		return executor.Approval{}, fmt.Errorf("%w: the call came with no client session to ask", errNoElicitation)
	}
	ip := o.session.InitializeParams()
	switch {
	case ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil:
		return executor.Approval{}, fmt.Errorf("%w: the MCP client did not declare the elicitation capability, so its user cannot be asked to approve %q; the operator may start the proxy with --destructive allow (\"destructive\": \"allow\") to run destructive tools unasked, or, where a permissions.ask rule names the tool, change that rule", errNoElicitation, req.Tool.Name)
	case ip.ProtocolVersion >= statelessProtocol:
		return executor.Approval{}, fmt.Errorf("%w: the client speaks MCP %s, where a server cannot send an elicitation request in the middle of a call and this proxy does not yet answer with input requests; connect with an earlier protocol version, or the operator may start the proxy with --destructive allow (or change the permissions.ask rule that names the tool)", errNoElicitation, ip.ProtocolVersion)
	}
	res, err := o.session.Elicit(ctx, &mcp.ElicitParams{
		Message:         p.approvalMessage(req),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	})
	if err != nil {
		return executor.Approval{}, fmt.Errorf("the elicitation request failed: %w", err)
	}
	by := "the MCP client's user"
	if ip.ClientInfo != nil && ip.ClientInfo.Name != "" {
		by = fmt.Sprintf("the user of MCP client %q", ip.ClientInfo.Name)
	}
	switch res.Action {
	case "accept":
		return executor.Approval{Approved: true, By: by, ArgsSHA256: req.ArgsSHA256}, nil
	case "decline":
		return executor.Approval{By: by, Reason: "declined; do not call it again with these arguments unless the user asks"}, nil
	case "cancel":
		return executor.Approval{By: by, Reason: "canceled without a choice; the call did not run"}, nil
	}
	return executor.Approval{}, fmt.Errorf("the client answered the elicitation request with action %q, not accept, decline or cancel", res.Action)
}

// approvalMessage is what the client's user reads: the tool, its upstream,
// the validated arguments and its annotations.
func (p *Proxy) approvalMessage(req executor.ApprovalRequest) string {
	var b strings.Builder
	name := req.Tool.Name
	fmt.Fprintf(&b, "Allow the tool %q to run?\n", name)
	p.mu.Lock()
	r, ok := p.routes[name]
	p.mu.Unlock()
	if ok && r.up != nil {
		fmt.Fprintf(&b, "Upstream server: %s\n", r.up.cfg.Name)
	}
	if req.Tool.Description != "" {
		fmt.Fprintf(&b, "Description: %s\n", req.Tool.Description)
	}
	var ann []string
	if !req.Tool.Safe {
		ann = append(ann, "destructive (it may change or delete data)")
	}
	if req.Tool.RequiresApproval {
		ann = append(ann, "requires approval")
	}
	if a, ok := req.Tool.Metadata["annotations"]; ok {
		if raw, err := json.Marshal(a); err == nil {
			ann = append(ann, "MCP annotations "+string(raw))
		}
	}
	if len(ann) > 0 {
		fmt.Fprintf(&b, "Annotations: %s\n", strings.Join(ann, "; "))
	}
	if req.Tool.Safe && !req.Tool.ApprovalRequired() {
		// Neither destructive nor marked: only an ask rule asks about it.
		b.WriteString("Asked because: a permissions.ask rule of this proxy's configuration names it\n")
	}
	fmt.Fprintf(&b, "Arguments (validated against its input schema): %s\n", req.Args)
	fmt.Fprintf(&b, "Arguments SHA-256: %s", req.ArgsSHA256)
	return b.String()
}
