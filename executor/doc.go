// Package executor turns tool calls into results, safely.
//
//	func main() {
//		ex := executor.New(registry.New(nil), nil)
//		err := ex.Register(registry.NewTool("get_weather", "Current weather for a city.",
//			json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)),
//			func(ctx context.Context, args json.RawMessage) (any, error) { return "light rain", nil })
//		if err != nil {
//			log.Fatal(err)
//		}
//		res, err := ex.Call(context.Background(), executor.Call{Tool: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)})
//		if err != nil {
//			log.Fatal(err) // refused or invalid: a *CallError, and the handler never ran
//		}
//		fmt.Println(res.Content()) // light rain
//	}
//
// A call, from the selector or straight from a provider's tool_calls, goes
// through three steps:
//
//	Hydrate  parse the arguments (an object, or a JSON string holding one),
//	         resolve the name (canonical or provider-mapped), apply the static
//	         policy, validate against the tool's schema, and instantiate the
//	         tool's runner; invalid arguments get at most one model-assisted
//	         repair when Options.Repairer is set.
//	Run      apply the approval policy, then run the tool under a per-call
//	         timeout.
//	Call     Hydrate then Run.
//
// A tool's own failure (its error, a panic, a timeout) is a [Result] with
// [Result.IsError] set; a call that was refused or invalid is a [*CallError].
// Every call produces exactly one audit [Record], delivered to [Options.Audit].
//
// Policy, [registry.Eligibility.Decide] (allow, ask or deny), in the order
// it is applied:
//
//	unsafe tool (safe: false)        asked with an Approver; else refused unless Options.AllowUnsafe
//	tool with roles                  refused unless Options.Roles holds one of them
//	tool lacking a capability        refused when Options.Capabilities names one it does not declare
//	no schema, mode read-only        refused unless the tool declares the readOnly capability
//	requiresApproval, or no schema   runs only after Options.Approver approves the validated
//	  and mode human-approval        arguments (refused without one); an unanswered call
//	                                 parks for [Executor.Resume]
//	no schema, mode full             runs; audited validated: false
//	schema                           runs when the arguments validate
//
// # Start here
//
//   - [New] makes an [Executor] over a registry with [Options] (the policy:
//     AllowUnsafe, Roles, Capabilities, Approver; the audit sink, repair).
//   - [Executor.Handle] binds a [Handler] to a tool; [Executor.Call] (or
//     [Executor.Hydrate] then [Executor.Run]) runs a [Call] to a [Result].
//   - Refusals and invalid calls are a [CallError] with an [Outcome]; every
//     call yields one audit [Record].
//   - [Executor.With] is a view with another caller's policy over the same
//     handlers.
//
// The package links neither ranking nor selection: a program that only
// registers and runs tools stays small. The find_tool / call_tool
// meta-tools, which rank the catalog, are package executor/metatool;
// turning a task into calls through a selector (Resolve) and repairing
// arguments with a chat model (Repairer) are package executor/chat.
package executor
