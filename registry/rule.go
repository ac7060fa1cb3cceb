package registry

// Rule names the rule a call or a tool broke, as data: why a tool's
// definition was refused ([RegistrationError.Rule]), why a tool is not
// eligible for a caller ([Eligibility.Check]), why the executor refused or
// would not run a call (executor.CallError.Rule and its audit record's
// policy), why the selector dropped a call the model made
// (selector.DroppedCall.Rule). The values are the C library's rule strings
// and the Python exception's rule, unchanged on every front door; each front
// door words what would let the call run from the rule, in its own names
// (the Go executor's Options.Hint, the MCP proxy's flags, the CLI's flags,
// Python's keywords), never by rewriting another door's text.
type Rule string

// The rules. Denied, unsafe, role and capability are the caller's eligibility
// ([Eligibility.Check]); no_schema and no_schema_mode refuse a tool's
// definition ([RegistrationError.Rule]); the rest are met only when a call
// is run or offered.
const (
	RuleUnknownTool      Rule = "unknown_tool"        // no registered tool has the name ([ErrUnknownTool])
	RuleInvalidArgs      Rule = "invalid_args"        // the arguments broke the schema ([ErrInvalidArgs])
	RuleNoHandler        Rule = "no_handler"          // the tool is registered but nothing runs it
	RuleUnsafe           Rule = "unsafe"              // safe: false and the caller does not allow unsafe tools
	RuleRole             Rule = "role"                // the tool lists roles the caller holds none of
	RuleCapability       Rule = "capability"          // the tool lacks a capability the caller requires
	RuleDenied           Rule = "denied_by_rule"      // a deny rule of the caller's names the tool ([ToolRules])
	RuleNoSchemaReadOnly Rule = "no_schema_read_only" // a schema-less read-only tool does not declare readOnly
	RuleApprovalRequired Rule = "approval_required"   // the tool is to be asked about (requires approval, an ask rule) and no approver
	RuleApprovalDenied   Rule = "approval_denied"     // the approver said no
	RuleNotInOffer       Rule = "not_in_offer"        // the caller may use the tool, but the offer left it out
	RuleNoSchema         Rule = "no_schema"           // a definition without a parameters schema, not allowed one
	RuleNoSchemaMode     Rule = "no_schema_mode"      // allowNoSchema without a valid noSchemaMode
)
