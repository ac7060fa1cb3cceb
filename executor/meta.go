package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// The meta-tools let a model search a large catalog itself instead of being
// sent all of it: find_tool(query, limit) ranks the tools this executor would
// run, call_tool(name, arguments) validates and runs one. Their definitions
// are rank.MetaToolEntries (one text for the executor, the
// MCP proxy and token accounting); registry.MarshalView writes them in any
// provider format (both names are valid everywhere, so none is mapped). Their names are rank.FindToolName and rank.CallToolName, and
// find_tool's limit defaults to rank.DefaultFindLimit, at most
// rank.MaxFindLimit.

// FoundTool is one find_tool result.
type FoundTool struct {
	// Name is the canonical tool name, the one to pass to call_tool.
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the tool's JSON Schema, verbatim ({"type":"object"} for a
	// schema-less tool).
	Parameters json.RawMessage `json:"parameters"`
	// Score is the ranking score, 0..1, rounded to three decimals. A
	// prerequisite scores below the tool that needs it.
	Score float64 `json:"score"`
	// PrerequisiteOf, when set, marks a tool found not for the query but
	// because the tool it names, listed just before, requires a parameter
	// this one yields (a geocoder for a tool that takes coordinates); Reason
	// says which. Prerequisites come on top of the limit: they never push a
	// tool found for the query out.
	PrerequisiteOf string `json:"prerequisiteOf,omitempty"`
	Reason         string `json:"reason,omitempty"`
}

// MetaError is what a meta-tool hands back to the model, as the result's
// content, when the call did not run: what went wrong and what to do next.
type MetaError struct {
	Error   string  `json:"error"`
	Tool    string  `json:"tool,omitempty"`
	Outcome Outcome `json:"outcome"`
	// Violations lists every broken rule of invalid arguments.
	Violations []registry.Violation `json:"violations,omitempty"`
	// Parameters is the schema the arguments must satisfy (invalid arguments only).
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Hint says how to recover.
	Hint string `json:"hint,omitempty"`
	// DidYouMean lists, for an unknown tool, the findable tools the name
	// most likely meant: the same name after another namespace prefix, then
	// the nearest names, then the ranking of the name's words.
	DidYouMean []string `json:"didYouMean,omitempty"`
}

// isMetaTool reports whether name is find_tool or call_tool.
func isMetaTool(name string) bool { return name == rank.FindToolName || name == rank.CallToolName }

// FindTool ranks the executor's registry for query and returns at most limit
// tools (limit <= 0 means rank.DefaultFindLimit; at most rank.MaxFindLimit), best first,
// each of the first three followed by its prerequisites ([FoundTool.PrerequisiteOf]),
// which come on top of limit.
// Only tools this executor would run are considered: bound to a handler or
// constructor and allowed by its policy (unsafe tools only with
// [Options.AllowUnsafe], role-restricted tools only for [Options.Roles],
// schema-less tools only in a mode that can run). Ranking follows
// [Options.FindTool] (rank's defaults otherwise: bm25, min score 0.05), so fewer
// than limit tools, or none, may come back.
func (e *Executor) FindTool(ctx context.Context, query string, limit int) ([]FoundTool, error) {
	if limit <= 0 {
		limit = rank.DefaultFindLimit
	}
	if limit > rank.MaxFindLimit {
		limit = rank.MaxFindLimit
	}
	o := e.findOptions(limit)
	picks, err := rank.For(e.reg).Rank(ctx, query, o)
	if err != nil {
		return nil, err
	}
	out := make([]FoundTool, 0, limit)
	found := 0 // tools found for the query, prerequisites not counted
	for _, p := range picks {
		prereq := p.Provenance.Source == rank.SourcePrerequisite
		if p.Entry == nil || (!prereq && found == limit) {
			continue
		}
		t := p.Entry.Def()
		params := json.RawMessage(`{"type":"object"}`)
		if t.HasSchema() {
			params = append(json.RawMessage(nil), t.Parameters...)
		}
		score := math.Round(min(max(p.Score, 0), 1)*1000) / 1000
		f := FoundTool{Name: t.Name, Description: t.Description, Parameters: params, Score: score}
		if prereq {
			f.PrerequisiteOf, f.Reason = p.Provenance.RelatedTo, p.Reason
		} else {
			found++
		}
		out = append(out, f)
	}
	return out, nil
}

// findOptions are the ranking options of find_tool and of call_tool's
// suggestions: [Options.FindTool], this executor's policy, and a filter that
// leaves out every tool it would refuse to run.
func (e *Executor) findOptions(limit int) *rank.Options {
	var o rank.Options
	if e.opts.FindTool != nil {
		o = *e.opts.FindTool
	}
	o.Caller, o.AllowUnsafe, o.Roles, o.MaxCandidates = registry.Eligibility{}, e.opts.AllowUnsafe, e.opts.Roles, limit
	o.PrerequisitesBeyond = true
	hidden := e.hiddenTools()
	filter := o.Filter
	o.Filter = func(en *registry.Entry) bool {
		_, no := hidden[en.Name()]
		return !no && (filter == nil || filter(en))
	}
	return &o
}

// CallTool validates arguments against the named tool (canonical or
// provider-mapped name) and runs it: Hydrate, then Run, audited like any call.
// arguments is a JSON object, or a JSON string holding one.
//
// When the call did not run, err is the *CallError (as from Call) and the
// Result carries, for the model, a MetaError as its Error text: the
// violations of invalid arguments together with the schema to satisfy, or why
// the tool is unknown or refused. [Result.Content] is therefore always the
// text to hand back to the model.
func (e *Executor) CallTool(ctx context.Context, name string, arguments json.RawMessage) (Result, error) {
	return e.callTool(ctx, "", name, arguments)
}

func (e *Executor) callTool(ctx context.Context, id, name string, arguments json.RawMessage) (Result, error) {
	if isMetaTool(name) {
		ce := e.invalid(&Call{ID: id, Tool: name}, name,
			fmt.Errorf("%w %q: call_tool runs catalog tools, not meta-tools", registry.ErrUnknownTool, name))
		return e.metaFailure(id, name, ce), ce
	}
	res, err := e.Call(ctx, Call{ID: id, Tool: name, Args: arguments})
	var ce *CallError
	if errors.As(err, &ce) {
		out := e.metaFailure(id, name, ce)
		if errors.Is(ce, registry.ErrUnknownTool) {
			out.Error = e.suggest(ctx, ce, out.Error)
		}
		return out, err
	}
	return res, err
}

// suggestions is how many tools an unknown tool's MetaError suggests.
const suggestions = 3

// suggest adds to an unknown tool's MetaError the findable tools the name
// most likely meant (rank's Ranker.Suggest: the same name after another
// upstream prefix, then the nearest names, then the ranking of its words).
func (e *Executor) suggest(ctx context.Context, ce *CallError, text string) string {
	found, err := rank.For(e.reg).Suggest(ctx, ce.Tool, suggestions, e.findOptions(suggestions))
	if err != nil || len(found) == 0 {
		return text
	}
	var me MetaError
	if json.Unmarshal([]byte(text), &me) != nil {
		return text
	}
	me.DidYouMean = found
	return metaErrorText(me)
}

// HandleMeta handles a model's call of find_tool or call_tool. handled is
// false (and nothing happens) for any other tool: run those with Call. A
// catalog tool of the same name as a meta-tool is shadowed here.
//
// find_tool returns a Result whose Value is the []FoundTool; call_tool
// returns what CallTool returns. Invalid meta-tool arguments (no query, a
// limit out of range, no name) are an invalid *CallError whose Result
// carries the MetaError, like call_tool's. In every case [Result.Content] is
// the text to give the model; err says whether a tool ran.
//
// find_tool runs no tool and writes no audit record; call_tool's inner call
// is audited under the name of the tool it runs.
func (e *Executor) HandleMeta(ctx context.Context, c Call) (Result, bool, error) {
	if !isMetaTool(c.Tool) {
		return Result{}, false, nil
	}
	entry, err := metaEntry(c.Tool)
	if err != nil {
		return Result{ID: c.ID, Tool: c.Tool}, true, err
	}
	args := normalizeArgs(c.Args)
	if c.Tool == rank.CallToolName {
		args = unquoteArguments(args)
	}
	if err := entry.ValidateArgs(args); err != nil {
		ce := e.invalid(&c, c.Tool, err)
		return e.metaArgsFailure(c, entry, ce, "fix the arguments of "+c.Tool+" and call it again"), true, ce
	}
	switch c.Tool {
	case rank.FindToolName:
		var a struct {
			Query string `json:"query"`
			Limit int    `json:"limit"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			ce := e.invalid(&c, c.Tool, err)
			return e.metaFailure(c.ID, c.Tool, ce), true, ce
		}
		if strings.TrimSpace(a.Query) == "" {
			// An empty query ranks nothing: say so rather than return no tools.
			ce := e.invalid(&c, c.Tool, &registry.ValidationError{Tool: c.Tool, Violations: []registry.Violation{
				{Pointer: "/query", Rule: "minLength", Message: "the query is empty: say in a few words what the tool should do"}}})
			return e.metaArgsFailure(c, entry, ce, "say in a few words what the tool should do as the query and call find_tool again"), true, ce
		}
		found, err := e.FindTool(ctx, a.Query, a.Limit)
		if err != nil {
			return Result{ID: c.ID, Tool: c.Tool, IsError: true, Outcome: OutcomeToolError, Error: err.Error()}, true, nil
		}
		return Result{ID: c.ID, Tool: c.Tool, Value: found, Outcome: OutcomeOK}, true, nil
	default:
		var a struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			ce := e.invalid(&c, c.Tool, err)
			return e.metaFailure(c.ID, c.Tool, ce), true, ce
		}
		res, err := e.callTool(ctx, c.ID, a.Name, a.Arguments)
		return res, true, err
	}
}

// metaArgsFailure renders invalid arguments of a meta-tool itself: the
// violations together with the meta-tool's own parameters schema, as for
// any tool's invalid arguments.
func (e *Executor) metaArgsFailure(c Call, entry *registry.Entry, ce *CallError, hint string) Result {
	res := e.metaFailure(c.ID, c.Tool, ce)
	res.Error = metaErrorText(MetaError{Error: ce.Error(), Tool: c.Tool, Outcome: OutcomeInvalid,
		Violations: ce.Violations, Parameters: entry.Def().Parameters, Hint: hint})
	return res
}

// metaFailure renders a call that did not run as a Result for the model.
func (e *Executor) metaFailure(id, name string, ce *CallError) Result {
	me := MetaError{Error: ce.Error(), Tool: ce.Tool, Outcome: ce.Outcome, Violations: ce.Violations}
	switch {
	case ce.Rule == registry.RuleUnknownTool:
		me.Hint = "no tool has this name; use find_tool to search the catalog and pass a name exactly as it returns it"
	case ce.Rule == registry.RuleInvalidArgs:
		if entry, ok := e.reg.Lookup(ce.Tool); ok {
			if t := entry.Def(); t.HasSchema() {
				me.Parameters = append(json.RawMessage(nil), t.Parameters...)
			}
		}
		me.Hint = "fix the arguments so they satisfy the parameters schema and call again"
	case ce.Outcome == OutcomeRefused:
		me.Hint = "this tool may not be run here; choose another tool"
	}
	tool := ce.Tool
	if tool == "" {
		tool = name
	}
	return Result{ID: id, Tool: tool, IsError: true, Outcome: ce.Outcome, Error: metaErrorText(me)}
}

func metaErrorText(me MetaError) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(me); err != nil {
		return me.Error
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n"))
}

// metaEntry returns the registry entry of a meta-tool, to validate its arguments.
func metaEntry(name string) (*registry.Entry, error) {
	entries, err := rank.MetaToolEntries()
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Name() == name {
			return e, nil
		}
	}
	return nil, fmt.Errorf("no meta-tool %q", name)
}

// unquoteArguments accepts call_tool's "arguments" given as a JSON string
// holding an object (a common model habit) by decoding it in place.
func unquoteArguments(args json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return args
	}
	raw := bytes.TrimSpace(m["arguments"])
	if len(raw) == 0 || raw[0] != '"' {
		return args
	}
	inner := normalizeArgs(raw)
	if t := bytes.TrimSpace(inner); len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return args
	}
	m["arguments"] = inner
	b, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return b
}

// Allowed reports whether this executor would run the named tool (canonical
// or provider-mapped name), before looking at arguments: nil when the tool is
// registered, bound to a handler or constructor and allowed by the static
// policy (unsafe, roles, no-schema mode); otherwise the *CallError a call
// would get. find_tool returns exactly the tools for which Allowed is nil.
func (e *Executor) Allowed(name string) error {
	entry, ok := e.reg.Lookup(name)
	if !ok {
		return e.invalid(&Call{Tool: name}, name, fmt.Errorf("%w %q", registry.ErrUnknownTool, name))
	}
	if err := e.refusal(entry, e.binding(entry.Name()) != nil); err != nil {
		return e.refused(&Call{Tool: entry.Name()}, entry.Name(), err)
	}
	return nil
}

// refusal is why this executor would not run a registered tool before
// looking at arguments (nil: it would): no binding, or the static policy.
// Allowed and find_tool's hidden set both ask it.
func (e *Executor) refusal(entry *registry.Entry, bound bool) error {
	if !bound {
		return fmt.Errorf("%w %q", ErrNoHandler, entry.Name())
	}
	_, err := e.checkStatic(entry)
	return err
}

// hiddenCache remembers which registry tools the executor would refuse, per
// registry generation and binding generation.
type hiddenCache struct {
	mu       sync.Mutex
	valid    bool
	gen, bgn uint64
	names    map[string]struct{}
}

// hiddenTools returns the canonical names of registered tools this executor
// would not run: no binding, or refused by the static policy.
func (e *Executor) hiddenTools() map[string]struct{} {
	entries, gen := e.reg.Snapshot()
	b := e.handlers
	b.mu.RLock()
	bgn := b.gen
	b.mu.RUnlock()
	h := &e.hidden
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.valid && h.gen == gen && h.bgn == bgn {
		return h.names
	}
	names := map[string]struct{}{}
	b.mu.RLock()
	for _, en := range entries {
		if e.refusal(en, b.bindings[en.Name()] != nil) != nil {
			names[en.Name()] = struct{}{}
		}
	}
	bgn = b.gen
	b.mu.RUnlock()
	h.valid, h.gen, h.bgn, h.names = true, gen, bgn, names
	return names
}
