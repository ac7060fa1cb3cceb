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
// and no empty gloss, ending with a newline.
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
		prev = h
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
