package selecteval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/toolselect/toolselect/selector"
)

// Verdicts of a [Result].
const (
	// VerdictExact: the tools and their arguments pass the checker.
	VerdictExact = "exact"
	// VerdictWrongArgs: the right tools, an argument off.
	VerdictWrongArgs = "wrong_args"
	// VerdictWrongTools: a tool missing, extra or (ordered) out of order.
	VerdictWrongTools = "wrong_tools"
	// VerdictFailClosed: the selection failed; no calls to score.
	VerdictFailClosed = "fail_closed"
)

// Check scores calls against the task's gold calls. toolsOK is true when the
// set of tools called equals the gold set; exact when, besides, every call
// is paired with a gold call of its tool whose arguments it passes (in the
// gold order when the task is ordered). diff is the first difference from
// gold ("" when exact): which tool, which parameter, what value.
func Check(t *Task, calls []selector.ToolCall) (toolsOK, exact bool, diff string) {
	gold := map[string]int{}
	for _, c := range t.Calls {
		gold[c.Tool]++
	}
	got := map[string]int{}
	for _, c := range calls {
		got[c.Tool]++
	}
	for _, c := range t.Calls {
		if got[c.Tool] == 0 {
			diff = fmt.Sprintf("missing call to %s", c.Tool)
			break
		}
	}
	if diff == "" {
		for _, c := range calls {
			if gold[c.Tool] == 0 {
				diff = fmt.Sprintf("unexpected call to %s %s", c.Tool, compact(c.Args))
				break
			}
		}
	}
	if diff != "" {
		return false, false, diff
	}
	toolsOK = true
	for _, name := range sortedKeys(gold) {
		if got[name] != gold[name] {
			return true, false, fmt.Sprintf("%d call(s) to %s, gold has %d", got[name], name, gold[name])
		}
	}
	args := make([]map[string]any, len(calls))
	for i, c := range calls {
		if err := json.Unmarshal(c.Args, &args[i]); err != nil || args[i] == nil {
			return true, false, fmt.Sprintf("%s: the arguments are not a JSON object: %s", c.Tool, compact(c.Args))
		}
	}
	if t.Ordered {
		for i, g := range t.Calls {
			if calls[i].Tool != g.Tool {
				return true, false, fmt.Sprintf("call %d is %s, gold has %s there (the task is ordered)", i+1, calls[i].Tool, g.Tool)
			}
			if d := argDiff(&g, args[i]); d != "" {
				return true, false, d
			}
		}
		return true, true, ""
	}
	// Pair each gold call with a call of its tool that passes it; calls of
	// one tool are few, so a backtracking search is enough.
	used := make([]bool, len(calls))
	var match func(i int) bool
	match = func(i int) bool {
		if i == len(t.Calls) {
			return true
		}
		for j := range calls {
			if !used[j] && calls[j].Tool == t.Calls[i].Tool && argDiff(&t.Calls[i], args[j]) == "" {
				used[j] = true
				if match(i + 1) {
					return true
				}
				used[j] = false
			}
		}
		return false
	}
	if match(0) {
		return true, true, ""
	}
	// The first gold call no call passes, against the first call of its tool.
	for i := range t.Calls {
		g := &t.Calls[i]
		passed := false
		for j := range calls {
			if calls[j].Tool == g.Tool && argDiff(g, args[j]) == "" {
				passed = true
				break
			}
		}
		if passed {
			continue
		}
		for j := range calls {
			if calls[j].Tool == g.Tool {
				return true, false, argDiff(g, args[j])
			}
		}
	}
	return true, false, "no pairing of the calls with the gold calls passes every argument"
}

// argDiff returns the first parameter where args fails the gold call, or "".
func argDiff(g *GoldCall, args map[string]any) string {
	for _, p := range sortedKeys(g.Args) {
		vals := g.Args[p]
		v, given := args[p]
		if !given {
			if !omittable(vals) {
				return fmt.Sprintf("%s: parameter %q is missing (gold accepts %s)", g.Tool, p, list(vals))
			}
			continue
		}
		if !accepts(vals, v) {
			b, _ := json.Marshal(v)
			return fmt.Sprintf("%s: parameter %q is %s, gold accepts %s", g.Tool, p, b, list(vals))
		}
	}
	for _, p := range sortedKeys(args) {
		if _, named := g.Args[p]; !named {
			b, _ := json.Marshal(args[p])
			return fmt.Sprintf("%s: parameter %q = %s is not in the gold answer", g.Tool, p, b)
		}
	}
	return ""
}

// omittable reports whether "" is among the acceptable values.
func omittable(vals []json.RawMessage) bool {
	for _, raw := range vals {
		if bytes.Equal(bytes.TrimSpace(raw), []byte(`""`)) {
			return true
		}
	}
	return false
}

func accepts(vals []json.RawMessage, v any) bool {
	for _, raw := range vals {
		var want any
		if json.Unmarshal(raw, &want) == nil && reflect.DeepEqual(want, v) {
			return true
		}
	}
	return false
}

func list(vals []json.RawMessage) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, raw := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(compact(raw))
	}
	b.WriteByte(']')
	return b.String()
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
