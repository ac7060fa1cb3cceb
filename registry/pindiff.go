package registry

import (
	"bytes"
	"encoding/json"
	"strings"
)

// diffContext is how many unchanged lines a diff shows around a change.
const diffContext = 2

// Diff shows what the definition waiting for approval changes in the pinned
// one (of a PinCheck from [Pins.Waiting]), line by line over both written as indented JSON: "-" lines are the
// pin's, "+" lines the pending definition's, "  " lines unchanged context
// ("  ..." stands for the unchanged lines left out). A tool held for review
// on first sight, or pinned before definitions were kept, shows its whole
// definition as added; a flagged pin waiting for review shows itself
// whole, unchanged.
func (r PinCheck) Diff() string {
	before, after := indentedLines(r.Pinned), indentedLines(r.Pending)
	if r.Pending == nil { // the pin itself is to be reviewed: all of it
		var sb strings.Builder
		for _, l := range before {
			sb.WriteString("  " + l + "\n")
		}
		return sb.String()
	}
	return lineDiff(before, after, diffContext)
}

// indentedLines is a canonical definition written as indented JSON, one
// element a line; none for no definition.
func indentedLines(def json.RawMessage) []string {
	if len(def) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if json.Indent(&buf, def, "", "  ") != nil {
		return []string{string(def)}
	}
	return strings.Split(buf.String(), "\n")
}

// lineDiff is a unified line diff of a and b (longest common subsequence)
// with context lines of context around each change.
func lineDiff(a, b []string, context int) string {
	// Definitions are small; a very long one is shown whole rather than
	// spending time and memory quadratic in its length.
	if len(a)*len(b) > 4_000_000 {
		var sb strings.Builder
		for _, l := range a {
			sb.WriteString("- " + l + "\n")
		}
		for _, l := range b {
			sb.WriteString("+ " + l + "\n")
		}
		return sb.String()
	}
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			lines = append(lines, line{' ', a[i]})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', a[i]})
			i++
		default:
			lines = append(lines, line{'+', b[j]})
			j++
		}
	}
	near := make([]bool, len(lines)) // a change within context lines
	for k, l := range lines {
		if l.op == ' ' {
			continue
		}
		for d := max(0, k-context); d <= min(len(lines)-1, k+context); d++ {
			near[d] = true
		}
	}
	var sb strings.Builder
	skipped := false
	for k, l := range lines {
		if !near[k] {
			if !skipped {
				sb.WriteString("  ...\n")
			}
			skipped = true
			continue
		}
		skipped = false
		sb.WriteString(string(l.op) + " " + l.text + "\n")
	}
	return sb.String()
}
