package rank

import (
	"github.com/toolselect/toolselect/internal/toolname"
)

// splitNamespace is toolname.Split: the namespace of a tool name and its
// own part.
var splitNamespace = toolname.Split
