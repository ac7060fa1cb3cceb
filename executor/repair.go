package executor

import (
	"context"
	"encoding/json"

	"github.com/toolselect/toolselect/registry"
)

// RepairRequest is what a Repairer is shown: the tool, the arguments as
// received and every violation found in them.
type RepairRequest struct {
	Tool        string          // canonical name
	Description string          // the tool's description
	Schema      json.RawMessage // the tool's parameters schema, verbatim (nil for a schema-less tool)
	Args        json.RawMessage // the invalid arguments (may not even be JSON)
	Violations  []registry.Violation
}

// Repairer proposes corrected arguments for an invalid call. The executor
// asks it at most once per call and validates its answer again like any other
// arguments; an error means "no repair" and the call stays invalid.
// NewChatRepairer builds one over a selector.ChatClient.
type Repairer interface {
	RepairArgs(ctx context.Context, req RepairRequest) (json.RawMessage, error)
}
