package selector

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The plain OpenAI-compatible request (the generic dialect) is byte for byte
// what toolselect sent before provider dialects existed: the golden bodies in
// testdata/wire/ were written by the code before the dialect table
// (commit 3375080) and are compared byte for byte.
func TestGenericRequestBytesUnchanged(t *testing.T) {
	for _, mode := range []Mode{ModeJSON, ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			var mu sync.Mutex
			var bodies [][]byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, b)
				mu.Unlock()
				completion(w, `{"calls":[]}`)
			}))
			defer srv.Close()
			cfg := defaultConfig()
			cfg.BaseURL, cfg.APIKey, cfg.Model, cfg.Mode = srv.URL+"/v1", "sk-golden", "local-model", mode
			client, err := NewOpenAIClient(&cfg, nil)
			require.NoError(t, err)
			s, err := newWith(client, &cfg, quiet())
			require.NoError(t, err)
			_, err = s.Select(context.Background(), testRequest(t))
			require.NoError(t, err)
			require.Len(t, bodies, 1)
			path := filepath.Join("testdata", "wire", "generic_"+string(mode)+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, bodies[0], 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), string(bodies[0]), "the generic request's bytes changed")
		})
	}
}
