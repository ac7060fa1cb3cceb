package selector

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/toolselect/toolselect/registry"
)

// offer is the tools of one request, and how the model's names map back.
type offer struct {
	entries  []*registry.Entry
	names    []string                   // canonical names, in request order
	byName   map[string]*registry.Entry // canonical and provider-mapped names
	tools    []json.RawMessage          // native mode: the `tools` entries
	search   bool                       // the model may ask for a search round
	messages []Message
}

// Eligibility is the request's filter (registry.Eligibility, the one rule
// rank and the executor apply too): Caller with the shorthand fields.
func (r *Request) Eligibility() registry.Eligibility {
	return r.Caller.With(registry.Eligibility{AllowUnsafe: r.AllowUnsafe, Roles: r.Roles, Capabilities: r.Capabilities})
}

// firstOffer decides the first request's tools: a Prefilter's pick; or with
// a Ranker, every eligible tool when their view fits the token budget, else
// the top K ranked; or every eligible tool. It sets ss.rank and ss.subset.
func (ss *Session) firstOffer(ctx context.Context, s *ToolSelector, req *Request) ([]*registry.Entry, error) {
	prefilter := s.prefilter
	if req.Prefilter != nil {
		prefilter = req.Prefilter
	}
	switch {
	case prefilter != nil:
		ss.rank = func(ctx context.Context, q string) ([]*registry.Entry, error) {
			picked, err := prefilter(ctx, q, ss.eligible)
			return ss.narrow(ctx, picked), err
		}
	case s.ranker != nil:
		fits, err := s.ranker.Fits(ss.eligible, viewFormat(ss.cfg.Mode), ss.cfg.OfferTokens)
		if err != nil {
			return nil, &prefilterError{fmt.Errorf("counting the offer's tokens: %w", err)}
		}
		if fits {
			return ss.eligible, nil
		}
		ss.rank = func(ctx context.Context, q string) ([]*registry.Entry, error) {
			picked, err := s.ranker.Rank(ctx, req.Registry, q, ss.eligible, ss.cfg.TopK)
			return ss.narrow(ctx, picked), err
		}
	default:
		return ss.eligible, nil
	}
	offered, err := ss.rank(ctx, rankQuery(req))
	if err != nil {
		return nil, &prefilterError{err}
	}
	ss.subset = len(offered) < len(ss.eligible)
	return offered, nil
}

// noEligibleMessage says why nothing is eligible.
func noEligibleMessage(registered int, excluded map[registry.Rule]int) string {
	if registered == 0 {
		return "the registry is empty"
	}
	var why []string
	for _, k := range []struct {
		key  registry.Rule
		text string
	}{
		{registry.RuleUnsafe, "unsafe (allow_unsafe is off)"},
		{registry.RuleRole, "restricted to roles the caller does not hold"},
		{registry.RuleCapability, "lacking a required capability"},
	} {
		if n := excluded[k.key]; n > 0 {
			why = append(why, fmt.Sprintf("%d %s", n, k.text))
		}
	}
	return fmt.Sprintf("none of the %d registered tools is eligible: %s", registered, strings.Join(why, ", "))
}

// narrow keeps the eligible entries the ranking picked, once each, in
// catalog order whatever order it returned them in: the same set of tools
// then always yields the same prompt bytes, so provider prompt caches keep
// working. Picked entries that were not eligible are ignored (a ranking can
// only narrow, never widen).
func (ss *Session) narrow(ctx context.Context, picked []*registry.Entry) []*registry.Entry {
	want := make(map[*registry.Entry]bool, len(picked))
	for _, e := range picked {
		want[e] = true
	}
	out := make([]*registry.Entry, 0, len(picked))
	for _, e := range ss.eligible {
		if want[e] {
			out = append(out, e)
		}
	}
	if len(out) < len(want) {
		ss.log.LogAttrs(ctx, slog.LevelWarn, "tool selection: the ranking returned tools that were not eligible; ignored",
			slog.Int("returned", len(want)), slog.Int("kept", len(out)))
	}
	return out
}

// newOffer builds a request's tools and prompts. search offers the search
// round; note is added to the user prompt.
func (ss *Session) newOffer(entries []*registry.Entry, search bool, note string) (*offer, error) {
	o := &offer{entries: entries, names: make([]string, len(entries)),
		byName: make(map[string]*registry.Entry, 2*len(entries))}
	for i, e := range entries {
		o.names[i] = e.Name()
		o.byName[e.Name()] = e
	}
	if ss.cfg.Mode == ModeNative {
		for _, e := range entries {
			if mapped := ss.reg.ProviderName(registry.FormatOpenAI, e.Name()); mapped != e.Name() {
				if _, clash := o.byName[mapped]; !clash {
					o.byName[mapped] = e
				}
			}
		}
		// A tool of the catalog named search_tools leaves no name for the search function.
		_, clash := o.byName[SearchToolName]
		search = search && !clash
		items, err := ss.reg.ViewItems(entries, registry.FormatOpenAI)
		if err != nil {
			return nil, fmt.Errorf("tools view: %w", err)
		}
		if search {
			items = append(items, json.RawMessage(searchToolItem))
		}
		o.tools = items
	}
	o.search = search
	system, err := buildSystemPrompt(ss.cfg.Mode, ss.cfg.MaxCalls, entries, search)
	if err != nil {
		return nil, fmt.Errorf("system prompt: %w", err)
	}
	o.messages = []Message{{Role: "system", Content: system}, {Role: "user", Content: ss.user + note}}
	return o, nil
}

// maxSearchBytes bounds a model's search words, as ranked and as recorded.
const maxSearchBytes = 1024

// searchRound ranks the eligible tools with the model's words and asks the
// same model again, within what is left of the attempt's timeout. When the
// words match nothing the offer stays as it was, and the model is told so.
//
// With thinking on in a dialect that requires it (DeepSeek), a native-mode
// round continues the conversation instead: the assistant turn that asked for
// the search is sent back with its reasoning_content and the search call,
// and the note answers that call.
func (ss *Session) searchRound(model, query string, a Attempt, resp ChatResponse) Action {
	query = truncate(redact(query, ss.cfg.APIKey), maxSearchBytes)
	picked, err := ss.rank(ss.ioContext(), query)
	if err != nil {
		a.Kind, a.Message = KindSearch, fmt.Sprintf("ranking the catalog for the search %q: %v", truncate(query, 200), err)
		return ss.fail(a)
	}
	entries := ss.cur.entries
	if len(picked) > 0 {
		entries = picked
	}
	more := len(ss.att.searches)+1 < ss.cfg.Searches()
	next, err := ss.newOffer(entries, more, searchNote(query, len(picked) > 0))
	if err != nil {
		a.Kind, a.Message = KindSearch, err.Error()
		return ss.fail(a)
	}
	ss.cur = next
	ss.att.searches = append(ss.att.searches, Search{Query: query, Offered: next.names})
	a.Searches = ss.att.searches
	ss.log.LogAttrs(ss.ctx, slog.LevelInfo, "tool selection: search round",
		slog.String("model", model), slog.String("query", query),
		slog.Int("matched", len(picked)), slog.Int("offered", len(next.names)))
	left := ss.att.end.Sub(ss.now())
	if left <= 0 {
		a.Kind, a.Message = KindTimeout, "the attempt's timeout ran out before the search round could be asked"
		return ss.fail(a)
	}
	if r := ss.cfg.reasoning(); ss.cfg.Mode == ModeNative && ss.att.dialect.replayReasoning &&
		r != ReasoningOff && r != ReasoningProvider && resp.Reasoning != "" {
		for _, tc := range resp.ToolCalls {
			if tc.Name == SearchToolName {
				ss.att.replay = append(ss.att.replay,
					Message{Role: "assistant", Content: resp.Content, ReasoningContent: resp.Reasoning, ToolCalls: []NativeCall{tc}},
					Message{Role: "tool", ToolCallID: tc.ID, Content: strings.TrimSpace(searchNote(query, len(picked) > 0))})
				break
			}
		}
	}
	ss.pending = ss.chat(model, left)
	return ss.Next()
}
