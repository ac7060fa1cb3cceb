package cedict

import (
	"slices"
	"strings"
	"testing"
)

func TestGloss(t *testing.T) {
	for word, want := range map[string]string{
		"新闻": "news", // simplified
		"新聞": "news", // traditional
		"搜索": "search",
		"天气": "weather",
	} {
		if g := Gloss(word); !slices.Contains(strings.Fields(g), want) {
			t.Errorf("Gloss(%s) = %q, want it to hold %q", word, g, want)
		}
	}
	for _, word := range []string{"", "news", "ニュース", "新闻新闻新闻"} {
		if g := Gloss(word); g != "" {
			t.Errorf("Gloss(%q) = %q, want none", word, g)
		}
	}
}

func TestSegmentLongestMatch(t *testing.T) {
	var got []string
	Segment("获取微博热搜榜", func(word, gloss string) {
		if gloss == "" || gloss != Gloss(word) {
			t.Errorf("Segment gave %s with gloss %q, Gloss says %q", word, gloss, Gloss(word))
		}
		got = append(got, word)
	})
	if want := []string{"获取", "微博", "热搜", "榜"}; !slices.Equal(got, want) {
		t.Errorf("Segment(获取微博热搜榜) = %q, want %q", got, want)
	}
	// Characters that start no word are skipped, whatever they are.
	got = got[:0]
	Segment("ニ新闻ス", func(word, _ string) { got = append(got, word) })
	if want := []string{"新闻"}; !slices.Equal(got, want) {
		t.Errorf("Segment(ニ新闻ス) = %q, want %q", got, want)
	}
	Segment("", func(word, _ string) { t.Errorf("Segment(\"\") gave %q", word) })
}

// TestTableSorted guards the binary search: the embedded table must be
// lines "headword\tgloss\n", sorted by headword, with no repeated headword
// and no empty gloss, ending with a newline; each gloss is the words
// themselves or a reference (see TestSharedGlosses).
func TestTableSorted(t *testing.T) {
	if !strings.HasSuffix(data, "\n") {
		t.Fatal("table does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	if len(lines) < 100000 {
		t.Fatalf("table has %d headwords, want the whole dictionary", len(lines))
	}
	prev := ""
	for i, line := range lines {
		h, g, ok := strings.Cut(line, "\t")
		if !ok || h == "" || g == "" || strings.Contains(g, "\t") {
			t.Fatalf("line %d %q is not headword<TAB>gloss", i+1, line)
		}
		if h <= prev {
			t.Fatalf("headword %d %q after %q: not sorted", i+1, h, prev)
		}
		if !isRef(g) && !glossWords(g) {
			t.Fatalf("line %d %q: the gloss is neither words [a-z0-9] between single spaces nor a reference", i+1, line)
		}
		prev = h
	}
}

// glossWords says whether g is words of [a-z0-9] separated by single spaces.
func glossWords(g string) bool {
	for w := range strings.SplitSeq(g, " ") {
		if w == "" || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
			return false
		}
	}
	return true
}

// TestSharedGlosses: every reference of the table is refLen digits naming
// the start of a line of the shared glosses, each shared line is a gloss,
// sorted and distinct, and is named by two headwords at least (else it
// would be written in place).
func TestSharedGlosses(t *testing.T) {
	if !strings.HasSuffix(shared, "\n") {
		t.Fatal("shared glosses do not end with a newline")
	}
	uses := map[int]int{} // line start -> references
	prev := ""
	sharedLine := func(o int) string { return shared[o : o+strings.IndexByte(shared[o:], '\n')] }
	for o := 0; o < len(shared); o += len(sharedLine(o)) + 1 {
		g := sharedLine(o)
		if !glossWords(g) {
			t.Fatalf("shared line at %d %q is not a gloss", o, g)
		}
		if g <= prev {
			t.Fatalf("shared line at %d %q after %q: not sorted", o, g, prev)
		}
		prev = g
		uses[o] = 0
	}
	refs := 0
	for line := range strings.SplitSeq(strings.TrimSuffix(data, "\n"), "\n") {
		h, g, _ := strings.Cut(line, "\t")
		if !isRef(g) {
			continue
		}
		refs++
		if len(g) != refLen || strings.Trim(g, refDigits) != "" {
			t.Fatalf("headword %s: reference %q is not %d digits of %q", h, g, refLen, refDigits)
		}
		o := 0
		for i := range refLen {
			o = o<<6 | strings.IndexByte(refDigits, g[i])
		}
		n, ok := uses[o]
		if !ok {
			t.Fatalf("headword %s: reference %q names offset %d, not the start of a shared line", h, g, o)
		}
		uses[o] = n + 1
		if want := sharedLine(o); Gloss(h) != want {
			t.Fatalf("Gloss(%s) = %q, want the shared line %q", h, Gloss(h), want)
		}
	}
	for o, n := range uses {
		if n < 2 {
			t.Errorf("shared line at %d %q is named by %d headwords, want 2 or more", o, sharedLine(o), n)
		}
	}
	if refs == 0 || len(uses) == 0 {
		t.Fatalf("%d references to %d shared glosses, want the table to share its glosses", refs, len(uses))
	}
}

// refDigits are the 64 digits of a reference, in order.
const refDigits = "?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"

// TestKnownGlosses: known words, with their glosses written in place
// (新闻, 一言一行) and through a reference (11区, 一言不发, 一触即溃).
func TestKnownGlosses(t *testing.T) {
	if len(refDigits) != 64 || refDigits[0] != refZero {
		t.Fatalf("refDigits has %d digits from %q", len(refDigits), refDigits[0])
	}
	for word, want := range map[string]string{
		"11区":  "japan",
		"11區":  "japan",
		"新闻":   "news",
		"新聞":   "news",
		"一言不发": "to not say a word",
		"一言不發": "to not say a word",
		"一言一行": "every word and action",
		"一触即溃": "to collapse on the first encounter give way at once",
	} {
		if g := Gloss(word); g != want {
			t.Errorf("Gloss(%s) = %q, want %q", word, g, want)
		}
	}
}

func BenchmarkSegment(b *testing.B) {
	text := "获取微博热搜榜包含时事热点社会现象娱乐新闻明星动态及网络热议话题的实时热门中文资讯"
	b.ReportAllocs()
	for b.Loop() {
		Segment(text, func(string, string) {})
	}
}

// FuzzSegment: whatever the text, Segment emits dictionary words of it, in
// order and without overlap, each with its own gloss.
func FuzzSegment(f *testing.F) {
	for _, s := range []string{"获取微博热搜榜", "新聞ニュース뉴스", "", "a中b", "\xff\xfe中文", "一二三四五六七八九十百千万亿"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		at := 0
		Segment(text, func(word, gloss string) {
			i := strings.Index(text[at:], word)
			if i < 0 {
				t.Fatalf("Segment(%q) gave %q, not found after offset %d", text, word, at)
			}
			at += i + len(word)
			if gloss == "" || gloss != Gloss(word) {
				t.Fatalf("Segment(%q) gave %q with gloss %q, Gloss says %q", text, word, gloss, Gloss(word))
			}
		})
	})
}
