// Package cedict glosses Chinese text in English, so that tools described in
// Chinese can be found by English queries and the other way round (the
// classic dictionary-based approach of cross-language retrieval).
//
// The table is derived from CC-CEDICT (https://cc-cedict.org/, by MDBG,
// licensed CC BY-SA 4.0; see NOTICE): for each of about 176,000 headwords,
// simplified and traditional, a few English words from its first senses. It
// is embedded as plain sorted text (6.4 MB) and searched in place, so using
// it costs nothing at start-up. gen.go rebuilds it.
package cedict

import (
	_ "embed"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// data is the dictionary: lines "headword\tgloss\n" sorted by headword
// bytes, embedded as it is and searched in place. A line is named by the
// offset of its first byte. Nothing is unpacked or indexed at start-up: a
// binary search over byte offsets finds the line holding the middle offset
// by looking back for its newline, so the first Chinese text costs nothing
// more than the lookups themselves (the compressed table that preceded this
// cost 60-100 ms to unpack on first use).
//
//go:embed zh_en.txt
var data string

// lookup returns the gloss of headword w, or "".
func lookup(w string) string {
	if s := lowerBound(0, len(data), w); s < len(data) && head(s) == w {
		return gloss(s)
	}
	return ""
}

// Gloss returns the English gloss words of a Chinese word, separated by
// single spaces, or "" when the dictionary does not know the word.
func Gloss(word string) string { return lookup(word) }

// Segment splits text, a run of Chinese characters, into dictionary words by
// forward maximum matching (the longest known word at each position) and
// calls emit with the gloss of each. Characters that start no known word are
// skipped.
func Segment(text string, emit func(word, gloss string)) {
	for i := 0; i < len(text); {
		_, size := utf8.DecodeRuneInString(text[i:])
		// Narrow the headwords that start with text[i:j] one character at a
		// time: the table is sorted, so they are a shrinking range, and a
		// prefix that is itself a headword is the first of its range.
		lo, hi := firstRange(text[i : i+size])
		best, bestEnd := -1, 0
		for j := i + size; ; {
			p := text[i:j]
			lo = lowerBound(lo, hi, p)
			hi = prefixEnd(lo, hi, p)
			if lo == hi {
				break
			}
			if head(lo) == p {
				best, bestEnd = lo, j
			}
			if j == len(text) {
				break
			}
			_, n := utf8.DecodeRuneInString(text[j:])
			j += n
		}
		if best < 0 {
			i += size
			continue
		}
		emit(text[i:bestEnd], gloss(best))
		i = bestEnd
	}
}

// firsts caches, per character of the main CJK blocks (U+3400-U+9FFF), the
// lines whose headword starts with it, found on the character's first use:
// lo<<32 | hi+1, 0 while unknown. Racing goroutines store the same value.
var firsts [0xA000 - 0x3400]atomic.Uint64

// firstRange returns the lines [lo, hi) whose headword starts with c, one
// character.
func firstRange(c string) (lo, hi int) {
	r, _ := utf8.DecodeRuneInString(c)
	if r < 0x3400 || r >= 0xA000 {
		lo = lowerBound(0, len(data), c)
		return lo, prefixEnd(lo, len(data), c)
	}
	slot := &firsts[r-0x3400]
	if v := slot.Load(); v != 0 {
		return int(v >> 32), int(v&0xFFFFFFFF) - 1
	}
	lo = lowerBound(0, len(data), c)
	hi = prefixEnd(lo, len(data), c)
	slot.Store(uint64(lo)<<32 | uint64(hi+1))
	return lo, hi
}

// lowerBound returns the first line in [lo, hi) whose headword is >= p, or
// hi; lo and hi are line starts (hi may be len(data)).
func lowerBound(lo, hi int, p string) int {
	for lo < hi {
		s := lineAt(lo, lo+(hi-lo)/2)
		if head(s) < p {
			lo = next(s)
		} else {
			hi = s
		}
	}
	return lo
}

// prefixEnd returns the first line in [lo, hi) whose headword does not start
// with p, given that those that do come first.
func prefixEnd(lo, hi int, p string) int {
	for lo < hi {
		s := lineAt(lo, lo+(hi-lo)/2)
		if strings.HasPrefix(head(s), p) {
			lo = next(s)
		} else {
			hi = s
		}
	}
	return lo
}

// lineAt returns the start of the line holding offset m, which is not
// before line start lo.
func lineAt(lo, m int) int { return lo + strings.LastIndexByte(data[lo:m], '\n') + 1 }

// next returns the start of the line after the one starting at s.
func next(s int) int { return s + strings.IndexByte(data[s:], '\n') + 1 }

// head returns the headword of the line starting at s.
func head(s int) string { return data[s : s+strings.IndexByte(data[s:], '\t')] }

// gloss returns the gloss of the line starting at s.
func gloss(s int) string {
	g := data[s+strings.IndexByte(data[s:], '\t')+1:]
	return g[:strings.IndexByte(g, '\n')]
}
