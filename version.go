// Package toolselect is the module's root: it holds the one version of
// toolselect, read from the VERSION file beside this one. The command line
// (toolselect version), the C library (toolselect_version), the MCP proxy's
// server information, the Python package and its wheel all report it; see
// the packages registry, rank, selector, executor and mcpproxy for the library.
package toolselect

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var versionFile string

// Version is toolselect's release, from the VERSION file.
func Version() string { return strings.TrimSpace(versionFile) }
