package rank

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolselect/toolselect/registry"
)

// Turn is one message of an agent conversation, for StepTools.
type Turn struct {
	// Role is "user", "assistant", "tool" or "system".
	Role    string
	Content string
	// Tool names the tool that produced a "tool" message (optional; canonical
	// or provider-mapped name).
	Tool string
	// Calls names the tools an "assistant" message called (optional; the
	// "tool" messages that follow usually say it too).
	Calls []string
}

// StepOptions tune StepTools and Step. A nil *StepOptions, and every zero
// field, means the default.
type StepOptions struct {
	// Options rank the conversation: MaxCandidates is the number of scored
	// tools in the step's set (K), and the filters, scorer, AlwaysActive and
	// Related apply as in Rank.
	Options
	// LatestWeight is how many times the latest user message counts, against
	// once for each earlier user message and the latest assistant text
	// (default 3).
	LatestWeight int
	// Results is how many of the most recent tool results are read (default
	// 3; negative: none).
	Results int
	// ResultChars is how much of each tool result is read, in bytes, cut at a
	// character boundary (default 1000).
	ResultChars int
	// ResultSlots is how many of the K scored tools are kept for tools found
	// through the tool results, when any are found (default K/3 rounded up;
	// negative: none reserved; such tools then only fill places the
	// conversation leaves empty).
	ResultSlots int
	// ResultMinScore is the minimum score of a tool found through the tool
	// results (default MinScore/2: a long result spreads its weight over many
	// words, so single matches score lower). Such tools must also score at
	// least half as much as the best of them.
	ResultMinScore float64
	// KeepCalled keeps the tools called in the last KeepCalled steps active
	// (default 1: the tools just called; negative: none). A step is an
	// assistant message with its tool calls and results. Kept tools come on
	// top of K and still pass the filters.
	KeepCalled int
}

func (s *StepOptions) withDefaults() StepOptions {
	var v StepOptions
	if s != nil {
		v = *s
	}
	v.Options = v.Options.withDefaults()
	if v.LatestWeight <= 0 {
		v.LatestWeight = DefaultLatestWeight
	}
	if v.Results == 0 {
		v.Results = DefaultStepResults
	}
	if v.ResultChars <= 0 {
		v.ResultChars = DefaultResultChars
	}
	if v.ResultSlots == 0 {
		v.ResultSlots = (v.MaxCandidates + 2) / 3
	}
	if v.ResultSlots > v.MaxCandidates {
		v.ResultSlots = v.MaxCandidates
	}
	if v.ResultMinScore == 0 {
		v.ResultMinScore = v.MinScore / 2
	}
	if v.KeepCalled == 0 {
		v.KeepCalled = DefaultKeepCalled
	}
	return v
}

// StepTools returns the active tool set for the next step of an agent loop
// (the prepareStep pattern), in catalog order, so the same set always gives
// the same prompt bytes. opts.Options are the ranking options (MaxCandidates
// is K); nil or zero fields take their defaults (see Step for the rules).
func (r *Ranker) StepTools(ctx context.Context, turns []Turn, opts *StepOptions) ([]*registry.Entry, error) {
	c := r.Catalog()
	picks, err := r.step(ctx, c, turns, opts)
	if err != nil {
		return nil, err
	}
	return inCatalogOrder(c, picks), nil
}

// Step returns the picks behind StepTools, in priority order, each with
// its reason. The active set of the next step is made of:
//
//  1. Up to K scored tools (K = MaxCandidates), shared between two rankings:
//     the conversation (the latest user message LatestWeight times, earlier
//     user messages and the latest assistant text once each) and the recent
//     tool results (the last Results results, newest first, ResultChars of
//     each, without words holding digits; the tools that produced them are
//     not ranked again; ResultMinScore, and half the best score, to count).
//     ResultSlots
//     of the K places go to the best tools found through the results that the
//     conversation did not already pick (Source "tool-result"); the rest to
//     the conversation's best. A ranking that finds too few leaves its places
//     to the other.
//  2. Tools related to those ([Options.Related]).
//  3. Tools called in the last KeepCalled steps (Source "called").
//  4. [Options.AlwaysActive] tools.
//
// So a multi-step workflow reaches tools the first message never mentioned:
// what a tool returns steers the next step. Filters (unsafe, roles,
// capabilities) apply to every pick.
func (r *Ranker) Step(ctx context.Context, turns []Turn, opts *StepOptions) ([]Pick, error) {
	return r.step(ctx, r.Catalog(), turns, opts)
}

func (r *Ranker) step(ctx context.Context, c *Catalog, turns []Turn, opts *StepOptions) ([]Pick, error) {
	so := opts.withDefaults()
	conv := conversationQuery(turns, so.LatestWeight)
	res, producers := r.resultsQuery(c, turns, so.Results, so.ResultChars)
	fromConv, fromResults, err := r.rankStepQueries(ctx, c, conv, res, producers, &so)
	if err != nil {
		return nil, err
	}
	s := stepPicks{c: c, o: so.Options}
	taken := map[int]bool{}
	s.shareScored(taken, fromConv, fromResults, so.MaxCandidates, so.ResultSlots)
	s.scorerName = so.Scorer.Name()
	s.addRelated(taken)
	s.addCalled(taken, r, turns, so.KeepCalled)
	s.addAlwaysActive(taken)
	s.numberRanks()
	return s.picks, nil
}

// conversationQuery is the conversation's query: the user messages before the
// latest one and the latest non-blank assistant text once each, in order,
// then the latest user message latestWeight times.
func conversationQuery(turns []Turn, latestWeight int) string {
	lastUser, lastAssistant := -1, -1
	for i := len(turns) - 1; i >= 0; i-- {
		switch turns[i].Role {
		case "user":
			if lastUser < 0 {
				lastUser = i
			}
		case "assistant":
			if lastAssistant < 0 && strings.TrimSpace(turns[i].Content) != "" {
				lastAssistant = i
			}
		}
	}
	var conv strings.Builder
	for i, t := range turns {
		if (t.Role == "user" && i != lastUser) || i == lastAssistant {
			conv.WriteString(t.Content)
			conv.WriteByte('\n')
		}
	}
	if lastUser >= 0 {
		for range latestWeight {
			conv.WriteString(turns[lastUser].Content)
			conv.WriteByte('\n')
		}
	}
	return conv.String()
}

// resultsQuery is the tool results' query: the words of the last n results,
// newest first, chars bytes of each; producers holds the catalog positions of
// the tools that produced them, which are not ranked again.
func (r *Ranker) resultsQuery(c *Catalog, turns []Turn, n, chars int) (string, map[int]bool) {
	var res strings.Builder
	producers := map[int]bool{}
	if n > 0 {
		read := 0
		for i := len(turns) - 1; i >= 0 && read < n; i-- {
			t := turns[i]
			if t.Role != "tool" {
				continue
			}
			read++
			res.WriteString(resultText(truncateUTF8(t.Content, chars)))
			res.WriteByte('\n')
			if pos, ok := r.pos(c, t.Tool); ok {
				producers[pos] = true
			}
		}
	}
	return res.String(), producers
}

// rankStepQueries ranks the conversation's query, then the tool results'
// (without their producers, at ResultMinScore, keeping the clear matches),
// each without Related and AlwaysActive. A blank query ranks nothing.
func (r *Ranker) rankStepQueries(ctx context.Context, c *Catalog, conv, res string, producers map[int]bool, so *StepOptions) (fromConv, fromResults []Pick, err error) {
	scoreOpts := so.Options
	scoreOpts.Related, scoreOpts.AlwaysActive = nil, nil
	if strings.TrimSpace(conv) != "" {
		if fromConv, err = r.rank(ctx, c, conv, &scoreOpts, nil); err != nil {
			return nil, nil, err
		}
	}
	if strings.TrimSpace(res) != "" {
		notProducer := func(pos int) bool { return !producers[pos] }
		resOpts := scoreOpts
		resOpts.MinScore = so.ResultMinScore
		if fromResults, err = r.rank(ctx, c, res, &resOpts, notProducer); err != nil {
			return nil, nil, err
		}
		fromResults = clearMatches(fromResults)
	}
	return fromConv, fromResults, nil
}

// clearMatches keeps, in place, the picks that score at least half as much
// as the first (best) one.
func clearMatches(picks []Pick) []Pick {
	kept := picks[:0]
	for _, p := range picks {
		if p.Score >= picks[0].Score/2 {
			kept = append(kept, p)
		}
	}
	return kept
}

// stepPicks is the active set of a step as it is made. The catalog
// positions of its picks, taken, are passed to its methods rather than held:
// a map held with the rest would leave step's stack with it.
type stepPicks struct {
	c          *Catalog
	o          Options
	scorerName string
	picks      []Pick
}

// add appends p unless its tool is unknown or already picked.
func (s *stepPicks) add(taken map[int]bool, p Pick) bool {
	pos, ok := s.c.Pos(p.Tool)
	if !ok || taken[pos] {
		return false
	}
	taken[pos] = true
	p.Entry = s.c.entries[pos]
	s.picks = append(s.picks, p)
	return true
}

// foundInToolResult marks a pick of the tool results' ranking.
func foundInToolResult(p Pick) Pick {
	p.Reason = "found in a tool result: " + p.Reason
	p.Provenance.Source = SourceToolResult
	return p
}

// shareScored shares the k scored places: resultSlots (if positive) go to
// the tool results' best, the rest to the conversation's; a ranking that
// finds too few leaves its places to the other.
func (s *stepPicks) shareScored(taken map[int]bool, fromConv, fromResults []Pick, k, resultSlots int) {
	slots := 0
	if resultSlots > 0 {
		slots = resultSlots
	}
	convQuota := k - slots
	ci := 0
	for ; ci < len(fromConv) && len(s.picks) < convQuota; ci++ {
		s.add(taken, fromConv[ci])
	}
	// The results' places, and those the conversation could not fill.
	resQuota := slots + max(0, convQuota-len(s.picks))
	ri, added := 0, 0
	for ; ri < len(fromResults) && len(s.picks) < k && added < resQuota; ri++ {
		if s.add(taken, foundInToolResult(fromResults[ri])) {
			added++
		}
	}
	for ; ci < len(fromConv) && len(s.picks) < k; ci++ {
		s.add(taken, fromConv[ci])
	}
	for ; ri < len(fromResults) && len(s.picks) < k; ri++ {
		s.add(taken, foundInToolResult(fromResults[ri]))
	}
}

// addExtra adds the tool at pos, beyond the k scored places, if it is not
// picked yet and passes the filters.
func (s *stepPicks) addExtra(taken map[int]bool, pos int, reason string, source Source, relatedTo string) {
	entries := s.c.entries
	if taken[pos] || !eligible(entries[pos], &s.o) {
		return
	}
	s.add(taken, Pick{Tool: entries[pos].Name(), Reason: reason,
		Provenance: Provenance{Scorer: s.scorerName, Source: source, RelatedTo: relatedTo}})
}

// addRelated adds the tools related to the scored picks ([Options.Related]).
func (s *stepPicks) addRelated(taken map[int]bool) {
	eachRelated(s.c, s.o.Related, s.picks, func(pos int, from string) {
		s.addExtra(taken, pos, "related to "+from, SourceRelated, from)
	})
}

// addCalled adds the tools called in the last keepCalled steps.
func (s *stepPicks) addCalled(taken map[int]bool, r *Ranker, turns []Turn, keepCalled int) {
	for _, name := range calledTools(turns, keepCalled) {
		if pos, ok := r.pos(s.c, name); ok {
			s.addExtra(taken, pos, "called in a recent step", SourceCalled, "")
		}
	}
}

// addAlwaysActive adds the [Options.AlwaysActive] tools.
func (s *stepPicks) addAlwaysActive(taken map[int]bool) {
	for _, name := range s.o.AlwaysActive {
		if pos, ok := s.c.Pos(name); ok {
			s.addExtra(taken, pos, "always active", SourceAlwaysActive, "")
		}
	}
}

// numberRanks sets each pick's 1-based [Provenance.Rank].
func (s *stepPicks) numberRanks() {
	for i := range s.picks {
		s.picks[i].Provenance.Rank = i + 1
	}
}

// calledTools returns the tools called in the last n steps, newest first. A
// step is an assistant message with the tool messages that follow it (or a
// run of tool messages with no assistant message before them).
func calledTools(turns []Turn, n int) []string {
	if n <= 0 {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	note := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	steps, inStep := 0, false
	for i := len(turns) - 1; i >= 0; i-- {
		t := turns[i]
		switch t.Role {
		case "tool":
			if !inStep {
				if steps == n {
					return out
				}
				steps++
				inStep = true
			}
			note(t.Tool)
		case "assistant":
			if len(t.Calls) > 0 {
				if !inStep {
					if steps == n {
						return out
					}
					steps++
				}
				for _, name := range t.Calls {
					note(name)
				}
			}
			inStep = false // the assistant message opens its step
		default:
			inStep = false
		}
	}
	return out
}

// pos finds a tool by canonical name or, for a registry-backed Ranker, by a
// provider-mapped name.
func (r *Ranker) pos(c *Catalog, name string) (int, bool) {
	if name == "" {
		return 0, false
	}
	if p, ok := c.Pos(name); ok {
		return p, true
	}
	if reg := r.reg; reg != nil {
		if e, ok := reg.Lookup(name); ok {
			return c.Pos(e.Name())
		}
	}
	return 0, false
}

// resultText keeps the words of a tool result: runs of letters, digits and
// "_ . -", without those holding a digit (ids, hashes, timestamps, versions,
// numbers), which name no tool and only add noise.
func resultText(s string) string {
	var b strings.Builder
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '.' && r != '-'
	}) {
		if strings.IndexFunc(f, unicode.IsDigit) >= 0 {
			continue
		}
		if f = strings.Trim(f, "_.-"); f == "" {
			continue
		}
		b.WriteString(f)
		b.WriteByte(' ')
	}
	return b.String()
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
