// Package bpe counts the tokens of OpenAI's byte-pair encodings o200k_base
// and cl100k_base, offline, from vocabularies embedded as text (one token a line)
// (gen.go writes them from tiktoken-go's codecs, which the tests keep as the
// reference: every count must equal theirs). tiktoken-go itself links its
// vocabularies as Go map literals, 9.4 MB of the command; these files are
// 2.4 MB, read into a map once, at the first [O200k] or [Cl100k].
package bpe

import (
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/dlclark/regexp2/v2"
)

// The split patterns are OpenAI's for each encoding (tiktoken's
// openai_public.py), as tiktoken-go compiles them with regexp2.
const (
	splitO200k  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	splitCl100k = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

var (
	//go:embed o200k_base.txt
	o200kData string
	//go:embed cl100k_base.txt
	cl100kData string

	o200kOnce, cl100kOnce sync.Once
	o200k, cl100k         *Encoding
)

// Encoding is one byte-pair encoding: its tokens' ranks and its split
// pattern. It is safe for concurrent use.
type Encoding struct {
	name  string
	ranks map[string]uint32
	split *regexp2.Regexp
}

// O200k is o200k_base (GPT-4o, GPT-4.1, the o-series, GPT-5).
func O200k() *Encoding {
	o200kOnce.Do(func() { o200k = load("o200k_base", o200kData, splitO200k) })
	return o200k
}

// Cl100k is cl100k_base (GPT-4, GPT-3.5, text-embedding-3).
func Cl100k() *Encoding {
	cl100kOnce.Do(func() { cl100k = load("cl100k_base", cl100kData, splitCl100k) })
	return cl100k
}

// load reads a vocabulary file: one line per rank, the token's bytes as
// text, an empty line for a rank with no token. A token's bytes are
// written as they are (printable ASCII, and whole UTF-8 characters other
// than C1 controls and line separators), but for '\\' as \\\\ and any other
// byte as \\xHH. The map's keys are slices of the embedded string for the
// tokens written as they are (all but a few thousand), and of one buffer
// for the escaped ones.
func load(name, data, pattern string) *Encoding {
	ranks := make(map[string]uint32, strings.Count(data, "\n"))
	type escaped struct {
		id       uint32
		from, to int
	}
	var buf []byte
	var later []escaped
	for id := uint32(0); len(data) > 0; id++ {
		end := strings.IndexByte(data, '\n')
		if end < 0 {
			panic(fmt.Sprintf("bpe: %s.txt does not end its last line (rank %d)", name, id))
		}
		line := data[:end]
		data = data[end+1:]
		switch {
		case line == "":
		case strings.IndexByte(line, '\\') < 0:
			ranks[line] = id
		default:
			from := len(buf)
			var err error
			if buf, err = unescape(buf, line); err != nil {
				panic(fmt.Sprintf("bpe: %s.txt is corrupt at rank %d: %v", name, id, err))
			}
			later = append(later, escaped{id, from, len(buf)})
		}
	}
	all := string(buf)
	for _, e := range later {
		ranks[all[e.from:e.to]] = e.id
	}
	return &Encoding{name: name, ranks: ranks, split: regexp2.MustCompile(pattern, regexp2.None)}
}

// unescape appends the bytes line stands for (see load) to buf.
func unescape(buf []byte, line string) ([]byte, error) {
	for i := 0; i < len(line); i++ {
		if line[i] != '\\' {
			buf = append(buf, line[i])
			continue
		}
		switch {
		case i+1 < len(line) && line[i+1] == '\\':
			buf = append(buf, '\\')
			i++
		case i+3 < len(line) && line[i+1] == 'x':
			b, err := strconv.ParseUint(line[i+2:i+4], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("bad escape %q", line[i:i+4])
			}
			buf = append(buf, byte(b))
			i += 3
		default:
			return nil, fmt.Errorf("bad escape at byte %d", i)
		}
	}
	return buf, nil
}

// Name is the encoding's name, as tiktoken spells it.
func (e *Encoding) Name() string { return e.name }

// Count returns the number of tokens text encodes to (special tokens such
// as <|endoftext|> are counted as ordinary text, as tiktoken's
// encode_ordinary does). The error is the split pattern's, which has no
// time-out set and does not fail on any input seen.
func (e *Encoding) Count(text string) (int, error) {
	count := 0
	m, err := e.split.FindStringMatch(text)
	for ; m != nil && err == nil; m, err = e.split.FindNextMatch(m) {
		piece := m.String()
		if _, ok := e.ranks[piece]; ok {
			count++
		} else {
			count += e.mergedParts(piece)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("bpe: splitting the text: %w", err)
	}
	return count, nil
}

const noRank = math.MaxUint32

// mergedParts is the number of tokens byte-pair encoding merges piece into:
// starting from single bytes, it merges the adjacent pair whose joined
// bytes have the lowest rank (the leftmost on a tie) until no joined pair
// is a token. Parts are a linked list of boundaries, candidates a heap
// whose stale entries are skipped, so a long piece costs O(n log n).
func (e *Encoding) mergedParts(piece string) int {
	n := int32(len(piece))
	next := make([]int32, n+1)
	prev := make([]int32, n+1)
	rank := make([]uint32, n+1) // the rank of joining the part at i with the next, or noRank
	for i := range next {
		next[i], prev[i], rank[i] = int32(i)+1, int32(i)-1, noRank
	}
	next[n] = -1
	rankAt := func(i int32) uint32 {
		j := next[i]
		if j < 0 || next[j] < 0 {
			return noRank
		}
		if r, ok := e.ranks[piece[i:next[j]]]; ok {
			return r
		}
		return noRank
	}
	var h candidates
	for i := int32(0); i+2 <= n; i++ {
		if rank[i] = rankAt(i); rank[i] != noRank {
			h.push(candidate{rank[i], i})
		}
	}
	parts := int(n)
	for len(h) > 0 {
		c := h.pop()
		if rank[c.at] != c.rank {
			continue // stale: the part changed since
		}
		j := next[c.at]
		k := next[j]
		next[c.at] = k
		if k >= 0 {
			prev[k] = c.at
		}
		rank[j] = noRank
		parts--
		if rank[c.at] = rankAt(c.at); rank[c.at] != noRank {
			h.push(candidate{rank[c.at], c.at})
		}
		if p := prev[c.at]; p >= 0 {
			if rank[p] = rankAt(p); rank[p] != noRank {
				h.push(candidate{rank[p], p})
			}
		}
	}
	return parts
}

// candidate is a pair that may merge: its rank and its left boundary.
type candidate struct {
	rank uint32
	at   int32
}

// candidates is a binary min-heap by (rank, at).
type candidates []candidate

func (h candidates) less(a, b int) bool {
	return h[a].rank < h[b].rank || h[a].rank == h[b].rank && h[a].at < h[b].at
}

func (h *candidates) push(c candidate) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *candidates) pop() candidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s.less(l, m) {
			m = l
		}
		if r < len(s) && s.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
