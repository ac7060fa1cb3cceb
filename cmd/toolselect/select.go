package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

func init() {
	register(command{
		name:    "select",
		summary: "ask the configured model which tool calls a task needs",
		run:     runSelect,
	})
}

// selectOutput is the one JSON object select prints.
type selectOutput struct {
	Calls    []selector.ToolCall `json:"calls"`
	Attempts []selector.Attempt  `json:"attempts"`
	Offered  []string            `json:"offered"`
	Error    *selector.ErrorInfo `json:"error"`
	// FeedbackError says why recording the selection in the feedback store
	// failed (the calls stand).
	FeedbackError string `json:"feedback_error,omitempty"`
}

// redactMessages applies redact to every message of the output: the
// attempts' failure messages and search words, the rejected calls' reasons,
// the error and the feedback error.
func (o *selectOutput) redactMessages(redact func(string) string) {
	for i := range o.Attempts {
		a := &o.Attempts[i]
		a.Message = redact(a.Message)
		a.UnansweredSearch = redact(a.UnansweredSearch)
		for j := range a.Rejected {
			a.Rejected[j].Message = redact(a.Rejected[j].Message)
		}
		for j := range a.Searches {
			a.Searches[j].Query = redact(a.Searches[j].Query)
		}
	}
	if o.Error != nil {
		o.Error.Message = redact(o.Error.Message)
	}
	o.FeedbackError = redact(o.FeedbackError)
}

// endpointHint is printed when no endpoint is configured.
var endpointHint = "no model endpoint configured: set " + strings.Join(settingEnv["base_url"], " (or ") +
	") to an OpenAI-compatible server, e.g. https://api.openai.com/v1, https://open.bigmodel.cn/api/paas/v4 (GLM), " +
	"http://localhost:11434/v1 (Ollama) or http://localhost:8000/v1 (vLLM), and the key in " +
	strings.Join(settingEnv["api_key"], " (or ") + ")"

func runSelect(env *cmdEnv, args []string) int {
	fs := newFlags(env, "select", "--catalog FILE --task TEXT [--subtask TEXT]... [--query TEXT] [--context FILE]")
	skipInvalid := fs.Bool("skip-invalid", true, skipInvalidUsage)
	catalog := fs.String("catalog", "", "tool catalog (any format the registry reads; \"-\" reads stdin)")
	task := fs.String("task", "", "what needs doing (required)")
	taskID := fs.String("task-id", "", "an identifier for the task, passed to the model")
	var subtasks, roles stringList
	fs.Var(&subtasks, "subtask", "a sub-task (repeatable, in order)")
	query := fs.String("query", "", "an optional free-text query")
	contextFile := fs.String("context", "", "a JSON object file shown to the model as context")
	fs.Var(&roles, "role", "a role the caller holds (repeatable); tools with roles are offered only to holders")
	allowUnsafe := fs.Bool("allow-unsafe", false, "offer tools marked safe: false")
	logLevel := fs.String("log-level", "off", "selector log records on stderr: off|debug|info|warn|error")
	fs.Bool("json", false, "print the one JSON object (the default when stdout is not a terminal; --json=false prints the summary anyway)")
	var pf pinFlags
	pf.register(fs)
	var offer offerK
	fs.Var(&offer, "k", "offer the model only the `N` tools ranked best for the task, in catalog order (0: every eligible tool; default: every eligible tool while their view fits "+envVar("offer_tokens")+" tokens, else the top "+envVar("top_k")+", with "+envVar("max_searches")+" search rounds)")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: toolselect select --catalog FILE --task TEXT [--subtask TEXT]... [--query TEXT] [--context FILE] [--k N]")
		fmt.Fprintln(w, "\nPrints {\"calls\":[...],\"attempts\":[...],\"offered\":[...],\"error\":null|{\"kind\",\"message\"}}")
		fmt.Fprintln(w, "(on a terminal: a summary; --json for the JSON).")
		fmt.Fprintln(w, "Exit status: 0 selection succeeded (even with no calls: the model's decision), 3 no calls otherwise")
		fmt.Fprintln(w, "(error.kind fail_closed, no_eligible_tools or no_ranked_tools), 2 usage, catalog or configuration error.")
		fmt.Fprintln(w, "The model and endpoint come from the environment:")
		for _, name := range settingNames {
			fmt.Fprintln(w, "  "+strings.Join(settingEnv[name], " / "))
		}
		fmt.Fprintln(w, "Providers and reasoning models: see docs/providers.md ("+envVar("provider")+", "+envVar("reasoning")+").")
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		return fail(env, "select", exitUsage, "unexpected argument %q (run \"toolselect select --help\")", fs.Arg(0))
	case strings.TrimSpace(*task) == "":
		return fail(env, "select", exitUsage, "--task is required")
	case *catalog == "-" && *contextFile == "-":
		return fail(env, "select", exitUsage, "--catalog and --context cannot both read stdin")
	}
	logger, err := cliLogger(env, *logLevel)
	if err != nil {
		return fail(env, "select", exitUsage, "%v", err)
	}
	cfg, err := selector.ConfigFromEnvMap(selectorEnviron(env))
	if err != nil {
		return fail(env, "select", exitUsage, "%s", redactKey(err.Error(), env))
	}
	for _, w := range cfg.EnvWarnings() {
		fmt.Fprintf(env.stderr, "toolselect select: warning: %s\n", w)
	}
	if cfg.BaseURL == "" && cfg.APIKey == "" {
		return fail(env, "select", exitUsage, "%s", endpointHint)
	}
	reg, code, ok := loadPinnedCatalog(env, "select", *catalog, !*skipInvalid, pf.file, pf.strict)
	if !ok {
		return code
	}
	var ctxMap map[string]any
	if *contextFile != "" {
		if ctxMap, err = readContext(env, *contextFile); err != nil {
			return fail(env, "select", exitUsage, "--context: %v", err)
		}
	}
	sel, code, ok := buildSelector(env, cfg, reg, offer, logger)
	if !ok {
		return code
	}
	req := selector.Request{
		Task:     selector.Task{ID: *taskID, Description: *task},
		Registry: reg, Query: *query, Context: ctxMap,
		Roles: roles, AllowUnsafe: *allowUnsafe,
	}
	for i, s := range subtasks {
		req.Task.SubTasks = append(req.Task.SubTasks, selector.SubTask{ID: fmt.Sprintf("%d", i+1), Description: s})
	}
	res, err := sel.Select(context.Background(), req)
	if errors.Is(err, selector.ErrBadRequest) {
		return fail(env, "select", exitUsage, "%s", redactKey(err.Error(), env))
	}
	return printSelection(env, res, err, env.humanOutput(fs))
}

// buildSelector makes the selector of `select`: the go-openai client, the
// feedback store, and the offer (the budget, or --k's prefilter).
func buildSelector(env *cmdEnv, cfg selector.Config, reg *registry.Registry, offer offerK, logger *slog.Logger) (*selector.ToolSelector, int, bool) {
	client, err := selector.NewOpenAIClient(&cfg, nil)
	if err != nil {
		return nil, fail(env, "select", exitUsage, "%s", redactKey(err.Error(), env)), false
	}
	rec, fb, code, ok := selectFeedback(env, cfg)
	if !ok {
		return nil, code, false
	}
	cfg.Logger, cfg.Recorder = logger, rec
	switch {
	case !offer.set:
		// The offer budget: every eligible tool while their view fits
		// OFFER_TOKENS, else the top TOP_K ranked, with search rounds.
		cfg.Ranker = &rank.Offering{Options: rank.Options{Feedback: fb}}
	case offer.n > 0:
		// Rank the eligible tools for the query (or the task and sub-tasks)
		// and offer the top k; calls to any other tool are rejected.
		cfg.Prefilter = rank.For(reg).Prefilter(&rank.Options{MaxCandidates: offer.n, Feedback: fb})
	}
	sel, err := selector.New(client, &cfg)
	if err != nil {
		return nil, fail(env, "select", exitUsage, "%s", redactKey(err.Error(), env)), false
	}
	return sel, 0, true
}

// printSelection writes the outcome (a summary on a terminal, else the one
// JSON object) and returns the exit status.
func printSelection(env *cmdEnv, res *selector.Result, err error, human bool) int {
	out := selectOutput{Calls: []selector.ToolCall{}, Attempts: []selector.Attempt{}, Offered: []string{}}
	if err != nil {
		out.Error = &selector.ErrorInfo{Kind: selector.ErrorKind(err), Message: err.Error()}
	}
	if res != nil {
		if res.Offered != nil {
			out.Offered = res.Offered
		}
		if res.Calls != nil {
			out.Calls = res.Calls
		}
		if res.Attempts != nil {
			out.Attempts = res.Attempts
		}
		out.FeedbackError = res.FeedbackError
	}
	// Belt and braces: the selector already redacts the key from every
	// message. Only messages are redacted here, never the calls or the names
	// offered: a placeholder key ("ollama") may be a word of valid arguments.
	out.redactMessages(func(s string) string { return redactKey(s, env) })
	if human {
		printSelect(env.stdout, out)
	} else {
		b, merr := json.Marshal(out)
		if merr != nil {
			return fail(env, "select", exitFailed, "encoding the result: %v", merr)
		}
		env.stdout.Write(append(b, '\n'))
	}
	if err != nil {
		return exitFailed
	}
	return exitOK
}

// offerK is select's --k: unset means the offer budget, 0 every eligible
// tool, N the top N ranked.
type offerK struct {
	n   int
	set bool
}

func (k *offerK) String() string {
	if k == nil || !k.set {
		return "auto"
	}
	return strconv.Itoa(k.n)
}

func (k *offerK) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > selector.MaxTopK {
		return fmt.Errorf("want a whole number from 0 (every eligible tool) to %d", selector.MaxTopK)
	}
	k.n, k.set = n, true
	return nil
}

// settingNames lists the selector's settings by JSON name, and settingEnv
// holds the variables each is read from (first set wins), as the
// selector's configuration schema publishes them.
var settingNames, settingEnv = func() ([]string, map[string][]string) {
	var s struct {
		Fields []struct {
			Name string
			Env  []string
		}
	}
	if err := json.Unmarshal(selector.ConfigSchema(), &s); err != nil {
		panic(err)
	}
	var names []string
	env := map[string][]string{}
	for _, f := range s.Fields {
		if len(f.Env) > 0 {
			names, env[f.Name] = append(names, f.Name), f.Env
		}
	}
	return names, env
}()

// envVar is the selector's own variable for the setting named (its JSON name).
func envVar(name string) string { return settingEnv[name][0] }

// selectorEnvVars are the variables the selector reads: every setting's.
var selectorEnvVars = func() []string {
	var out []string
	for _, name := range settingNames {
		out = append(out, settingEnv[name]...)
	}
	return out
}()

// selectorEnviron is what select's selector reads: every setting's
// variables, and every other variable with the selector's prefix, so that
// Config.EnvWarnings can name a misspelt one.
func selectorEnviron(env *cmdEnv) map[string]string {
	m := environMap(env, selectorEnvVars)
	if env.environ != nil {
		for _, kv := range env.environ() {
			if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, selector.EnvPrefix) && v != "" {
				m[k] = v
			}
		}
	}
	return m
}

// environMap reads names through env.getenv so tests control the environment.
func environMap(env *cmdEnv, names []string) map[string]string {
	m := make(map[string]string, len(names))
	for _, n := range names {
		if v := env.getenv(n); v != "" {
			m[n] = v
		}
	}
	return m
}

// apiKeys returns the configured API keys worth redacting (4 bytes or more).
func apiKeys(env *cmdEnv) []string {
	var keys []string
	for _, n := range settingEnv["api_key"] {
		if k := strings.TrimSpace(env.getenv(n)); len(k) >= 4 {
			keys = append(keys, k)
		}
	}
	return keys
}

// redactKey removes the configured API keys from s.
func redactKey(s string, env *cmdEnv) string {
	for _, k := range apiKeys(env) {
		s = strings.ReplaceAll(s, k, "[REDACTED]")
	}
	return s
}

// readContext reads a JSON object from a file ("-": stdin).
func readContext(env *cmdEnv, path string) (map[string]any, error) {
	var (
		b   []byte
		err error
	)
	if path == "-" {
		b, err = readAllLimited(env.stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%s is not a JSON object", path)
	}
	return m, nil
}

// cliLogger returns a text logger on stderr at level, or a discarding one for "off".
func cliLogger(env *cmdEnv, level string) (*slog.Logger, error) {
	var l slog.Level
	switch strings.ToLower(level) {
	case "off", "":
		return slog.New(slog.DiscardHandler), nil
	case "debug":
		l = slog.LevelDebug
	case "info":
		l = slog.LevelInfo
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		return nil, fmt.Errorf("--log-level %q: want off, debug, info, warn or error", level)
	}
	w := redactingWriter{w: env.stderr, secrets: apiKeys(env)}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
