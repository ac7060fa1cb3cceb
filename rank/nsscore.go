package rank

import (
	"math"
	"strings"
	"sync"
)

// The server a tool belongs to. In a catalog of namespaced tools
// (server__tool, the MCP proxy's own naming) a query often names what the
// server is for ("the weather tomorrow") while the tool it needs says only
// what it does ("get_forecast"). So bm25 scores the namespaces too, each as
// one document made of its tools' text, and a tool gains nsWeight of its
// namespace's normalised score. Only the best maxNSBoosted namespaces give
// anything (the rest give little and would cost a pass over their tools).
// Dotted module names (math.factorial) are left alone: grouping them the
// same way made rankings worse.
const (
	nsWeight     = 0.1
	maxNSBoosted = 3
)

// nsIndex is a view's namespaces: built on the first query that wants it.
type nsIndex struct {
	once sync.Once
	of   []int32    // doc id -> namespace, -1 for none
	docs [][]uint32 // namespace -> its live doc ids
	name []string   // namespace -> its name
	norm []float32  // namespace -> 1 - b + b*len/avg
	pool sync.Pool  // *nsScratch
}

type nsScratch struct {
	tf    []float32 // per namespace, for the current term
	score []float64 // per namespace, summed over terms
	seen  []int32   // namespaces touched by the current term
	all   []int32   // namespaces touched by any term
}

// namespaces returns v's namespace index, or nil when its catalog has fewer
// than two server__ namespaces.
func (v *bm25View) namespaces() *nsIndex {
	v.ns.once.Do(func() {
		ids := map[string]int32{}
		of := make([]int32, len(v.idx.docs))
		var lens []float64
		for d, e := range v.idx.docs {
			of[d] = -1
			if e == nil || v.pos[d] < 0 {
				continue
			}
			name := e.Def().Name
			i := strings.Index(name, "__")
			if i <= 0 || i+2 >= len(name) {
				continue
			}
			id, ok := ids[name[:i]]
			if !ok {
				id = int32(len(v.ns.docs))
				ids[name[:i]] = id
				v.ns.docs = append(v.ns.docs, nil)
				v.ns.name = append(v.ns.name, name[:i])
				lens = append(lens, 0)
			}
			of[d] = id
			v.ns.docs[id] = append(v.ns.docs[id], uint32(d))
			for f := range numFields {
				lens[id] += float64(v.idx.flen[d][f])
			}
		}
		if len(v.ns.docs) < 2 {
			v.ns.docs = nil
			return
		}
		v.ns.of = of
		avg := 0.0
		for _, l := range lens {
			avg += l
		}
		avg /= float64(len(lens))
		v.ns.norm = make([]float32, len(lens))
		for i, l := range lens {
			v.ns.norm[i] = float32(1 - 0.75 + 0.75*l/max(avg, 1))
		}
		n := len(lens)
		v.ns.pool.New = func() any {
			return &nsScratch{tf: make([]float32, n), score: make([]float64, n)}
		}
	})
	if v.ns.docs == nil {
		return nil
	}
	return &v.ns
}

// nsBoost is one namespace's share of a query: what each of its tools gains,
// in the units of the view's accumulators.
type nsBoost struct {
	ns    int32
	boost float32 // nsWeight * normalised score * the query's ideal
	score float64 // normalised score (0..1)
}

// scoreNamespaces scores the namespaces for qts, the query's terms (gained
// terms at their weights) and returns the best few with what their tools
// gain. ideal is the tools' ideal score, unknown the query words the catalog
// lacks.
func (v *bm25View) scoreNamespaces(ns *nsIndex, qts []queryTerm, own int, unknown int, ideal float64) []nsBoost {
	sc := ns.pool.Get().(*nsScratch)
	defer ns.pool.Put(sc)
	n := float64(len(ns.docs))
	k1 := v.params.K1
	w := v.params.Weights
	nsIdeal := 0.0
	for i, qt := range qts {
		sc.seen = sc.seen[:0]
		for _, p := range v.idx.postings[qt.id] {
			g := ns.of[p.doc]
			if g < 0 {
				continue
			}
			if sc.tf[g] == 0 {
				sc.seen = append(sc.seen, g)
			}
			sc.tf[g] += float32(float64(p.tf[0])*w[0] + float64(p.tf[1])*w[1] + float64(p.tf[2])*w[2] + float64(p.tf[3])*w[3])
		}
		df := float64(len(sc.seen))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		if i < own {
			nsIdeal += idf * qtfWeight(qt.qtf)
		}
		for _, g := range sc.seen {
			tf := float64(sc.tf[g] / ns.norm[g])
			sc.tf[g] = 0
			if sc.score[g] == 0 {
				sc.all = append(sc.all, g)
			}
			sc.score[g] += qt.weight * qtfWeight(qt.qtf) * idf * tf / (tf + k1)
		}
	}
	nsIdeal += float64(unknown) * 0.5 * math.Log(1+(n+0.5)/1.5)
	var best []nsBoost
	for _, g := range sc.all {
		s := sc.score[g]
		sc.score[g] = 0
		if nsIdeal <= 0 {
			continue
		}
		b := nsBoost{ns: g, score: clamp01(s / nsIdeal)}
		i := len(best)
		for i > 0 && (best[i-1].score < b.score || best[i-1].score == b.score && best[i-1].ns > b.ns) {
			i--
		}
		if i < maxNSBoosted {
			best = append(best, nsBoost{})
			copy(best[i+1:], best[i:])
			best[i] = b
			if len(best) > maxNSBoosted {
				best = best[:maxNSBoosted]
			}
		}
	}
	sc.all = sc.all[:0]
	for i := range best {
		best[i].boost = float32(nsWeight * best[i].score * ideal)
	}
	return best
}
