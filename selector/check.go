package selector

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/toolselect/toolselect/internal/toolname"
	"github.com/toolselect/toolselect/registry"
)

// accept checks the calls of attempt a against the offer and the schemas:
// a rejected call fails the attempt unless FailOpen, calls past MaxCalls are
// dropped, and the rest end the session.
func (ss *Session) accept(a Attempt, raw []rawCall) Action {
	valid, rejected := ss.check(raw)
	ss.echoable(rejected)
	if len(rejected) > 0 && !ss.cfg.FailOpen {
		a.Kind, a.Rejected = KindValidation, rejected
		a.Message = rejectedSummary(rejected)
		return ss.fail(a)
	}
	dropped := rejected
	if len(valid) > ss.cfg.MaxCalls {
		for _, c := range valid[ss.cfg.MaxCalls:] {
			dropped = append(dropped, DroppedCall{Tool: c.Tool, Args: c.Args, Reason: DropMaxCalls,
				Message: fmt.Sprintf("beyond the first %d calls (max_calls)", ss.cfg.MaxCalls)})
		}
		valid = valid[:ss.cfg.MaxCalls]
	}
	a.OK = true
	a.Rejected = rejected
	ss.record(a)
	for _, d := range dropped {
		level := slog.LevelWarn
		if d.Reason == DropMaxCalls {
			level = slog.LevelInfo
		}
		ss.log.LogAttrs(ss.ctx, level, "tool selection: call dropped",
			slog.String("model", a.Model), slog.String("tool", d.Tool),
			slog.String("reason", string(d.Reason)), slog.String("why", d.Message))
	}
	ss.finish(&Result{Calls: valid, Attempts: ss.attempts, Dropped: dropped}, nil)
	return ss.Next()
}

// check resolves each call against the offered tools and validates its args.
func (ss *Session) check(raw []rawCall) (valid []ToolCall, rejected []DroppedCall) {
	valid = make([]ToolCall, 0, len(raw))
	for _, c := range raw {
		e, ok := ss.cur.byName[c.Tool]
		if !ok {
			known, exists := ss.reg.Lookup(c.Tool)
			switch {
			case exists && ss.cur.byName[known.Name()] == known:
				// A provider-mapped name used in JSON mode still resolves to an offered tool.
				e = known
			case exists:
				why, msg := ss.notOffered(known)
				near := ss.suggest(c.Tool, known)
				rejected = append(rejected, DroppedCall{Tool: c.Tool, Args: c.Args, Reason: DropNotOffered, Rule: why,
					Message:    fmt.Sprintf("tool %q was not offered: %s%s", known.Name(), msg, toolname.DidYouMean(near)),
					DidYouMean: near})
				continue
			default:
				near := ss.suggest(c.Tool, nil)
				rejected = append(rejected, DroppedCall{Tool: c.Tool, Args: c.Args, Reason: DropUnknownTool,
					Message:    fmt.Sprintf("tool %q is not registered%s", c.Tool, toolname.DidYouMean(near)),
					DidYouMean: near})
				continue
			}
		}
		checked, err := e.ParseArgs(c.Args)
		if err != nil {
			rejected = append(rejected, DroppedCall{Tool: c.Tool, Args: c.Args, Reason: DropInvalidArgs, Message: err.Error()})
			continue
		}
		// The call carries the value that was validated, not the model's bytes.
		valid = append(valid, ToolCall{Tool: e.Name(), Args: checked, Reasoning: c.Reasoning})
	}
	return valid, rejected
}

// suggest names the registered tools a call of name most likely meant, in
// the registry's suggestion order ([registry.Registry.Suggest]), among the
// tools the request's caller may run only: a suggestion never names a tool
// the caller may not run, nor the tool itself (not), which was not offered.
func (ss *Session) suggest(name string, not *registry.Entry) []string {
	return ss.reg.Suggest(name, func(e *registry.Entry) bool { return e != not && ss.rule.Allows(e) })
}

// notOffered says the one reason a registered tool was not in the offer:
// the caller's eligibility rule (a deny rule, unsafe, role, capability) or,
// for an eligible tool, that the offer was narrowed for the task.
func (ss *Session) notOffered(e *registry.Entry) (registry.Rule, string) {
	t := e.Def()
	switch why := ss.rule.Check(t); why {
	case registry.RuleDenied:
		return why, "a deny rule of the caller's names it"
	case registry.RuleUnsafe:
		return why, "it is marked unsafe and the request does not allow unsafe tools"
	case registry.RuleRole:
		return why, fmt.Sprintf("it is for the roles %v, and the caller holds none of them", t.Roles)
	case registry.RuleCapability:
		for _, c := range ss.rule.Capabilities {
			if !t.HasCapability(c) {
				return why, fmt.Sprintf("it does not declare the capability %q the request requires", c)
			}
		}
		return why, "it lacks a capability the request requires"
	}
	return registry.RuleNotInOffer, fmt.Sprintf("the caller may use it, but only %d of the %d eligible tools were offered for this task and it was not among them", len(ss.cur.names), len(ss.eligible))
}

// echoable makes rejected calls safe to report in attempts, results and
// log records: the API key is removed (a server may echo the Authorization
// header into a call; args that would no longer be JSON become {}), and args
// are clipped to the registry's depth and size limits (registry.ClipArgs),
// so that any JSON reader, Python's json included, can read the output.
func (ss *Session) echoable(rejected []DroppedCall) {
	key := ss.cfg.APIKey
	limits := ss.reg.Limits()
	for i := range rejected {
		d := &rejected[i]
		if key != "" {
			d.Tool, d.Message = redact(d.Tool, key), redact(d.Message, key)
			if strings.Contains(string(d.Args), key) {
				d.Args = json.RawMessage(redact(string(d.Args), key))
				if !json.Valid(d.Args) {
					d.Args = json.RawMessage("{}")
				}
			}
		}
		d.Tool = truncate(d.Tool, 256)
		d.Args = limits.ClipArgs(d.Args)
	}
}

func rejectedSummary(rejected []DroppedCall) string {
	parts := make([]string, 0, len(rejected))
	for _, r := range rejected {
		parts = append(parts, fmt.Sprintf("%s: %s", r.Reason, r.Message))
	}
	return fmt.Sprintf("%d invalid call(s) with fail_closed: %s", len(rejected), strings.Join(parts, "; "))
}
