//go:build ignore

// gen builds related.packed, the related-words table of package wordnet, from
// the WordNet 3.0 database files as Debian's wordnet-base package installs
// them (/usr/share/wordnet). `make wordnet` runs it, and a test in `make
// test` checks that the committed table is what it writes:
//
//	go run gen.go -dir /usr/share/wordnet -out related.packed
//
// Every single-word lemma (lower-case ASCII letters, three or more) becomes
// one line "word<TAB>related words", sorted by word. The related words come
// from the word's first sense in each part of speech (noun, verb, adjective,
// adverb, in that order): the other lemmas of that synset (synonyms), the
// lemmas of its hypernyms, the derivationally related forms of the word
// itself, and the first lemma of its first hyponyms. A sense that is a name
// (written with a capital: Lyon, Melbourne) is skipped. Only single-word lemmas
// are kept, each once, at most -max per word; words with no related word
// are left out. The lines are written packed (rank/internal/packed), the
// form the package embeds.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/toolselect/toolselect/rank/internal/packed"
)

// synset is what the generator reads of one synset in a data.POS file.
type synset struct {
	words []string
	ptrs  []pointer
}

type pointer struct {
	sym    string
	offset int64
	pos    byte // n, v, a (s is read as a), r
	src    int  // source word number, 0: the whole synset
}

var posFiles = []struct {
	name string
	pos  byte
}{{"noun", 'n'}, {"verb", 'v'}, {"adj", 'a'}, {"adv", 'r'}}

func main() {
	dir := flag.String("dir", "/usr/share/wordnet", "WordNet database directory")
	out := flag.String("out", "related.packed", "output file")
	maxRel := flag.Int("max", 10, "related words kept per word")
	hypos := flag.Int("hyponyms", 3, "hyponym synsets read per sense")
	flag.Parse()
	if err := run(*dir, *out, *maxRel, *hypos); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dir, out string, maxRel, hypos int) error {
	data := map[byte]*os.File{}
	for _, pf := range posFiles {
		f, err := os.Open(filepath.Join(dir, "data."+pf.name))
		if err != nil {
			return err
		}
		defer f.Close()
		data[pf.pos] = f
	}
	read := func(pos byte, off int64) (synset, error) { return readSynset(data[pos], off) }
	rel := map[string][]string{}
	for _, pf := range posFiles {
		firsts, err := firstSenses(filepath.Join(dir, "index."+pf.name))
		if err != nil {
			return err
		}
		for _, fs := range firsts {
			s, err := read(pf.pos, fs.offset)
			if err != nil {
				return fmt.Errorf("%s %s: %w", pf.name, fs.word, err)
			}
			have := rel[fs.word]
			add := func(w string) {
				w = strings.ToLower(w)
				if len(have) >= maxRel || w == fs.word || !plainWord(w) {
					return
				}
				for _, h := range have {
					if h == w {
						return
					}
				}
				have = append(have, w)
			}
			if properNoun(s, fs.word) {
				continue // Lyon, Melbourne: a name, whose relatives (city, town) say little
			}
			self := 0
			for i, w := range s.words {
				if strings.ToLower(w) == fs.word {
					self = i + 1
				}
				add(w)
			}
			for _, p := range s.ptrs {
				if p.sym == "@" || p.sym == "@i" {
					h, err := read(p.pos, p.offset)
					if err != nil {
						return err
					}
					for _, w := range h.words {
						add(w)
					}
				}
			}
			for _, p := range s.ptrs {
				if p.sym == "+" && p.src == self && self > 0 {
					d, err := read(p.pos, p.offset)
					if err != nil {
						return err
					}
					if len(d.words) > 0 {
						add(d.words[0])
					}
				}
			}
			n := 0
			for _, p := range s.ptrs {
				if (p.sym == "~" || p.sym == "~i") && n < hypos {
					n++
					h, err := read(p.pos, p.offset)
					if err != nil {
						return err
					}
					if len(h.words) > 0 {
						add(h.words[0])
					}
				}
			}
			rel[fs.word] = have
		}
	}
	words := make([]string, 0, len(rel))
	for w, r := range rel {
		if len(r) > 0 {
			words = append(words, w)
		}
	}
	sort.Strings(words)
	var text bytes.Buffer
	for _, w := range words {
		fmt.Fprintf(&text, "%s\t%s\n", w, strings.Join(rel[w], " "))
	}
	var table bytes.Buffer
	if err := packed.Pack(&table, text.Bytes()); err != nil {
		return err
	}
	return os.WriteFile(out, table.Bytes(), 0o644)
}

// properNoun reports whether word is written with a capital in synset s:
// the name of a place, person or thing rather than a word.
func properNoun(s synset, word string) bool {
	for _, w := range s.words {
		if strings.ToLower(w) == word && w != word {
			return true
		}
	}
	return false
}

// plainWord reports whether w is a single word of three or more lower-case
// ASCII letters.
func plainWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

type first struct {
	word   string
	offset int64
}

// firstSenses reads an index.POS file: each plain word and the offset of its
// first sense.
func firstSenses(path string) ([]first, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []first
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") {
			continue // licence header
		}
		fl := strings.Fields(line)
		if len(fl) < 6 || !plainWord(fl[0]) {
			continue
		}
		// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offsets...
		pcnt, err := strconv.Atoi(fl[3])
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, line, err)
		}
		i := 4 + pcnt + 2
		if i >= len(fl) {
			return nil, fmt.Errorf("%s: short line %q", path, line)
		}
		off, err := strconv.ParseInt(fl[i], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, line, err)
		}
		out = append(out, first{fl[0], off})
	}
	return out, sc.Err()
}

// readSynset reads the synset at byte offset off of a data.POS file.
func readSynset(f *os.File, off int64) (synset, error) {
	buf := make([]byte, 16384)
	n, err := f.ReadAt(buf, off)
	if n == 0 {
		return synset{}, err
	}
	line := string(buf[:n])
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fl := strings.Fields(line)
	// offset lex_filenum ss_type w_cnt(hex) word lex_id ... p_cnt ptrs...
	if len(fl) < 4 {
		return synset{}, fmt.Errorf("offset %d: short line", off)
	}
	wcnt, err := strconv.ParseInt(fl[3], 16, 32)
	if err != nil {
		return synset{}, fmt.Errorf("offset %d: %w", off, err)
	}
	var s synset
	i := 4
	for k := 0; k < int(wcnt); k++ {
		w := fl[i]
		if j := strings.IndexByte(w, '('); j >= 0 {
			w = w[:j] // adjective markers such as (p)
		}
		s.words = append(s.words, w)
		i += 2
	}
	pcnt, err := strconv.Atoi(fl[i])
	if err != nil {
		return synset{}, fmt.Errorf("offset %d: %w", off, err)
	}
	i++
	for k := 0; k < pcnt; k++ {
		o, err := strconv.ParseInt(fl[i+1], 10, 64)
		if err != nil {
			return synset{}, fmt.Errorf("offset %d: %w", off, err)
		}
		pos := fl[i+2][0]
		if pos == 's' {
			pos = 'a'
		}
		src, err := strconv.ParseInt(fl[i+3][:2], 16, 32)
		if err != nil {
			return synset{}, fmt.Errorf("offset %d: %w", off, err)
		}
		s.ptrs = append(s.ptrs, pointer{sym: fl[i], offset: o, pos: pos, src: int(src)})
		i += 4
	}
	return s, nil
}
