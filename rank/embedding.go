package rank

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/toolselect/toolselect/registry"
)

// Embedder turns texts into vectors.
type Embedder interface {
	// Model names the embedding model; it is part of every cache key.
	Model() string
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// VectorCache stores tool vectors under opaque string keys (a hash of the
// model and the tool text).
type VectorCache interface {
	// Get returns one vector per key, nil where the key is missing.
	Get(ctx context.Context, keys []string) ([][]float32, error)
	// Set stores vectors by key.
	Set(ctx context.Context, items map[string][]float32) error
}

// cacheKey is the cache key of a text's vector under a model: a SHA-256 of
// both, so a changed description or a different model never reuses a vector.
func cacheKey(model, text string) string {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil))
}

// toolText is the text a tool is embedded as: its name with separators
// turned to spaces, its description, and its parameters' names and
// descriptions.
func toolText(e *registry.Entry) string {
	t := e.Def()
	var sb strings.Builder
	words(t.Name, func(w []byte) { sb.Write(w); sb.WriteByte(' ') })
	sb.WriteString("\n")
	sb.WriteString(t.Description)
	if t.HasSchema() {
		first := true
		add := func(s []byte) {
			if first {
				sb.WriteString("\nparameters:")
				first = false
			}
			sb.WriteByte(' ')
			sb.Write(s)
		}
		var dec []byte
		schemaText(t.Parameters, &dec, add, add)
	}
	return sb.String()
}

// OpenAIEmbedder calls any OpenAI-compatible embeddings endpoint (OpenAI,
// Ollama, vLLM, llama.cpp, ...) through go-openai:
//
//	emb := &rank.OpenAIEmbedder{BaseURL: "http://localhost:11434/v1", Name: "nomic-embed-text"}
type OpenAIEmbedder struct {
	// Name is the model.
	Name string
	// BaseURL is the endpoint; empty means the OpenAI API.
	BaseURL string
	// APIKey authenticates to the endpoint; it may be empty (e.g. Ollama).
	APIKey string
	// Dimensions asks models that support it for shorter vectors (0: default).
	Dimensions int
	// Client, when set, is used instead of one built from BaseURL and APIKey.
	Client *openai.Client

	once   sync.Once
	client *openai.Client
}

// api returns the client: Client, or the one built from BaseURL and APIKey.
func (o *OpenAIEmbedder) api() *openai.Client {
	o.once.Do(func() {
		o.client = o.Client
		if o.client == nil {
			cfg := openai.DefaultConfig(o.APIKey)
			if o.BaseURL != "" {
				cfg.BaseURL = o.BaseURL
			}
			o.client = openai.NewClientWithConfig(cfg)
		}
	})
	return o.client
}

// Model implements Embedder.
func (o *OpenAIEmbedder) Model() string { return o.Name }

// Embed implements Embedder.
func (o *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	resp, err := o.api().CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{
		Input: texts, Model: openai.EmbeddingModel(o.Name), Dimensions: o.Dimensions,
	})
	if err != nil {
		return nil, fmt.Errorf("embeddings (model %s): %w", o.Name, err)
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) {
			return nil, fmt.Errorf("embeddings (model %s): response index %d out of range", o.Name, d.Index)
		}
		out[d.Index] = d.Embedding
	}
	for i, v := range out {
		if len(v) == 0 {
			return nil, fmt.Errorf("embeddings (model %s): no vector for input %d", o.Name, i)
		}
	}
	return out, nil
}

// Embedding scores tools by cosine similarity between the query's vector and
// each tool's vector (toolText). Tool vectors are computed once per tool text
// and model, kept in the Cache, and reused across catalog versions.
type Embedding struct {
	Embedder Embedder
	// Cache keeps tool vectors across runs; nil keeps them in memory only.
	// &embedcache.File{Dir: dir} and &embedcache.Redis{Client: c} provide the file and Redis
	// caches.
	Cache VectorCache
	// BatchSize bounds texts per embeddings request (default 64).
	BatchSize int
}

// Name implements Scorer.
func (s *Embedding) Name() string { return "embedding" }

type embedState struct {
	vecs    [][]float32 // by catalog position, unit length
	byEntry map[*registry.Entry][]float32
}

// vectors returns the unit vectors of c's tools, by position.
func (s *Embedding) vectors(ctx context.Context, c *Catalog) (*embedState, error) {
	if s.Embedder == nil {
		return nil, errors.New("embedding scorer has no Embedder")
	}
	v, err := c.State("embedding:"+s.Embedder.Model(), func(prev any) (any, error) {
		st := &embedState{vecs: make([][]float32, len(c.entries)), byEntry: make(map[*registry.Entry][]float32, len(c.entries))}
		old, _ := prev.(*embedState)
		var missPos []int
		var missKeys, missTexts []string
		for i, e := range c.entries {
			if old != nil {
				if vec, ok := old.byEntry[e]; ok {
					st.vecs[i] = vec
					continue
				}
			}
			text := toolText(e)
			missPos = append(missPos, i)
			missTexts = append(missTexts, text)
			missKeys = append(missKeys, cacheKey(s.Embedder.Model(), text))
		}
		var cached [][]float32
		if s.Cache != nil && len(missKeys) > 0 {
			var err error
			if cached, err = s.Cache.Get(ctx, missKeys); err != nil {
				return nil, fmt.Errorf("vector cache: %w", err)
			}
		}
		var todo []int // indexes into miss*
		for j := range missPos {
			if cached != nil && len(cached[j]) > 0 {
				st.vecs[missPos[j]] = normalize(cached[j])
			} else {
				todo = append(todo, j)
			}
		}
		batch := s.BatchSize
		if batch <= 0 {
			batch = 64
		}
		for start := 0; start < len(todo); start += batch {
			part := todo[start:min(start+batch, len(todo))]
			texts := make([]string, len(part))
			for i, j := range part {
				texts[i] = missTexts[j]
			}
			vecs, err := s.Embedder.Embed(ctx, texts)
			if err != nil {
				return nil, err
			}
			if len(vecs) != len(part) {
				return nil, fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(part))
			}
			store := make(map[string][]float32, len(part))
			for i, j := range part {
				st.vecs[missPos[j]] = normalize(vecs[i])
				store[missKeys[j]] = vecs[i]
			}
			if s.Cache != nil {
				if err := s.Cache.Set(ctx, store); err != nil {
					return nil, fmt.Errorf("vector cache: %w", err)
				}
			}
		}
		for i, e := range c.entries {
			st.byEntry[e] = st.vecs[i]
		}
		return st, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*embedState), nil
}

// Score implements Scorer. Scores are cosine similarities clipped to 0..1.
func (s *Embedding) Score(ctx context.Context, c *Catalog, q *Query, k int, keep func(pos int) bool) ([]Hit, error) {
	st, err := s.vectors(ctx, c)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(q.Text) == "" || k <= 0 {
		return nil, nil
	}
	qv, err := s.Embedder.Embed(ctx, []string{q.Text})
	if err != nil {
		return nil, err
	}
	if len(qv) != 1 {
		return nil, fmt.Errorf("embedder returned %d vectors for 1 text", len(qv))
	}
	u := normalize(qv[0])
	h := topK{k: k}
	for pos, v := range st.vecs {
		if len(v) != len(u) {
			continue
		}
		sim := float32(0)
		for i := range v {
			sim += v[i] * u[i]
		}
		if sim <= 0 || !h.wants(sim, pos) || (keep != nil && !keep(pos)) {
			continue
		}
		h.push(sim, pos, 0)
	}
	items := h.sorted()
	hits := make([]Hit, len(items))
	for i, it := range items {
		hits[i] = Hit{Pos: it.pos, Score: clamp01(float64(it.score))}
		if q.Debug {
			hits[i].Components = map[string]float64{"cosine": float64(it.score)}
		}
	}
	return hits, nil
}

func normalize(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// Hybrid fuses bm25 with embeddings by reciprocal rank fusion: each tool
// scores sum(w / (K + rank)) over the two lists, normalised so a tool ranked
// first by both scores 1.
type Hybrid struct {
	BM25      *BM25      // nil: default parameters
	Embedding *Embedding // required
	// K is the RRF constant (default 60).
	K int
	// LexicalWeight weighs the bm25 list against the embedding list (default
	// 1, i.e. equal; 0.5 halves bm25's say).
	LexicalWeight float64
	// Depth is how many tools each scorer contributes (default max(5k, 50)).
	Depth int
}

// Name implements Scorer.
func (h *Hybrid) Name() string { return "hybrid" }

// lexical is the bm25 half of the hybrid.
func (h *Hybrid) lexical() *BM25 {
	if h.BM25 == nil {
		return defaultScorer
	}
	return h.BM25
}

// prepare builds the bm25 half's index ([Ranker.Prepare]); the embeddings are
// fetched on the first query, which may go to a remote service.
func (h *Hybrid) prepare(c *Catalog) error { return h.lexical().prepare(c) }

// Score implements Scorer.
func (h *Hybrid) Score(ctx context.Context, c *Catalog, q *Query, k int, keep func(pos int) bool) ([]Hit, error) {
	if h.Embedding == nil {
		return nil, errors.New("hybrid scorer has no Embedding scorer")
	}
	lex := h.lexical()
	rk := float64(h.K)
	if rk <= 0 {
		rk = 60
	}
	wl := h.LexicalWeight
	if wl <= 0 {
		wl = 1
	}
	depth := h.Depth
	if depth <= 0 {
		depth = max(5*k, 50)
	}
	a, err := lex.Score(ctx, c, q, depth, keep)
	if err != nil {
		return nil, err
	}
	b, err := h.Embedding.Score(ctx, c, q, depth, keep)
	if err != nil {
		return nil, err
	}
	fused := map[int]*Hit{}
	add := func(list []Hit, w float64, name string) {
		for r, hit := range list {
			f, ok := fused[hit.Pos]
			if !ok {
				f = &Hit{Pos: hit.Pos, Components: map[string]float64{}}
				fused[hit.Pos] = f
			}
			f.Score += w / (rk + float64(r+1))
			f.Matched = append(f.Matched, hit.Matched...)
			f.Words = append(f.Words, hit.Words...) // a reason falls back to the text if some are missing
			f.Components[name] = hit.Score
			f.Components[name+"_rank"] = float64(r + 1)
		}
	}
	add(a, wl, "bm25")
	add(b, 1, "embedding")
	best := (wl + 1) / (rk + 1)
	tk := topK{k: k}
	for pos, f := range fused {
		s := float32(f.Score / best)
		if tk.wants(s, pos) {
			tk.push(s, pos, 0)
		}
	}
	items := tk.sorted()
	hits := make([]Hit, len(items))
	for i, it := range items {
		f := fused[it.pos]
		hits[i] = Hit{Pos: it.pos, Score: clamp01(float64(it.score)), Matched: f.Matched, Words: f.Words}
		if q.Debug {
			hits[i].Components = f.Components
		}
	}
	return hits, nil
}
