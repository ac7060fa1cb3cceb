package rank

import "strings"

// splitNamespace splits a tool name into the namespace that groups it with
// its siblings (an MCP server, a Python module) and its own local name:
// "github__create_issue" -> ("github", "create_issue"), "math.factorial" ->
// ("math", "factorial"), "fs/read" -> ("fs", "read"). "__" wins over "."
// and "/", which split at their last occurrence. A name with no separator has
// no namespace.
func splitNamespace(name string) (ns, local string) {
	if i := strings.Index(name, "__"); i > 0 && i+2 < len(name) {
		return name[:i], name[i+2:]
	}
	if i := strings.LastIndexAny(name, "./"); i > 0 && i+1 < len(name) {
		return name[:i], name[i+1:]
	}
	return "", name
}
