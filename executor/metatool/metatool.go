// Package metatool is the find_tool / call_tool meta-tools over an
// [executor.Executor]: the one implementation the MCP proxy, the C library
// and Go programs share. It lives apart from package executor because
// find_tool ranks the catalog: a program that imports only registry and
// executor links no ranking (nor its dictionaries).
//
//	tools := metatool.New(ex, nil)                       // rank's defaults
//	res, handled, err := tools.Handle(ctx, call)         // find_tool or call_tool
//	if !handled {
//		res, err = ex.Call(ctx, call)                    // any other tool
//	}
package metatool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/toolselect/toolselect/executor"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
)

// The meta-tools let a model search a large catalog itself instead of being
// sent all of it: find_tool(query, limit) ranks the tools the executor would
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
	// Parameters is the tool's JSON Schema, verbatim but for a top-level
	// "$schema" (the dialect's URI, which tells a model nothing and is
	// repeated by every tool of a server: the registry validates with the
	// dialect it names); {"type":"object"} for a schema-less tool.
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
	Error   string           `json:"error"`
	Tool    string           `json:"tool,omitempty"`
	Outcome executor.Outcome `json:"outcome"`
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

// Tools are the meta-tools over one executor (or one view of it, from
// [executor.Executor.With]: find_tool then finds what that caller may run).
// They are safe for concurrent use.
type Tools struct {
	ex   *executor.Executor
	find rank.Options
}

// New returns the meta-tools over ex. find tunes the ranking behind
// find_tool (scorer, min score, related tools...); nil means rank's
// defaults. Its MaxCandidates comes from find_tool's limit, and its caller
// from ex's policy; its Filter also leaves out every tool ex would refuse to
// run ([executor.Executor.Refused]), so find_tool never shows one.
func New(ex *executor.Executor, find *rank.Options) *Tools {
	t := &Tools{ex: ex}
	if find != nil {
		t.find = *find
	}
	return t
}

// Executor returns the executor the meta-tools run calls through.
func (t *Tools) Executor() *executor.Executor { return t.ex }

// isMetaTool reports whether name is find_tool or call_tool.
func isMetaTool(name string) bool { return name == rank.FindToolName || name == rank.CallToolName }

// Find ranks the executor's registry for query and returns at most limit
// tools (limit <= 0 means rank.DefaultFindLimit; at most rank.MaxFindLimit), best first,
// each of the first three followed by its prerequisites ([FoundTool.PrerequisiteOf]),
// which come on top of limit.
// Only tools the executor would run are considered: bound to a handler or
// constructor and allowed by its policy (unsafe tools only with
// [executor.Options.AllowUnsafe], role-restricted tools only for [executor.Options.Roles],
// schema-less tools only in a mode that can run). Ranking follows
// the ranking options given to [New] (rank's defaults otherwise: bm25, min score 0.05), so fewer
// than limit tools, or none, may come back.
func (t *Tools) Find(ctx context.Context, query string, limit int) ([]FoundTool, error) {
	if limit <= 0 {
		limit = rank.DefaultFindLimit
	}
	if limit > rank.MaxFindLimit {
		limit = rank.MaxFindLimit
	}
	o := t.findOptions(limit)
	picks, err := rank.For(t.ex.Registry()).Rank(ctx, query, o)
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
			params = withoutSchemaKeyword(t.Parameters)
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

// Withheld counts the tools the executor's policy kept out of a find_tool
// of query at limit that would otherwise have been among its results (the
// limit best matches of a ranking that ignores the policy), by the rule
// that refuses each ([registry.RuleUnsafe], [registry.RuleRole], ...): what
// a front door tells the model was withheld, by number and reason only.
// found is what [Tools.Find] returned for the same query and limit; a tool
// that nothing runs (no handler) is not counted. It ranks the registry once
// more, only when the policy refuses some tool at all.
func (t *Tools) Withheld(ctx context.Context, query string, limit int, found []FoundTool) (map[registry.Rule]int, error) {
	refused := t.ex.Refused()
	if len(refused) == 0 {
		return nil, nil
	}
	if limit <= 0 {
		limit = rank.DefaultFindLimit
	}
	limit = min(limit, rank.MaxFindLimit)
	o := t.find
	// Every role any tool lists, unsafe tools and no capability required:
	// the ranking the policy would have filtered.
	reg := t.ex.Registry()
	entries, _ := reg.Snapshot()
	open := registry.Eligibility{AllowUnsafe: true}
	for _, en := range entries {
		open = open.With(registry.Eligibility{Roles: en.Def().Roles})
	}
	o.Caller, o.AllowUnsafe, o.Roles, o.Capabilities, o.MaxCandidates = open, false, nil, nil, limit
	filter := o.Filter
	o.Filter = func(en *registry.Entry) bool {
		if _, no := refused[en.Name()]; no && errors.Is(t.ex.Allowed(en.Name()), executor.ErrNoHandler) {
			return false
		}
		return filter == nil || filter(en)
	}
	picks, err := rank.For(reg).Rank(ctx, query, &o)
	if err != nil {
		return nil, err
	}
	shown := make(map[string]bool, len(found))
	for _, f := range found {
		shown[f.Name] = true
	}
	var out map[registry.Rule]int
	n := 0
	for _, p := range picks {
		if p.Entry == nil || p.Provenance.Source == rank.SourcePrerequisite {
			continue
		}
		if n++; n > limit {
			break
		}
		if _, no := refused[p.Entry.Name()]; !no || shown[p.Entry.Name()] {
			continue
		}
		var ce *executor.CallError
		if errors.As(t.ex.Allowed(p.Entry.Name()), &ce) && ce.Rule != "" {
			if out == nil {
				out = map[registry.Rule]int{}
			}
			out[ce.Rule]++
		}
	}
	return out, nil
}

// withoutSchemaKeyword returns a copy of the JSON object schema without its
// top-level "$schema" member, the other members and their order as they
// were (white space between members dropped); schema itself when it has
// none or does not decode as an object.
func withoutSchemaKeyword(schema json.RawMessage) json.RawMessage {
	if !bytes.Contains(schema, []byte(`"$schema"`)) {
		return append(json.RawMessage(nil), schema...)
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return append(json.RawMessage(nil), schema...)
	}
	out := []byte{'{'}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return append(json.RawMessage(nil), schema...)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return append(json.RawMessage(nil), schema...)
		}
		if t == "$schema" {
			continue
		}
		key, _ := json.Marshal(t)
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, key...), ':'), v...)
	}
	return append(out, '}')
}

// findOptions are the ranking options of find_tool and of call_tool's
// suggestions: the ranking options given to [New], the executor's policy, and a filter that
// leaves out every tool it would refuse to run.
func (t *Tools) findOptions(limit int) *rank.Options {
	o := t.find
	// A tool the executor asks about is findable (Caller says it can ask;
	// the filter below still leaves out what it would refuse); calling it
	// asks.
	o.Caller, o.AllowUnsafe, o.Roles, o.MaxCandidates = t.ex.Caller(), false, nil, limit
	o.PrerequisitesBeyond = true
	hidden := t.ex.Refused()
	filter := o.Filter
	o.Filter = func(en *registry.Entry) bool {
		_, no := hidden[en.Name()]
		return !no && (filter == nil || filter(en))
	}
	return &o
}

// Call validates arguments against the named tool (canonical or
// provider-mapped name) and runs it: Hydrate, then Run, audited like any call.
// arguments is a JSON object, or a JSON string holding one.
//
// When the call did not run, err is the *CallError (as from Call) and the
// Result carries, for the model, a MetaError as its Error text: the
// violations of invalid arguments together with the schema to satisfy, or why
// the tool is unknown or refused. [executor.Result.Content] is therefore always the
// text to hand back to the model.
func (t *Tools) Call(ctx context.Context, name string, arguments json.RawMessage) (executor.Result, error) {
	return t.callTool(ctx, "", name, arguments)
}

func (t *Tools) callTool(ctx context.Context, id, name string, arguments json.RawMessage) (executor.Result, error) {
	if isMetaTool(name) {
		ce := t.ex.Invalid(executor.Call{ID: id, Tool: name}, fmt.Errorf("%w %q: call_tool runs catalog tools, not meta-tools", registry.ErrUnknownTool, name))
		return t.metaFailure(id, name, ce), ce
	}
	res, err := t.ex.Call(ctx, executor.Call{ID: id, Tool: name, Args: arguments})
	var ce *executor.CallError
	if errors.As(err, &ce) {
		out := t.metaFailure(id, name, ce)
		if errors.Is(ce, registry.ErrUnknownTool) {
			out.Error = t.suggest(ctx, ce, out.Error)
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
func (t *Tools) suggest(ctx context.Context, ce *executor.CallError, text string) string {
	found, err := rank.For(t.ex.Registry()).Suggest(ctx, ce.Tool, suggestions, t.findOptions(suggestions))
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

// Handle handles a model's call of find_tool or call_tool. handled is
// false (and nothing happens) for any other tool: run those with Call. A
// catalog tool of the same name as a meta-tool is shadowed here.
//
// find_tool returns a Result whose Value is the []FoundTool; call_tool
// returns what [Tools.Call] returns. Invalid meta-tool arguments (no query, a
// limit out of range, no name) are an invalid *CallError whose Result
// carries the MetaError, like call_tool's. In every case [executor.Result.Content] is
// the text to give the model; err says whether a tool ran.
//
// find_tool runs no tool and writes no audit record; call_tool's inner call
// is audited under the name of the tool it runs.
func (t *Tools) Handle(ctx context.Context, c executor.Call) (executor.Result, bool, error) {
	if !isMetaTool(c.Tool) {
		return executor.Result{}, false, nil
	}
	entry, err := metaEntry(c.Tool)
	if err != nil {
		return executor.Result{ID: c.ID, Tool: c.Tool}, true, err
	}
	args := c.Arguments()
	if c.Tool == rank.CallToolName {
		args = unquoteArguments(args)
	}
	if err := entry.ValidateArgs(args); err != nil {
		ce := t.ex.Invalid(c, err)
		return t.metaArgsFailure(c, entry, ce, "fix the arguments of "+c.Tool+" and call it again"), true, ce
	}
	switch c.Tool {
	case rank.FindToolName:
		var a struct {
			Query string `json:"query"`
			Limit int    `json:"limit"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			ce := t.ex.Invalid(c, err)
			return t.metaFailure(c.ID, c.Tool, ce), true, ce
		}
		if strings.TrimSpace(a.Query) == "" {
			// An empty query ranks nothing: say so rather than return no tools.
			ce := t.ex.Invalid(c, &registry.ValidationError{Tool: c.Tool, Violations: []registry.Violation{
				{Pointer: "/query", Rule: "minLength", Message: "the query is empty: say in a few words what the tool should do"}}})
			return t.metaArgsFailure(c, entry, ce, "say in a few words what the tool should do as the query and call find_tool again"), true, ce
		}
		found, err := t.Find(ctx, a.Query, a.Limit)
		if err != nil {
			return executor.Result{ID: c.ID, Tool: c.Tool, IsError: true, Outcome: executor.OutcomeToolError, Error: err.Error()}, true, nil
		}
		return executor.Result{ID: c.ID, Tool: c.Tool, Value: found, Outcome: executor.OutcomeOK}, true, nil
	default:
		var a struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			ce := t.ex.Invalid(c, err)
			return t.metaFailure(c.ID, c.Tool, ce), true, ce
		}
		res, err := t.callTool(ctx, c.ID, a.Name, a.Arguments)
		return res, true, err
	}
}

// metaArgsFailure renders invalid arguments of a meta-tool itself: the
// violations together with the meta-tool's own parameters schema, as for
// any tool's invalid arguments.
func (t *Tools) metaArgsFailure(c executor.Call, entry *registry.Entry, ce *executor.CallError, hint string) executor.Result {
	res := t.metaFailure(c.ID, c.Tool, ce)
	res.Error = metaErrorText(MetaError{Error: ce.Error(), Tool: c.Tool, Outcome: executor.OutcomeInvalid,
		Violations: ce.Violations, Parameters: entry.Def().Parameters, Hint: hint})
	return res
}

// metaFailure renders a call that did not run as a Result for the model.
func (t *Tools) metaFailure(id, name string, ce *executor.CallError) executor.Result {
	me := MetaError{Error: ce.Error(), Tool: ce.Tool, Outcome: ce.Outcome, Violations: ce.Violations}
	switch {
	case ce.Rule == registry.RuleUnknownTool:
		me.Hint = "no tool has this name; use find_tool to search the catalog and pass a name exactly as it returns it"
	case ce.Rule == registry.RuleInvalidArgs:
		if entry, ok := t.ex.Registry().Lookup(ce.Tool); ok {
			if t := entry.Def(); t.HasSchema() {
				me.Parameters = append(json.RawMessage(nil), t.Parameters...)
			}
		}
		me.Hint = "fix the arguments so they satisfy the parameters schema and call again"
	case ce.Outcome == executor.OutcomeRefused:
		me.Hint = "this tool may not be run here; choose another tool"
	}
	tool := ce.Tool
	if tool == "" {
		tool = name
	}
	return executor.Result{ID: id, Tool: tool, IsError: true, Outcome: ce.Outcome, Error: metaErrorText(me)}
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
	inner := executor.Call{Args: raw}.Arguments()
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
