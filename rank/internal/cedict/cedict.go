// Package cedict glosses Chinese text in English, so that tools described in
// Chinese can be found by English queries and the other way round (the
// classic dictionary-based approach of cross-language retrieval).
//
// The table is derived from CC-CEDICT (https://cc-cedict.org/, by MDBG,
// licensed CC BY-SA 4.0; see NOTICE): for each of about 176,000 headwords,
// simplified and traditional, a few English words from its first senses. It
// is embedded compressed (2.4 MB) and unpacked on first use, which only text
// holding Chinese characters triggers. gen.go rebuilds it.
package cedict

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

//go:embed zh_en.txt.gz
var packed []byte

// table is the unpacked dictionary: lines "headword\tgloss\n" sorted by
// headword, with the offsets of each line's start and tab.
type table struct {
	data  string
	start []uint32
	tab   []uint32
	first map[rune][2]uint32 // first character -> range of lines
}

var (
	once   sync.Once
	loaded *table
)

func load() *table {
	once.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(packed))
		if err != nil {
			panic("cedict: embedded table: " + err.Error()) // a build defect, caught by the package tests
		}
		// gzip's trailer holds the unpacked size: read it in one buffer.
		size := binary.LittleEndian.Uint32(packed[len(packed)-4:])
		b := make([]byte, size)
		if _, err := io.ReadFull(zr, b); err != nil {
			panic("cedict: embedded table: " + err.Error())
		}
		// b is never written again.
		t := &table{data: unsafe.String(unsafe.SliceData(b), len(b))}
		n := bytes.Count(b, []byte{'\n'})
		t.start = make([]uint32, 0, n)
		t.tab = make([]uint32, 0, n)
		for i := 0; i < len(t.data); {
			end := strings.IndexByte(t.data[i:], '\n')
			if end < 0 {
				end = len(t.data) - i
			}
			line := t.data[i : i+end]
			if tab := strings.IndexByte(line, '\t'); tab > 0 {
				t.start = append(t.start, uint32(i))
				t.tab = append(t.tab, uint32(i+tab))
			}
			i += end + 1
		}
		// Lines are sorted by bytes, so lines with the same first
		// character are contiguous.
		t.first = make(map[rune][2]uint32, 16384)
		for i := range t.start {
			r, _ := utf8.DecodeRuneInString(t.head(i))
			rg, ok := t.first[r]
			if !ok {
				rg[0] = uint32(i)
			}
			rg[1] = uint32(i + 1)
			t.first[r] = rg
		}
		loaded = t
	})
	return loaded
}

// lookup returns the gloss of headword w, or "".
func (t *table) lookup(w string) string {
	if i := t.lowerBound(0, len(t.start), w); i < len(t.start) && t.head(i) == w {
		return t.gloss(i)
	}
	return ""
}

// Gloss returns the English gloss words of a Chinese word, separated by
// single spaces, or "" when the dictionary does not know the word.
func Gloss(word string) string { return load().lookup(word) }

// Segment splits text, a run of Chinese characters, into dictionary words by
// forward maximum matching (the longest known word at each position) and
// calls emit with the gloss of each. Characters that start no known word are
// skipped.
func Segment(text string, emit func(word, gloss string)) {
	t := load()
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		rg, ok := t.first[r]
		if !ok {
			i += size
			continue
		}
		// Narrow the headwords that start with text[i:j] one character at a
		// time: the table is sorted, so they are a shrinking range, and a
		// prefix that is itself a headword is the first of its range.
		lo, hi := int(rg[0]), int(rg[1])
		best, bestEnd := -1, 0
		for j := i + size; ; {
			p := text[i:j]
			lo = t.lowerBound(lo, hi, p)
			hi = t.prefixEnd(lo, hi, p)
			if lo == hi {
				break
			}
			if t.head(lo) == p {
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
		emit(text[i:bestEnd], t.gloss(best))
		i = bestEnd
	}
}

// lowerBound returns the first line in [lo, hi) whose headword is >= p.
func (t *table) lowerBound(lo, hi int, p string) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.head(m) < p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// prefixEnd returns the first line in [lo, hi) whose headword does not start
// with p, given that those that do come first.
func (t *table) prefixEnd(lo, hi int, p string) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if strings.HasPrefix(t.head(m), p) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// head returns the headword of line i.
func (t *table) head(i int) string { return t.data[t.start[i]:t.tab[i]] }

// gloss returns the gloss of line i.
func (t *table) gloss(i int) string {
	g := t.data[t.tab[i]+1:]
	if end := strings.IndexByte(g, '\n'); end >= 0 {
		g = g[:end]
	}
	return g
}
