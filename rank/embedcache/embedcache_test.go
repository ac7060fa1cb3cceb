package embedcache

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/toolselect/toolselect/internal/testing/redistest"
)

func checkCache(t *testing.T, c interface {
	Get(context.Context, []string) ([][]float32, error)
	Set(context.Context, map[string][]float32) error
}) {
	t.Helper()
	ctx := context.Background()
	if err := c.Set(ctx, map[string][]float32{"aa11": {1, 2.5, -3}, "bb22": {0.25}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, []string{"aa11", "cc33", "bb22"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got[0], []float32{1, 2.5, -3}) || got[1] != nil || !slices.Equal(got[2], []float32{0.25}) {
		t.Errorf("got %v", got)
	}
}

func TestFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet") // created on the first write
	c := &File{Dir: dir}
	checkCache(t, c)
	// Survives a restart; no temporary files are left behind.
	c2 := &File{Dir: dir}
	got, _ := c2.Get(context.Background(), []string{"aa11"})
	if len(got[0]) != 3 {
		t.Errorf("after reopen: %v", got)
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, "*", ".tmp-*"))
	if len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
	if _, err := c.Get(context.Background(), []string{"../x"}); err == nil {
		t.Error("path traversal key accepted")
	}
}

func TestRedis(t *testing.T) {
	addr := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	c := &Redis{Client: client}
	c.TTL = time.Hour
	checkCache(t, c)
	ttl, err := client.TTL(context.Background(), defaultPrefix+"aa11").Result()
	if err != nil || ttl <= 0 {
		t.Errorf("TTL %v, %v", ttl, err)
	}
}

// The zero File caches in the user cache directory.
func TestFileDefaultDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	c := &File{}
	if err := c.Set(context.Background(), map[string][]float32{"cd34": {1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, "toolselect", "embeddings", "cd", "cd34.f32")); err != nil {
		t.Fatal(err)
	}
}
