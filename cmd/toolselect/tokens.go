package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

func init() {
	register(command{name: "tokens", summary: "token cost: full catalog vs top K vs the find_tool/call_tool meta-tools", run: runTokens})
}

func runTokens(env *cmdEnv, args []string) int {
	fs := newFlags(env, "tokens", "--catalog FILE [--k N] [--format F] [--encoding E] [\"query\"]")
	var f rankFlags
	f.register(fs, defaultK, rank.DefaultMinScore)
	format := fs.String("format", "openai", "provider format the tools are sent in: "+formatNames(", "))
	encoding := fs.String("encoding", rank.EncodingO200k, "token encoding: o200k_base or cl100k_base")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, code, ok := parseInterleaved(env, fs, args)
	if !ok {
		return code
	}
	if code, ok := f.checkK(env, "tokens"); !ok {
		return code
	}
	fmtv, err := registry.ParseFormat(*format)
	if err != nil {
		return fail(env, "tokens", exitUsage, "%v", err)
	}
	reg, code, ok := loadCatalog(env, "tokens", f.catalog, !f.skipInvalid)
	if !ok {
		return code
	}
	tc, err := rank.NewTokenCounter(*encoding)
	if err != nil {
		return fail(env, "tokens", exitUsage, "%v", err)
	}
	// The top K: ranked for the query when one is given, else the first K.
	selected := reg.Entries()
	query := strings.Join(pos, " ")
	if query != "" {
		sc, err := f.scorerFor(env)
		if err != nil {
			return fail(env, "tokens", exitUsage, "%v", err)
		}
		picks, err := rank.For(reg).Rank(context.Background(), query, f.options(sc))
		if err != nil {
			return fail(env, "tokens", exitFailed, "%v", err)
		}
		selected = nil
		for _, p := range picks {
			selected = append(selected, p.Entry)
		}
	} else if len(selected) > f.k {
		selected = selected[:f.k]
	}
	rep, err := countReport(tc, reg.Entries(), selected, fmtv)
	if err != nil {
		return fail(env, "tokens", exitFailed, "%v", err)
	}
	if *asJSON {
		b, _ := json.Marshal(struct {
			tokenReport
			SavingsTopK float64 `json:"savings_topk_pct"`
			SavingsMeta float64 `json:"savings_meta_pct"`
		}{rep, rep.Savings(rep.TopK), rep.Savings(rep.MetaTools)})
		fmt.Fprintln(env.stdout, string(b))
		return exitOK
	}
	what := fmt.Sprintf("top %d (first %d tools)", f.k, len(selected))
	if query != "" {
		what = fmt.Sprintf("top %d for the query (%d tools)", f.k, len(selected))
	}
	fmt.Fprintf(env.stdout, "tokens (%s, %s format)\n", rep.Encoding, rep.Format)
	fmt.Fprintf(env.stdout, "  %-36s %8d\n", fmt.Sprintf("full catalog (%d tools)", rep.Tools), rep.Catalog)
	fmt.Fprintf(env.stdout, "  %-36s %8d   saves %5.1f%%\n", what, rep.TopK, rep.Savings(rep.TopK))
	fmt.Fprintf(env.stdout, "  %-36s %8d   saves %5.1f%%\n", "meta-tools (find_tool + call_tool)", rep.MetaTools, rep.Savings(rep.MetaTools))
	return exitOK
}

// tokenReport compares what a request would cost with the full catalog, with
// the selected tools, and with only the two meta-tools.
type tokenReport struct {
	Encoding  string          `json:"encoding"`
	Format    registry.Format `json:"format"`
	Tools     int             `json:"tools"`
	Selected  int             `json:"selected"`
	Catalog   int             `json:"catalog_tokens"`
	TopK      int             `json:"selected_tokens"`
	MetaTools int             `json:"meta_tool_tokens"`
}

// Savings returns the percentage of catalog tokens saved by sending n tokens.
func (r tokenReport) Savings(n int) float64 {
	if r.Catalog == 0 {
		return 0
	}
	return 100 * float64(r.Catalog-n) / float64(r.Catalog)
}

// countReport counts the full catalog, the selection and the meta-tools in format f.
func countReport(tc *rank.TokenCounter, catalog, selected []*registry.Entry, f registry.Format) (tokenReport, error) {
	r := tokenReport{Encoding: tc.Encoding(), Format: f, Tools: len(catalog), Selected: len(selected)}
	var err error
	if r.Catalog, err = tc.CountTools(catalog, f); err != nil {
		return r, err
	}
	if r.TopK, err = tc.CountTools(selected, f); err != nil {
		return r, err
	}
	meta, err := rank.MetaToolEntries()
	if err != nil {
		return r, err
	}
	r.MetaTools, err = tc.CountTools(meta, f)
	return r, err
}

// formatNames lists the provider formats, joined by sep, for flag help.
func formatNames(sep string) string {
	s := make([]string, len(registry.Formats()))
	for i, f := range registry.Formats() {
		s[i] = string(f)
	}
	return strings.Join(s, sep)
}
