package rank

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolselect/toolselect/registry"
)

// fakeEmbeddings is an httptest server speaking the OpenAI embeddings wire
// format. A text's vector is a bag of hashed words, so texts sharing words
// are close. It records every input it was asked to embed.
type fakeEmbeddings struct {
	*httptest.Server
	mu     sync.Mutex
	inputs []string
}

const fakeDims = 64

func fakeVector(text string) []float32 {
	v := make([]float32, fakeDims)
	for _, w := range indexTerms(text) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%fakeDims]++
	}
	return v
}

func newFakeEmbeddings(t *testing.T) *fakeEmbeddings {
	f := &fakeEmbeddings{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.inputs = append(f.inputs, req.Input...)
		f.mu.Unlock()
		type item struct {
			Object    string    `json:"object"`
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}
		resp := struct {
			Object string `json:"object"`
			Data   []item `json:"data"`
			Model  string `json:"model"`
			Usage  any    `json:"usage"`
		}{Object: "list", Model: req.Model, Usage: map[string]int{"prompt_tokens": 1, "total_tokens": 1}}
		// Answer in reverse order: clients must use "index".
		for i := len(req.Input) - 1; i >= 0; i-- {
			resp.Data = append(resp.Data, item{"embedding", fakeVector(req.Input[i]), i})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeEmbeddings) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.inputs...)
}

func (f *fakeEmbeddings) reset() {
	f.mu.Lock()
	f.inputs = nil
	f.mu.Unlock()
}

// memCache is a VectorCache in memory, for tests.
type memCache struct {
	mu sync.Mutex
	m  map[string][]float32
}

func (c *memCache) Get(_ context.Context, keys []string) ([][]float32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([][]float32, len(keys))
	for i, k := range keys {
		out[i] = c.m[k]
	}
	return out, nil
}

func (c *memCache) Set(_ context.Context, items map[string][]float32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range items {
		c.m[k] = v
	}
	return nil
}

func TestEmbeddingScorer(t *testing.T) {
	srv := newFakeEmbeddings(t)
	reg := testRegistry(t)
	cache := &memCache{m: map[string][]float32{}}
	emb := &Embedding{Embedder: &OpenAIEmbedder{BaseURL: srv.URL + "/v1", APIKey: "test-key", Name: "fake-embed"}, Cache: cache, BatchSize: 3}
	ctx := context.Background()
	picks, err := newRanker(reg).Rank(ctx, "send an email message", &Options{Scorer: emb})
	if err != nil {
		t.Fatal(err)
	}
	if len(picks) == 0 || picks[0].Tool != "mail__send_email" || picks[0].Provenance.Scorer != "embedding" {
		t.Fatalf("picks %+v", picks)
	}
	if picks[0].Score <= 0 || picks[0].Score > 1 {
		t.Errorf("score %v", picks[0].Score)
	}
	if n := len(cache.m); n != reg.Len() {
		t.Errorf("cache holds %d vectors, want %d", n, reg.Len())
	}

	// A second ranker (a restart) embeds only the query: tool vectors come
	// from the cache.
	srv.reset()
	if _, err := newRanker(reg).Rank(ctx, "weather", &Options{Scorer: emb}); err != nil {
		t.Fatal(err)
	}
	if got := srv.calls(); len(got) != 1 || got[0] != "weather" {
		t.Errorf("after restart embedded %q, want only the query", got)
	}

	// A changed description is embedded again; nothing else is.
	srv.reset()
	if err := reg.Replace(tool("mail__send_email", "Send a postal letter.")); err != nil {
		t.Fatal(err)
	}
	if _, err := newRanker(reg).Rank(ctx, "letter", &Options{Scorer: emb}); err != nil {
		t.Fatal(err)
	}
	got := srv.calls()
	if len(got) != 2 || !strings.Contains(got[0], "postal letter") {
		t.Errorf("after a description change embedded %q", got)
	}

	// A different model never reuses the old vectors.
	srv.reset()
	emb2 := &Embedding{Embedder: &OpenAIEmbedder{BaseURL: srv.URL + "/v1", APIKey: "k", Name: "other-model"}, Cache: cache}
	if _, err := newRanker(reg).Rank(ctx, "weather", &Options{Scorer: emb2}); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.calls()); n != reg.Len()+1 {
		t.Errorf("new model embedded %d texts, want %d", n, reg.Len()+1)
	}
	if cacheKey("m", "a") == cacheKey("m", "b") || cacheKey("m1", "a") == cacheKey("m2", "a") {
		t.Error("cache keys collide")
	}
}

func TestHybridScorer(t *testing.T) {
	srv := newFakeEmbeddings(t)
	reg := testRegistry(t)
	h := &Hybrid{Embedding: &Embedding{Embedder: &OpenAIEmbedder{BaseURL: srv.URL + "/v1", APIKey: "", Name: "fake"}}}
	picks, err := For(reg).Rank(context.Background(), "weather forecast", &Options{Scorer: h, Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	if picks[0].Tool != "weather.get_forecast" || picks[0].Score != 1 {
		t.Errorf("hybrid first pick %+v", picks[0])
	}
	if _, ok := picks[0].Provenance.Components["bm25_rank"]; !ok {
		t.Errorf("components %v", picks[0].Provenance.Components)
	}
}

func TestEmbeddingErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"model not loaded"}}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	reg := testRegistry(t)
	_, err := For(reg).Rank(context.Background(), "x", &Options{Scorer: &Embedding{Embedder: &OpenAIEmbedder{BaseURL: srv.URL, APIKey: "", Name: "m"}}})
	if err == nil || !strings.Contains(err.Error(), "model not loaded") {
		t.Errorf("err = %v", err)
	}
	var _ registry.Format
}
