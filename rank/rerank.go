package rank

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// LLMReranker asks a language model to order the top candidates. Tools the
// model leaves out keep their place after the ones it ordered; names it
// invents are ignored.
type LLMReranker struct {
	// Chat sends one system and one user message to a language model and
	// returns its reply. The selector's chat client adapts to it in one line;
	// rank does not import the selector.
	Chat func(ctx context.Context, system, user string) (string, error)
}

const rerankSystem = `You rank software tools by how useful they are for a user's request.
Reply with a JSON object only: {"order":["tool name", ...]}, most useful first,
listing only names from the candidates.`

// Rerank implements Reranker.
func (l *LLMReranker) Rerank(ctx context.Context, query string, picks []Pick) ([]Pick, error) {
	if l.Chat == nil || len(picks) < 2 {
		return picks, nil
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Request: %s\n\nCandidates:\n", query)
	for _, p := range picks {
		desc := ""
		if p.Entry != nil {
			desc = p.Entry.Def().Description
			if len(desc) > 300 {
				desc = desc[:300] + "..."
			}
		}
		fmt.Fprintf(&sb, "- %s: %s\n", p.Tool, strings.ReplaceAll(desc, "\n", " "))
	}
	reply, err := l.Chat(ctx, rerankSystem, sb.String())
	if err != nil {
		return nil, err
	}
	order, err := parseOrder(reply)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]int, len(picks))
	for i, p := range picks {
		byName[p.Tool] = i
	}
	used := make([]bool, len(picks))
	out := make([]Pick, 0, len(picks))
	for _, name := range order {
		i, ok := byName[name]
		if !ok || used[i] {
			continue
		}
		used[i] = true
		p := picks[i]
		p.Provenance.Source = SourceReranked
		p.Reason += "; reranked by the model"
		out = append(out, p)
	}
	for i, p := range picks {
		if !used[i] {
			out = append(out, p)
		}
	}
	return out, nil
}

func parseOrder(reply string) ([]string, error) {
	s := strings.TrimSpace(reply)
	if i := strings.Index(s, "{"); i >= 0 {
		if j := strings.LastIndex(s, "}"); j > i {
			s = s[i : j+1]
		}
	}
	var v struct {
		Order []string `json:"order"`
	}
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("reranker reply is not {\"order\":[...]}: %w", err)
	}
	return v.Order, nil
}
