package rank

import (
	"math"
	"sort"
)

func clamp01(x float64) float64 {
	if x < 0 || math.IsNaN(x) {
		return 0
	}
	if x > 1 {
		return 1
	}
	return x
}

// topK keeps the k best (score, position) pairs: higher score first, and on
// equal scores the earlier catalog position first.
type topK struct {
	k     int
	items []topItem // a min-heap on (score, -pos)
}

type topItem struct {
	score float32
	pos   int
	doc   uint32
}

func worse(a, b topItem) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.pos > b.pos
}

func (h *topK) wants(s float32, pos int) bool {
	return len(h.items) < h.k || worse(h.items[0], topItem{score: s, pos: pos})
}

func (h *topK) push(s float32, pos int, doc uint32) {
	it := topItem{score: s, pos: pos, doc: doc}
	if len(h.items) < h.k {
		h.items = append(h.items, it)
		h.up(len(h.items) - 1)
		return
	}
	h.items[0] = it
	h.down(0)
}

func (h *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !worse(h.items[i], h.items[p]) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *topK) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(h.items[r], h.items[l]) {
			m = r
		}
		if !worse(h.items[m], h.items[i]) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

// sorted returns the items best first.
func (h *topK) sorted() []topItem {
	out := append([]topItem(nil), h.items...)
	sort.Slice(out, func(i, j int) bool { return worse(out[j], out[i]) })
	return out
}
