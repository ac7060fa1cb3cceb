package rank

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolselect/toolselect/internal/par"
)

// FeedbackOp is one recorded change for Replay: learn the pair (Query,
// each of Tools), or with Remove forget it.
type FeedbackOp struct {
	Query  string
	Tools  []string
	Remove bool
}

// Replay applies ops in order with the result of calling Add and Remove one
// by one, but analyses only the tasks that are still held at the end: when a
// long log is loaded, most tasks of busy tools have been pushed out by the
// per-tool cap, and analysing text is most of what loading costs. An invalid
// op is an error naming its index, and then nothing is applied. Ops whose
// task has no words to learn from are skipped, as Add refuses them.
func (f *Feedback) Replay(ops []FeedbackOp) (int, error) {
	for i, op := range ops {
		if err := CheckFeedbackPair(op.Query, op.Tools); err != nil {
			return 0, fmt.Errorf("op %d: %w", i+1, err)
		}
	}
	wordy := wordyTasks(ops)
	f.mu.Lock()
	defer f.mu.Unlock()
	held, unknown, evicted := f.simulate(ops, wordy)
	tfs := f.analyseNew(held)
	from := f.keepHeldRuns(held)
	added := 0
	// Tools in name order, so that task ids (and everything kept in id
	// order) do not depend on map iteration.
	for _, tool := range slices.Sorted(maps.Keys(held)) {
		for _, q := range held[tool][from[tool]:] {
			f.learn(q, tfs[q], tool)
			added++
		}
	}
	f.stats.Unknown += unknown
	f.stats.Evicted += evicted
	return added, nil
}

// wordyTasks says, for each task text the ops learn, whether it has words
// to learn from: text analysis, pure, over the cores and before the lock.
func wordyTasks(ops []FeedbackOp) map[string]bool {
	var texts []string
	wordy := map[string]bool{}
	for _, op := range ops {
		if _, ok := wordy[op.Query]; !ok && !op.Remove {
			wordy[op.Query] = false
			texts = append(texts, op.Query)
		}
	}
	has := make([]bool, len(texts))
	par.For(len(texts), 256, func(i int) { has[i] = hasWords(texts[i]) })
	for i, q := range texts {
		wordy[q] = has[i]
	}
	return wordy
}

// simulate applies ops to tool and task names only, as Add and Remove would:
// it returns each tool's held tasks, oldest first, and the counts of unknown
// names and evictions. f.mu is held for writing.
func (f *Feedback) simulate(ops []FeedbackOp, wordy map[string]bool) (held map[string][]string, unknown, evicted int) {
	type pair struct{ tool, query string }
	held = make(map[string][]string, len(f.byTool))
	in := map[pair]struct{}{}
	for tool, ids := range f.byTool {
		qs := make([]string, len(ids))
		for i, id := range ids {
			qs[i] = f.byID[id].query
			in[pair{tool, qs[i]}] = struct{}{}
		}
		held[tool] = qs
	}
	for _, op := range ops {
		if !op.Remove && !wordy[op.Query] {
			continue // Add refuses it
		}
		for _, t := range op.Tools {
			qs, k := held[t], pair{t, op.Query}
			_, present := in[k]
			switch {
			case op.Remove:
				if present {
					i := slices.Index(qs, op.Query)
					held[t] = slices.Delete(qs, i, i+1)
					delete(in, k)
				}
			case f.opts.Known != nil && !f.opts.Known(t):
				unknown++
			case !present:
				if len(qs) >= f.opts.PerTool {
					delete(in, pair{t, qs[0]})
					qs = qs[1:]
					evicted++
				}
				held[t] = append(qs, op.Query)
				in[k] = struct{}{}
			}
		}
	}
	return held, unknown, evicted
}

// analyseNew works out the term frequencies of the held tasks not indexed
// yet, over the cores. f.mu is held for writing.
func (f *Feedback) analyseNew(held map[string][]string) map[string][]termCount {
	tfs := map[string][]termCount{}
	var texts []string
	for _, tool := range slices.Sorted(maps.Keys(held)) {
		for _, q := range held[tool] {
			if _, ok := f.tasks[q]; !ok {
				if _, queued := tfs[q]; !queued {
					tfs[q] = nil
					texts = append(texts, q)
				}
			}
		}
	}
	freqs := make([][]termCount, len(texts))
	par.For(len(texts), 64, func(i int) { freqs[i] = termFreq(texts[i]) })
	for i, q := range texts {
		tfs[q] = freqs[i]
	}
	return tfs
}

// keepHeldRuns keeps, per tool, the longest run of its held tasks that is
// already there in order, and forgets the rest; it returns where each
// tool's remainder starts, to be learned in order so that each tool's tasks
// end oldest first exactly as held. f.mu is held for writing.
func (f *Feedback) keepHeldRuns(held map[string][]string) map[string]int {
	from := map[string]int{}
	for _, tool := range slices.Sorted(maps.Keys(f.byTool)) {
		ids, h := slices.Clone(f.byTool[tool]), held[tool]
		kept, j := 0, 0
		for kept < len(h) {
			for j < len(ids) && f.byID[ids[j]].query != h[kept] {
				j++
			}
			if j == len(ids) {
				break
			}
			kept++
			j++
		}
		from[tool] = kept
		for _, id := range ids {
			if task := f.byID[id]; !slices.Contains(h[:kept], task.query) {
				f.unlearn(task, tool)
			}
		}
	}
	return from
}

// hasWords reports whether text has a word to learn from (one that is not a
// stopword), looking at a prefix cut at a space first: tokens never span
// whitespace, so a word found there is a word of text.
func hasWords(text string) bool {
	if len(text) > 256 {
		if i := strings.LastIndexAny(text[:256], " \t\r\n"); i > 0 && wordsIn(text[:i]) {
			return true
		}
	}
	return wordsIn(text)
}

func wordsIn(s string) bool {
	found := false
	words(s, func(w []byte) {
		if !found {
			_, stop := stopwords[string(w)]
			found = !stop
		}
	})
	return found
}
