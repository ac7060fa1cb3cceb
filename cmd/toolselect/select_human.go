package main

import (
	"fmt"
	"io"
	"strings"
)

// printSelect writes select's result for people (on a terminal, without
// --json): the calls in the model's order with their arguments and
// reasoning, why there are none when there are none, then one line per
// attempt. It reads the same selectOutput the JSON is made of, so a field
// added there (as the offer budget adds what was offered and searched) is
// one more section here.
func printSelect(w io.Writer, out selectOutput) {
	switch {
	case out.Error != nil && len(out.Attempts) > 0:
		fmt.Fprintf(w, "no calls: selection failed (%s); each attempt below says why\n", out.Error.Kind)
	case out.Error != nil:
		fmt.Fprintf(w, "no calls: %s (%s)\n", oneLineText(out.Error.Message), out.Error.Kind)
	case len(out.Calls) == 0:
		fmt.Fprintln(w, "no calls: the model chose none")
	default:
		fmt.Fprintf(w, "%d %s:\n", len(out.Calls), plural(len(out.Calls), "call", "calls"))
		for i, c := range out.Calls {
			fmt.Fprintf(w, "  %d. %s %s\n", i+1, c.Tool, c.Args)
			if r := strings.TrimSpace(c.Reasoning); r != "" {
				fmt.Fprintf(w, "     %s\n", oneLineText(r))
			}
		}
	}
	if out.FeedbackError != "" {
		fmt.Fprintf(w, "not recorded as feedback: %s\n", oneLineText(out.FeedbackError))
	}
	if len(out.Offered) > 0 {
		fmt.Fprintf(w, "offered %d %s: %s\n", len(out.Offered), plural(len(out.Offered), "tool", "tools"), nameList(out.Offered, 12))
	}
	if len(out.Attempts) == 0 {
		fmt.Fprintln(w, "no model was asked")
		return
	}
	fmt.Fprintln(w, "attempts:")
	for _, a := range out.Attempts {
		status := "ok"
		if !a.OK {
			status = fmt.Sprintf("failed, %s: %s", a.Kind, oneLineText(a.Message))
		}
		tokens := ""
		if a.PromptTokens > 0 || a.CompletionTokens > 0 {
			tokens = fmt.Sprintf(", %d prompt + %d completion tokens", a.PromptTokens, a.CompletionTokens)
		}
		fmt.Fprintf(w, "  %s: %s (%.0f ms%s)\n", a.Model, status, float64(a.Latency.Microseconds())/1e3, tokens)
		for _, q := range a.Searches {
			fmt.Fprintf(w, "     searched %q: offered %s\n", oneLineText(q.Query), nameList(q.Offered, 12))
		}
		if a.UnansweredSearch != "" {
			fmt.Fprintf(w, "     asked to search %q with no search round left: no calls, the model's decision\n", oneLineText(a.UnansweredSearch))
		}
		for _, r := range a.Rejected {
			fmt.Fprintf(w, "     rejected %s (%s): %s\n", r.Tool, r.Reason, oneLineText(r.Message))
		}
	}
}

// nameList joins names, the first n of them, then "and N more".
func nameList(names []string, n int) string {
	if len(names) == 0 {
		return "nothing"
	}
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
}

// oneLineText folds white space (a model's reasoning may hold newlines).
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }
