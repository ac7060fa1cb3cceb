package rank

import (
	"hash/maphash"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/kljensen/snowball/english"

	"github.com/toolselect/toolselect/rank/internal/cedict"
)

// The analyser turns text into index terms. It is shared by the index and the
// query side so both agree byte for byte:
//
//   - words are split on anything that is not a letter or digit (so "_ . - /"
//     and spaces all separate), and on camelCase and letter/digit boundaries
//     ("getHTTPResponse2" -> get http response 2);
//   - words are lower-cased, English stopwords are dropped, and the rest is
//     stemmed with the Snowball English stemmer (stems are cached);
//   - runs of CJK characters (Han, Hiragana, Katakana, Hangul), which carry no
//     spaces, become overlapping character bigrams ("搜索关键" -> 搜索 索关 关键),
//     the usual choice of CJK full-text engines;
//   - runs holding Chinese characters are also split into dictionary words
//     (longest match first) and each word adds its English gloss words, from
//     CC-CEDICT (package rank/internal/cedict): a tool described in Chinese
//     is found by an English query, and a Chinese query finds English tools.

// stopwords is a small English list: function words that carry no topic.
var stopwords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does doing
		for from had has have having he her here hers him his how i if in into is it its itself
		me my myself no nor not of off on once only or other our ours out over own same she should
		so some such than that the their theirs them then there these they this those through to
		too under until up very was we were what when where which while who whom why will with would
		you your yours yourself please also just about any each few more most both all again further
		whether via using use used e g eg ie etc s t`) {
		m[w] = struct{}{}
	}
	return m
}()

// stemCache maps a lower-cased word to its stem, or to "" for a stopword.
// Words repeat heavily across tool catalogs and queries; a hit costs one map
// read and no allocation. It is split into shards by the word's hash: the
// index build's workers meet thousands of new words at once, and with one
// lock their inserts queued behind each other (a cold 10k build took 30 ms
// longer on two cores than one whose stems were already cached).
var stemCache [stemShards]struct {
	sync.RWMutex
	m map[string]string
	_ [64]byte // keep neighbouring shards' locks off one cache line
}

const stemShards = 64

var stemSeed = maphash.MakeSeed()

// maxStemCache bounds the cache; past it, stems are computed without caching.
const maxStemCache = 1 << 18

// termOf returns the index term of a lower-cased word: "" for a stopword,
// else its stem.
func termOf(w []byte) string {
	sh := &stemCache[maphash.Bytes(stemSeed, w)%stemShards]
	sh.RLock()
	t, ok := sh.m[string(w)]
	sh.RUnlock()
	if ok {
		return t
	}
	word := string(w)
	if _, stop := stopwords[word]; stop {
		t = ""
	} else {
		t = word
		if len(word) > 2 && isASCIIAlpha(word) {
			t = english.Stem(word, false)
		}
	}
	sh.Lock()
	if sh.m == nil {
		sh.m = map[string]string{}
	}
	if len(sh.m) < maxStemCache/stemShards {
		sh.m[word] = t
	}
	sh.Unlock()
	return t
}

func isASCIIAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// tokenizer splits text into words. Its buffers are reused from call to call,
// so a tokenizer kept across a whole index build allocates nothing per word.
type tokenizer struct {
	buf  []byte
	cjk  []rune
	pair []byte
	han  []byte // the current CJK run as UTF-8, for the dictionary

	// glosses caches the gloss words of Chinese runs (space-separated) when
	// non-nil: catalogs repeat their Chinese phrases from tool to tool.
	glosses map[string]string
}

// maxGlossCache bounds a tokenizer's gloss cache.
const maxGlossCache = 1 << 14

// words splits text into raw lower-cased words (no stopword removal, no
// stemming), calling emit for each; w is only valid during the call. CJK runs
// are emitted as bigrams.
func words(text string, emit func(w []byte)) {
	var tk tokenizer
	tk.words(text, emit)
}

func (tk *tokenizer) flushCJK(emit func(w []byte)) {
	cjk := tk.cjk
	switch len(cjk) {
	case 0:
	case 1:
		tk.pair = utf8.AppendRune(tk.pair[:0], cjk[0])
		emit(tk.pair)
	default:
		for i := 0; i+1 < len(cjk); i++ {
			tk.pair = utf8.AppendRune(utf8.AppendRune(tk.pair[:0], cjk[i]), cjk[i+1])
			emit(tk.pair)
		}
	}
	tk.glossHan(emit)
	tk.cjk = cjk[:0]
}

// glossHan emits the English gloss words of the Chinese words in the current
// CJK run, if it holds any Chinese character.
func (tk *tokenizer) glossHan(emit func(w []byte)) {
	han := false
	for _, r := range tk.cjk {
		if unicode.Is(unicode.Han, r) {
			han = true
			break
		}
	}
	if !han {
		return
	}
	tk.han = tk.han[:0]
	for _, r := range tk.cjk {
		tk.han = utf8.AppendRune(tk.han, r)
	}
	if tk.glosses == nil {
		tk.segment(func(g string) { tk.emitWords(g, emit) })
		return
	}
	gloss, ok := tk.glosses[string(tk.han)]
	if !ok {
		var sb strings.Builder
		tk.segment(func(g string) {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(g)
		})
		gloss = sb.String()
		if len(tk.glosses) < maxGlossCache {
			tk.glosses[string(tk.han)] = gloss
		}
	}
	tk.emitWords(gloss, emit)
}

// segment calls f with the gloss of each dictionary word of tk.han.
func (tk *tokenizer) segment(f func(gloss string)) {
	// The run is only read during Segment, and tk.han is not touched until
	// Segment returns.
	cedict.Segment(unsafe.String(unsafe.SliceData(tk.han), len(tk.han)), func(_, gloss string) { f(gloss) })
}

// emitWords emits the space-separated words of s.
func (tk *tokenizer) emitWords(s string, emit func(w []byte)) {
	for len(s) > 0 {
		w := s
		if sp := strings.IndexByte(s, ' '); sp >= 0 {
			w, s = s[:sp], s[sp+1:]
		} else {
			s = ""
		}
		tk.pair = append(tk.pair[:0], w...)
		emit(tk.pair)
	}
}

func (tk *tokenizer) flush(emit func(w []byte)) {
	if len(tk.buf) > 0 {
		emit(tk.buf)
		tk.buf = tk.buf[:0]
	}
}

func (tk *tokenizer) words(text string, emit func(w []byte)) {
	tk.buf = tk.buf[:0]
	tk.cjk = tk.cjk[:0]
	var prev rune // previous rune inside the current word, 0 at a word start
	var prevPrev rune
	blobCheck := 0 // text before this offset has been checked for blobs
	for i := 0; i < len(text); {
		if i >= blobCheck && isBlobByte(text[i]) {
			end := blobEnd(text, i)
			if isBlob(text[i:end]) {
				tk.flush(emit)
				tk.flushCJK(emit)
				prev, prevPrev = 0, 0
				i = end
				continue
			}
			blobCheck = end
		}
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		if r < utf8.RuneSelf {
			c := byte(r)
			if !isASCIIAlnum(c) {
				tk.flush(emit)
				tk.flushCJK(emit)
				prev, prevPrev = 0, 0
				continue
			}
			if len(tk.cjk) > 0 {
				tk.flushCJK(emit)
			}
			// ASCII fast path.
			if prev != 0 {
				switch {
				case c >= 'A' && c <= 'Z' && prev >= 'a' && prev <= 'z':
					tk.flush(emit) // fooBar
				case c >= 'a' && c <= 'z' && prev >= 'A' && prev <= 'Z' && unicode.IsUpper(prevPrev):
					tk.splitBeforeLast(emit) // HTTPResponse
				case (c >= '0' && c <= '9') != (prev >= '0' && prev <= '9') && prev < utf8.RuneSelf:
					tk.flush(emit) // sha256, v2beta
				default:
					if prev >= utf8.RuneSelf {
						tk.splitRune(r, prev, prevPrev, emit)
					}
				}
			}
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			tk.buf = append(tk.buf, c)
			prevPrev, prev = prev, r
			continue
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			tk.flush(emit)
			tk.flushCJK(emit)
			prev, prevPrev = 0, 0
			continue
		}
		if isCJK(r) {
			tk.flush(emit)
			tk.cjk = append(tk.cjk, r)
			prev, prevPrev = 0, 0
			continue
		}
		if len(tk.cjk) > 0 {
			tk.flushCJK(emit)
		}
		if prev != 0 {
			tk.splitRune(r, prev, prevPrev, emit)
		}
		tk.buf = utf8.AppendRune(tk.buf, unicode.ToLower(r))
		prevPrev, prev = prev, r
	}
	tk.flush(emit)
	tk.flushCJK(emit)
}

// splitRune applies the word-boundary rules between prev and r.
func (tk *tokenizer) splitRune(r, prev, prevPrev rune, emit func(w []byte)) {
	switch {
	case unicode.IsUpper(r) && unicode.IsLower(prev):
		tk.flush(emit) // fooBar
	case unicode.IsLower(r) && unicode.IsUpper(prev) && unicode.IsUpper(prevPrev):
		tk.splitBeforeLast(emit)
	case unicode.IsDigit(r) != unicode.IsDigit(prev):
		tk.flush(emit) // sha256, v2beta
	}
}

// splitBeforeLast emits the word without its last letter, which starts the
// next word ("HTTPResponse": the split goes before the last upper-case letter).
func (tk *tokenizer) splitBeforeLast(emit func(w []byte)) {
	buf := tk.buf
	_, n := utf8.DecodeLastRune(buf)
	cut := len(buf) - n
	if cut <= 0 {
		return
	}
	var last [utf8.UTFMax]byte
	m := copy(last[:], buf[cut:])
	tk.buf = buf[:cut]
	tk.flush(emit)
	tk.buf = append(tk.buf, last[:m]...)
}

// Blobs. Inputs often carry encoded data: base64 images and data URIs, hex
// digests, tokens. Split at case and digit changes, such a run becomes
// hundreds of random short words that match random tool words and drown the
// real ones, so a long run of the base64 alphabet that changes case or
// between letters and digits very often is skipped whole. Identifiers, even
// long camelCase ones, change case every few letters at most.
const minBlob = 48

func isBlobByte(c byte) bool {
	return isASCIIAlnum(c) || c == '+' || c == '/' || c == '='
}

// blobEnd returns the end of the run of blob bytes starting at i.
func blobEnd(text string, i int) int {
	for i < len(text) && isBlobByte(text[i]) {
		i++
	}
	return i
}

// isBlob reports whether a run of blob bytes is encoded data: long, and
// changing character class (lower, upper, digit) at least every third byte
// on average.
func isBlob(run string) bool {
	if len(run) < minBlob {
		return false
	}
	changes := 0
	prev := byte(0)
	for i := 0; i < len(run); i++ {
		c := run[i]
		var class byte
		switch {
		case c >= 'a' && c <= 'z':
			class = 1
		case c >= 'A' && c <= 'Z':
			class = 2
		case c >= '0' && c <= '9':
			class = 3
		default:
			class = 4
		}
		if prev != 0 && class != prev {
			changes++
		}
		prev = class
	}
	return changes*3 >= len(run)
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// analyze emits the index terms of text: words without stopwords, stemmed.
func analyze(text string, emit func(term string)) {
	words(text, func(w []byte) {
		if t := termOf(w); t != "" {
			emit(t)
		}
	})
}

// indexTerms returns the index terms of text, in order, with repeats: what the
// bm25 and keyword scorers match on.
func indexTerms(text string) []string {
	var out []string
	analyze(text, func(t string) { out = append(out, t) })
	return out
}
