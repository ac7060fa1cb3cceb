package capi

import (
	"context"
	"time"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

// rankRequest is the JSON RegistryRank takes: the task and the rank.Options
// that `toolselect rank` exposes as flags, by the same names in snake case
// (--k is "k", --min-score "min_score", --no-prerequisites
// "no_prerequisites", ...). Absent fields take the CLI's defaults.
type rankRequest struct {
	Task         string   `json:"task"`
	K            *int     `json:"k"`
	MinScore     *float64 `json:"min_score"`
	Scorer       string   `json:"scorer"`
	AllowUnsafe  bool     `json:"allow_unsafe"`
	Roles        []string `json:"roles"`
	Capabilities []string `json:"capabilities"`
	// Rules are per-tool allow, ask and deny patterns (registry.ToolRules),
	// read first, as by every other front door: a tool a deny rule names is
	// hidden, with the rule.
	Rules           registry.ToolRules `json:"rules"`
	TimeoutS        float64            `json:"timeout_s"`
	NoPrerequisites bool               `json:"no_prerequisites"`
	NoNameWords     bool               `json:"no_name_words"`
	NoNamespace     bool               `json:"no_namespace"`
	NoRelatedWords  bool               `json:"no_related_words"`
	Debug           bool               `json:"debug"`
}

// MaxRankK bounds a request's k.
const MaxRankK = 1000

// rankResult is RegistryRank's body: the picks, best first, and the tools
// the caller's filters hid that would otherwise have been among them, each
// with "hidden" naming the rule (unsafe, role, capability).
type rankResult struct {
	Picks  []rank.Pick `json:"picks"`
	Hidden []rank.Pick `json:"hidden"`
}

// options is the request's rank.Options, or an ErrArgument result naming
// the field that is out of range.
func (q *rankRequest) options() (*rank.Options, *Result) {
	fail := func(format string, args ...any) (*rank.Options, *Result) {
		r := Fail(ErrArgument, "request_json: "+format, args...)
		return nil, &r
	}
	o := &rank.Options{
		MaxCandidates: selector.DefaultTopK, // the CLI's --k default: what select would offer MinScore: rank.DefaultMinScore,
		AllowUnsafe:   q.AllowUnsafe, Roles: q.Roles, Capabilities: q.Capabilities,
		NoPrerequisites: q.NoPrerequisites, NoNameWords: q.NoNameWords,
		NoNamespace: q.NoNamespace, NoRelatedWords: q.NoRelatedWords, Debug: q.Debug,
		Caller: registry.Eligibility{Rules: q.Rules},
	}
	if err := q.Rules.Validate(); err != nil {
		return fail("rules.%s", err)
	}
	if q.K != nil {
		if *q.K < 1 || *q.K > MaxRankK {
			return fail("k must be from 1 to %d, got %d", MaxRankK, *q.K)
		}
		o.MaxCandidates = *q.K
	}
	if q.MinScore != nil {
		if *q.MinScore > 1 {
			return fail("min_score must be at most 1 (negative keeps every tool scoring above zero), got %g", *q.MinScore)
		}
		o.MinScore = *q.MinScore
	}
	if q.TimeoutS < 0 {
		return fail("timeout_s must be 0 (no limit) or more, got %g", q.TimeoutS)
	}
	o.Timeout = time.Duration(q.TimeoutS * float64(time.Second))
	switch q.Scorer {
	case "", "bm25":
		o.Scorer = &rank.BM25{}
	case "keyword":
		o.Scorer = rank.Keyword{}
	case "embedding", "hybrid":
		return fail("the %s scorer needs an embeddings endpoint, which the C ABI does not configure: use bm25 or keyword here, or rank.Embedding from Go (toolselect rank --scorer %s reads TOOLSELECT_EMBEDDING_BASE_URL)", q.Scorer, q.Scorer)
	default:
		return fail("unknown scorer %q (want bm25 or keyword)", q.Scorer)
	}
	return o, nil
}

// RegistryRank ranks the registry's tools for a task, as `toolselect rank`
// does: {"picks": [...], "hidden": [...]}, each pick {"tool", "score",
// "reason", "provenance"} and each hidden tool the same with "hidden": the
// rule that kept it out. cancel is 0 or a cancel token handle.
func RegistryRank(h uint64, req []byte, present bool, cancel uint64) Result {
	reg, r := getRegistry(h)
	if r != nil {
		return *r
	}
	var q rankRequest
	if r := Strict("request_json", req, present, &q); r != nil {
		return *r
	}
	if q.Task == "" {
		return Fail(ErrArgument, "request_json: task is empty (give the words to rank the tools for)")
	}
	opts, r := q.options()
	if r != nil {
		return *r
	}
	ctx := context.Background()
	if cancel != 0 {
		v, r := table.get(cancel, KindCancel)
		if r != nil {
			return *r
		}
		ctx = v.(*token).ctx
	}
	if ctx.Err() != nil { // scoring an in-memory index may not look at ctx
		return Fail(ErrCanceled, "the ranking was cancelled")
	}
	rk := rank.For(reg)
	picks, err := rk.Rank(ctx, q.Task, opts)
	if err == nil && ctx.Err() == nil {
		var hidden []rank.Pick
		hidden, err = rk.Hidden(ctx, q.Task, opts, picks)
		if err == nil {
			return Ok(rankResult{Picks: nonNilPicks(picks), Hidden: nonNilPicks(hidden)})
		}
	}
	if ctx.Err() != nil {
		return Fail(ErrCanceled, "the ranking was cancelled")
	}
	return Fail(ErrArgument, "rank: %v", err)
}

func nonNilPicks(p []rank.Pick) []rank.Pick {
	if p == nil {
		return []rank.Pick{}
	}
	return p
}
