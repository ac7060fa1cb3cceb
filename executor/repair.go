package executor

import (
	"encoding/json"

	"github.com/toolselect/toolselect/registry"
)

// RepairRequest is what [Options.Repairer] is shown: the tool, the arguments as
// received and every violation found in them.
type RepairRequest struct {
	Tool        string          // canonical name
	Description string          // the tool's description
	Schema      json.RawMessage // the tool's parameters schema, verbatim (nil for a schema-less tool)
	Args        json.RawMessage // the invalid arguments (may not even be JSON)
	Violations  []registry.Violation
}
