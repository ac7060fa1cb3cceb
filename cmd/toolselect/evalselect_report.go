package main

import (
	"fmt"
	"html"
	"os"
	"strings"

	"github.com/toolselect/toolselect/selecteval"
)

// writeSelectReport writes the scores as one self-contained HTML page: no
// script, stylesheet, font or image is fetched; the charts are inline SVG.
//
// The page is written with html.EscapeString on every value, not with
// html/template: text/template looks methods up by name through reflection,
// and that one call makes the linker keep every exported method of every
// type the command links (all of go-redis's commands, for one), several
// megabytes of the binary (docs/packaging.md). Every value here lands in
// element text, where escaping &, <, >, ' and " is what html/template does.
func writeSelectReport(path string, rep *selecteval.Report, catalog, tasks string) error {
	best := selecteval.Best(rep.Candidates)
	var b strings.Builder
	esc := func(v string) string { return html.EscapeString(v) }
	b.WriteString(reportHead)
	fmt.Fprintf(&b, "<p>Catalog <code>%s</code>, tasks <code>%s</code> (%d tasks per candidate). Best first.</p>\n", esc(catalog), esc(tasks), rep.Total)
	if rep.Interrupted {
		fmt.Fprintf(&b, "<p class=\"partial\" id=\"partial\">%s</p>", esc("Interrupted: "+ranSummary(rep)+"."))
	}
	b.WriteString("\n<table id=\"scores\"><tr><th>candidate</th><th>model</th><th>tasks</th><th>exact</th><th>tool accuracy</th><th>fail-closed</th><th>dropped</th><th>p50 ms</th><th>p95 ms</th><th>prompt tokens</th><th>completion tokens</th><th>cost</th></tr>\n")
	for _, s := range best {
		failClosed := pct(s.FailClosed)
		if len(s.FailClosedKinds) > 0 {
			failClosed += " (" + kinds(s.FailClosedKinds) + ")"
		}
		cost := "-"
		if s.Cost != nil {
			cost = fmt.Sprintf("$%.4f", *s.Cost)
		}
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td><td class="n">%d</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%d</td><td class="n">%.0f</td><td class="n">%.0f</td><td class="n">%d</td><td class="n">%d</td><td class="n">%s</td></tr>`+"\n",
			esc(s.Name), esc(s.Model), s.Tasks, esc(pct(s.Exact)), esc(pct(s.ToolAccuracy)), esc(failClosed), s.Dropped,
			s.Latency.P50, s.Latency.P95, s.PromptTokens, s.CompletionTokens, esc(cost))
	}
	b.WriteString("</table>\n<h2>Exact, tool accuracy and fail-closed per candidate</h2>\n")
	b.WriteString(barChart(best))
	b.WriteString("\n<h2>Latency against exact accuracy</h2>\n")
	b.WriteString(scatterChart(best))
	b.WriteString("\n<h2>Failed tasks</h2>\n")
	failed := 0
	for _, s := range best {
		for _, r := range s.Results {
			if r.Verdict == selecteval.VerdictExact {
				continue
			}
			if failed == 0 {
				b.WriteString("<table id=\"failed\"><tr><th>candidate</th><th>task</th><th>verdict</th><th>first difference from gold</th><th>calls returned</th></tr>\n")
			}
			failed++
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td><code>%s</code></td></tr>\n",
				esc(s.Name), esc(r.ID), esc(r.Verdict), esc(r.Difference), esc(reportCalls(r)))
		}
	}
	if failed > 0 {
		b.WriteString("</table>")
	} else {
		b.WriteString("<p id=\"failed\">None: every task passed for every candidate.</p>")
	}
	b.WriteString("\n</body></html>\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// reportCalls is a result's calls as one line: "tool {args}; ...".
func reportCalls(r selecteval.Result) string {
	var parts []string
	for _, c := range r.Calls {
		parts = append(parts, c.Tool+" "+string(c.Args))
	}
	if len(parts) == 0 {
		return "(no call)"
	}
	return strings.Join(parts, "; ")
}

// reportHead is the page up to its first paragraph.
const reportHead = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>toolselect eval --select</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.3em .6em}
td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f3f3f3}
.partial{background:#fff3cd;padding:.5em 1em;border:1px solid #e0c36c}
svg text{font:12px system-ui,sans-serif}code{font-size:12px}
</style></head><body>
<h1>Which model should select?</h1>
`

// barChart draws three bars per candidate: exact, tool accuracy, fail-closed.
func barChart(scores []selecteval.Score) string {
	const groupH, barH, left, width = 64, 16, 160, 400
	colors := []string{"#2e7d32", "#1565c0", "#c62828"}
	labels := []string{"exact", "tool accuracy", "fail-closed"}
	h := len(scores)*groupH + 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" id="bars" width="%d" height="%d" role="img" aria-label="bar chart">`, left+width+80, h)
	for i, s := range scores {
		y := 10 + i*groupH
		fmt.Fprintf(&b, `<text x="0" y="%d">%s</text>`, y+barH+8, html.EscapeString(s.Name))
		for j, v := range []float64{s.Exact, s.ToolAccuracy, s.FailClosed} {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %s</title></rect><text x="%.1f" y="%d">%s</text>`,
				left, y+j*barH, v*width, barH-2, colors[j], labels[j], pct(v), float64(left)+v*width+4, y+j*barH+12, pct(v))
		}
	}
	for j, l := range labels {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`, left+j*120, h-18, colors[j], left+j*120+14, h-9, l)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// scatterChart places each candidate by median latency (x) and exact (y).
func scatterChart(scores []selecteval.Score) string {
	const w, h, pad = 520, 300, 50
	maxLat := 1.0
	for _, s := range scores {
		maxLat = max(maxLat, s.Latency.P50)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" id="scatter" width="%d" height="%d" role="img" aria-label="latency against accuracy">`, w, h)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`, pad, h-pad, w-10, h-pad, pad, 10, pad, h-pad)
	fmt.Fprintf(&b, `<text x="%d" y="%d">median latency (ms), 0 to %.0f</text><text x="4" y="20">exact</text><text x="4" y="%d">0%%</text><text x="4" y="%d">100%%</text>`, pad, h-15, maxLat, h-pad, 20+14)
	for _, s := range scores {
		x := pad + s.Latency.P50/maxLat*float64(w-pad-30)
		y := float64(h-pad) - s.Exact*float64(h-pad-20)
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="6" fill="#1565c0"><title>%s: %s exact, p50 %.0f ms</title></circle><text x="%.1f" y="%.1f">%s</text>`,
			x, y, html.EscapeString(s.Name), pct(s.Exact), s.Latency.P50, x+8, y-8, html.EscapeString(s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}
