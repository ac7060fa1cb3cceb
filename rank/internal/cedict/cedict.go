// Package cedict glosses Chinese text in English, so that tools described in
// Chinese can be found by English queries and the other way round (the
// classic dictionary-based approach of cross-language retrieval).
//
// The table is derived from CC-CEDICT (https://cc-cedict.org/, by MDBG,
// licensed CC BY-SA 4.0; see NOTICE): for each of about 176,000 headwords,
// simplified and traditional, a few English words from its first senses. It
// is embedded as plain sorted text (5.0 MB: 3.3 MB of headwords, each with its
// gloss or a reference to one of the 1.8 MB of glosses that several headwords
// share, stored once) and searched in place, so using it costs nothing at
// start-up. gen.go rebuilds it.
package cedict

import (
	_ "embed"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// data is the dictionary: lines "headword\tgloss\n" sorted by headword
// bytes, embedded as it is and searched in place; a gloss is the words
// themselves or a reference to a line of shared. A line is named by the
// offset of its first byte. Nothing is unpacked or indexed at start-up: a
// binary search over byte offsets finds the line holding the middle offset
// by looking back for its newline, so the first Chinese text costs nothing
// more than the lookups themselves (the compressed table that preceded this
// cost 60-100 ms to unpack on first use).
//
//go:embed zh_en.txt
var data string

// shared holds, one a line, the glosses that several headwords share (a
// simplified and a traditional form, synonyms) and that are long enough for a
// reference to be shorter: 96,109 distinct glosses among 176,283 headwords,
// so storing each shared one once saves a fifth of the table. A reference
// names its line by the offset of the line's first byte, so nothing is
// indexed here either.
//
//go:embed zh_en_shared.txt
var shared string

// A reference, in place of a gloss in data, is the offset of a line of
// shared written as refLen digits of base 64, most significant first, digit
// d being the byte refZero+d ('?' to '~'). A gloss starts with a lower-case
// letter or a digit, and the first digit of a reference is below 'a'-refZero
// (offsets under 34<<18, 8.9 MB), so it starts with one of '?' to '`':
// never a gloss's first byte.
const (
	refLen  = 4
	refZero = '?'
)

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

// gloss returns the gloss of the line starting at s, resolving a reference
// to the shared line it names.
func gloss(s int) string {
	g := data[s+strings.IndexByte(data[s:], '\t')+1:]
	g = g[:strings.IndexByte(g, '\n')]
	if !isRef(g) {
		return g
	}
	o := 0
	for i := range refLen {
		o = o<<6 | int(g[i]-refZero)
	}
	g = shared[o:]
	return g[:strings.IndexByte(g, '\n')]
}

// isRef says whether the gloss field g of a line is a reference.
func isRef(g string) bool { return g[0] >= refZero && g[0] < 'a' }
