package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/rank/embedcache"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

func init() {
	register(command{name: "rank", summary: "rank a catalog's tools for a query (or a queries file)", run: runRank})
}

// defaultK is the default number of results of rank, tokens and eval
// (--k): the selector's default top_k (selector.DefaultTopK, 10), what
// select offers when the eligible tools do not fit the offer budget, so
// `rank` shows what select would offer. eval ranks at least 10 whatever --k,
// for R@10 and NDCG@10.
const defaultK = selector.DefaultTopK

// rankFlags are the flags rank, eval and tokens share.
type rankFlags struct {
	catalog     string
	scorer      string
	k           int
	minScore    float64
	skipInvalid bool
	allowUnsafe bool
	roles       stringList
	caps        stringList
	timeout     time.Duration
	noPrereqs   bool
	noNameWords bool
	noNS        bool
	noRelated   bool
	embModel    string
	embCache    string
	redisURL    string
}

func (f *rankFlags) register(fs *flag.FlagSet, defaultK int, defaultMin float64) {
	fs.StringVar(&f.catalog, "catalog", "", "catalog file (canonical JSON/JSONL, OpenAI, Anthropic or MCP tools)")
	fs.StringVar(&f.scorer, "scorer", "bm25", "bm25, keyword, embedding or hybrid")
	fs.IntVar(&f.k, "k", defaultK, "number of tools to return")
	fs.Float64Var(&f.minScore, "min-score", defaultMin, "drop tools scoring below this (0..1; negative keeps all)")
	fs.BoolVar(&f.skipInvalid, "skip-invalid", true, skipInvalidUsage)
	fs.BoolVar(&f.allowUnsafe, "allow-unsafe", false, "rank tools marked safe=false too")
	fs.Var(&f.roles, "role", "caller role (repeatable)")
	fs.Var(&f.caps, "capability", "required tool capability (repeatable)")
	fs.DurationVar(&f.timeout, "timeout", 0, "scoring time limit (0: none)")
	fs.BoolVar(&f.noPrereqs, "no-prerequisites", false, "do not follow top picks with the sibling tools that yield their required parameters")
	fs.BoolVar(&f.noNameWords, "no-name-words", false, "do not join query words the catalog knows as one word, nor split concatenated words")
	fs.BoolVar(&f.noNS, "no-namespace", false, "do not add a share of how well a tool's server (server__tool) matches")
	fs.BoolVar(&f.noRelated, "no-related-words", false, "do not bring WordNet relatives of query words that no tool contains")
	fs.StringVar(&f.embModel, "embedding-model", "text-embedding-3-small", "embedding model (embedding and hybrid scorers)")
	fs.StringVar(&f.embCache, "embedding-cache", "", "vector cache directory (default: the user cache directory)")
	fs.StringVar(&f.redisURL, "redis", "", "cache vectors in Redis at this URL (redis://host:port/db) instead of files")
}

// checkK refuses a --k below 1 (rank used to take its default for one, and
// tokens to panic on a negative one).
func (f *rankFlags) checkK(env *cmdEnv, name string) (int, bool) {
	if f.k < 1 {
		return fail(env, name, exitUsage, "--k must be 1 or more, got %d", f.k), false
	}
	return 0, true
}

// parseInterleaved parses flags that may come before or after positional
// arguments and returns the positionals.
func parseInterleaved(env *cmdEnv, fs *flag.FlagSet, args []string) ([]string, int, bool) {
	var pos []string
	for {
		if code, ok := parseFlags(env, fs, args); !ok {
			return nil, code, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, true
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), 0, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func (f *rankFlags) scorerFor(env *cmdEnv) (rank.Scorer, error) {
	switch f.scorer {
	case "", "bm25":
		return &rank.BM25{}, nil
	case "keyword":
		return rank.Keyword{}, nil
	case "embedding", "hybrid":
		base := firstNonEmpty(env.getenv("TOOLSELECT_EMBEDDING_BASE_URL"), env.getenv("OPENAI_BASE_URL"))
		key := firstNonEmpty(env.getenv("TOOLSELECT_EMBEDDING_API_KEY"), env.getenv("OPENAI_API_KEY"))
		if base == "" && key == "" {
			return nil, fmt.Errorf("the %s scorer needs an embeddings endpoint: set TOOLSELECT_EMBEDDING_BASE_URL (or OPENAI_BASE_URL) and an API key if it needs one", f.scorer)
		}
		emb := &rank.Embedding{Embedder: &rank.OpenAIEmbedder{BaseURL: base, APIKey: key, Name: f.embModel}}
		if f.redisURL != "" {
			opt, err := redis.ParseURL(f.redisURL)
			if err != nil {
				return nil, fmt.Errorf("--redis: %v", err)
			}
			emb.Cache = &embedcache.Redis{Client: redis.NewClient(opt)}
		} else {
			emb.Cache = &embedcache.File{Dir: f.embCache}
		}
		if f.scorer == "embedding" {
			return emb, nil
		}
		return &rank.Hybrid{Embedding: emb}, nil
	}
	return nil, fmt.Errorf("unknown scorer %q (want bm25, keyword, embedding or hybrid)", f.scorer)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func (f *rankFlags) options(sc rank.Scorer) *rank.Options {
	return &rank.Options{
		MaxCandidates: f.k, MinScore: f.minScore, AllowUnsafe: f.allowUnsafe,
		Roles: f.roles, Capabilities: f.caps, Scorer: sc, Timeout: f.timeout,
		NoPrerequisites: f.noPrereqs, NoNameWords: f.noNameWords, NoNamespace: f.noNS,
		NoRelatedWords: f.noRelated,
	}
}

func runRank(env *cmdEnv, args []string) int {
	fs := newFlags(env, "rank", "--catalog FILE [--feedback FILE] [flags] \"query\" | --catalog FILE --queries FILE [--json]")
	var f rankFlags
	f.register(fs, defaultK, rank.DefaultMinScore)
	queries := fs.String("queries", "", "rank every query of a queries.jsonl file ({\"id\",\"query\",...} per line)")
	asJSON := fs.Bool("json", false, "print JSON: one line per query {\"id\",\"tools\"}, or the picks")
	debug := fs.Bool("debug", false, "include matched terms and score components (with --json)")
	var fbf feedbackFlag
	fbf.register(fs)
	var pf pinFlags
	pf.register(fs)
	pos, code, ok := parseInterleaved(env, fs, args)
	if !ok {
		return code
	}
	if code, ok := f.checkK(env, "rank"); !ok {
		return code
	}
	if (*queries == "") == (len(pos) == 0) {
		return fail(env, "rank", exitUsage, "give either a query or --queries FILE (run \"toolselect rank --help\")")
	}
	reg, code, ok := loadPinnedCatalog(env, "rank", f.catalog, !f.skipInvalid, pf.file, pf.strict)
	if !ok {
		return code
	}
	sc, err := f.scorerFor(env)
	if err != nil {
		return fail(env, "rank", exitUsage, "%v", err)
	}
	opts := f.options(sc)
	opts.Debug = *debug
	r := rank.For(reg)
	if opts.Feedback, code, ok = fbf.loadWhile(env, "rank", reg, func() error { return r.Prepare(opts) }); !ok {
		return code
	}
	if *queries != "" {
		return rankQueries(env, r, *queries, opts, f.scorer, *asJSON)
	}
	return rankQuery(env, r, strings.Join(pos, " "), opts, *asJSON)
}

// rankQueries ranks every query of a queries.jsonl file and prints one line
// per query, in the file's order: "ID\ttool tool..." or {"id","tools"}.
func rankQueries(env *cmdEnv, r *rank.Ranker, path string, opts *rank.Options, scorer string, asJSON bool) int {
	ctx := context.Background()
	qs, err := rank.LoadQueries(path)
	if err != nil {
		return fail(env, "rank", exitUsage, "%v", err)
	}
	// Local scorers answer the queries over the cores (the ranker is
	// shared by concurrent queries); the output keeps the file's order.
	workers := 1
	if scorer == "" || scorer == "bm25" || scorer == "keyword" {
		workers = runtime.GOMAXPROCS(0)
	}
	// Only the names are printed: the reasons would be thrown away.
	batch := *opts
	batch.NoReasons = true
	answers := rankAll(ctx, r, qs, &batch, workers)
	// One buffered writer for all the answers (a write per query costs a
	// system call each on thousands of queries); what was answered
	// before a failing query is still printed.
	out := bufio.NewWriterSize(env.stdout, 64<<10)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for i, q := range qs {
		picks, err := answers[i].picks, answers[i].err
		if err != nil {
			out.Flush()
			return fail(env, "rank", exitFailed, "query %s: %v", q.ID, err)
		}
		if asJSON {
			enc.Encode(struct {
				ID    string   `json:"id"`
				Tools []string `json:"tools"`
			}{q.ID, nonNil(pickNames(picks))})
		} else {
			fmt.Fprintf(out, "%s\t%s\n", q.ID, strings.Join(pickNames(picks), " "))
		}
	}
	return exitOK
}

// rankQuery ranks one query and prints the picks with their scores and
// reasons (or as JSON), then what the filters hid.
func rankQuery(env *cmdEnv, r *rank.Ranker, query string, opts *rank.Options, asJSON bool) int {
	ctx := context.Background()
	picks, err := r.Rank(ctx, query, opts)
	if err != nil {
		return fail(env, "rank", exitFailed, "%v", err)
	}
	hidden, err := hiddenNotes(ctx, r, query, opts, picks)
	if err != nil {
		return fail(env, "rank", exitFailed, "%v", err)
	}
	if asJSON {
		if picks == nil {
			picks = []rank.Pick{}
		}
		b, _ := json.MarshalIndent(picks, "", "  ")
		fmt.Fprintln(env.stdout, string(b))
		for _, n := range hidden { // the JSON keeps its shape; people still hear of it
			fmt.Fprintf(env.stderr, "toolselect rank: %s\n", n)
		}
		return exitOK
	}
	if len(picks) == 0 {
		fmt.Fprintln(env.stdout, "no tool scored above the minimum")
	}
	for i, p := range picks {
		fmt.Fprintf(env.stdout, "%2d. %-40s %.3f  %s\n", i+1, p.Tool, p.Score, p.Reason)
	}
	for _, n := range hidden {
		fmt.Fprintln(env.stdout, n)
	}
	return exitOK
}

// hiddenNotes words rank's Ranker.Hidden for a person: one line per filter
// (unsafe, roles, capabilities) with the flag that shows what it hid: "2
// unsafe tools hidden; --allow-unsafe shows them".
func hiddenNotes(ctx context.Context, r *rank.Ranker, query string, opts *rank.Options, picks []rank.Pick) ([]string, error) {
	hidden, err := r.Hidden(ctx, query, opts, picks)
	if err != nil {
		return nil, err
	}
	count := map[registry.Rule]int{}
	var roles []string
	for _, p := range hidden {
		count[p.Hidden]++
		if p.Hidden == registry.RuleRole {
			for _, role := range p.Entry.Def().Roles {
				if !slices.Contains(roles, role) {
					roles = append(roles, role)
				}
			}
		}
	}
	var notes []string
	if n := count[registry.RuleUnsafe]; n > 0 {
		notes = append(notes, fmt.Sprintf("%d unsafe %s hidden; %s shows %s", n, plural(n, "tool", "tools"), cliHints[registry.RuleUnsafe], plural(n, "it", "them")))
	}
	if n := count[registry.RuleRole]; n > 0 {
		flags := make([]string, len(roles))
		for i, role := range roles {
			flags[i] = cliHints[registry.RuleRole] + " " + role
		}
		notes = append(notes, fmt.Sprintf("%d %s for other roles hidden; %s shows %s", n, plural(n, "tool", "tools"), strings.Join(flags, " or "), plural(n, "it", "them")))
	}
	if n := count[registry.RuleCapability]; n > 0 {
		notes = append(notes, fmt.Sprintf("%d %s without the --capability asked for hidden; %s shows %s", n, plural(n, "tool", "tools"), cliHints[registry.RuleCapability], plural(n, "it", "them")))
	}
	return notes, nil
}

// cliHints word, in the command's own flags, what shows a tool a rule hid
// (rank hides by the caller's eligibility: unsafe, role, capability). One
// entry per rule: "" for the rules met only when a call is run or offered,
// which no command of the CLI does.
var cliHints = map[registry.Rule]string{
	registry.RuleUnknownTool:      "",
	registry.RuleInvalidArgs:      "",
	registry.RuleNoHandler:        "",
	registry.RuleUnsafe:           "--allow-unsafe",
	registry.RuleRole:             "--role",
	registry.RuleCapability:       "leaving out --capability",
	registry.RuleDenied:           "",
	registry.RuleNoSchemaReadOnly: "",
	registry.RuleApprovalRequired: "",
	registry.RuleApprovalDenied:   "",
	registry.RuleNotInOffer:       "",
	registry.RuleNoSchema:         "",
	registry.RuleNoSchemaMode:     "",
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

type answer struct {
	picks []rank.Pick
	err   error
}

// rankAll ranks every query on up to workers goroutines; answers[i] is
// query i's.
func rankAll(ctx context.Context, r *rank.Ranker, qs []rank.EvalQuery, opts *rank.Options, workers int) []answer {
	answers := make([]answer, len(qs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(workers, len(qs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(qs); i = int(next.Add(1) - 1) {
				answers[i].picks, answers[i].err = r.Rank(ctx, qs[i].Query, opts)
			}
		}()
	}
	wg.Wait()
	return answers
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// pickNames returns the tool names of picks, in rank order.
func pickNames(picks []rank.Pick) []string {
	names := make([]string, len(picks))
	for i, p := range picks {
		names[i] = p.Tool
	}
	return names
}
