package embedcache

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

func encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decode(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("vector of %d bytes is not a multiple of 4", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// File caches vectors as files under Dir: Dir/ab/abcdef....f32. Writes go to
// a temporary file renamed into place, so a reader never sees half a vector
// and concurrent writers of one key are harmless. Directories are created on
// the first write:
//
//	emb.Cache = &embedcache.File{Dir: dir}
type File struct {
	// Dir is the cache directory; "" means the user cache directory's
	// toolselect/embeddings (e.g. ~/.cache/toolselect/embeddings).
	Dir string
}

// dir is the cache directory in use.
func (f *File) dir() (string, error) {
	if f.Dir != "" {
		return f.Dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set File.Dir): %w", err)
	}
	return filepath.Join(base, "toolselect", "embeddings"), nil
}

func (f *File) path(key string) (string, error) {
	if len(key) < 3 || strings.ContainsAny(key, `/\.`) {
		return "", fmt.Errorf("invalid cache key %q", key)
	}
	dir, err := f.dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, key[:2], key+".f32"), nil
}

// Get implements rank.VectorCache.
func (f *File) Get(_ context.Context, keys []string) ([][]float32, error) {
	out := make([][]float32, len(keys))
	for i, k := range keys {
		p, err := f.path(k)
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if v, err := decode(b); err == nil && len(v) > 0 {
			out[i] = v
		}
	}
	return out, nil
}

// Set implements rank.VectorCache.
func (f *File) Set(_ context.Context, items map[string][]float32) error {
	for k, v := range items {
		p, err := f.path(k)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
		if err != nil {
			return err
		}
		_, werr := tmp.Write(encode(v))
		cerr := tmp.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Rename(tmp.Name(), p)
		}
		if werr != nil {
			os.Remove(tmp.Name())
			return werr
		}
	}
	return nil
}

// Redis caches vectors in Redis under Prefix+key:
//
//	emb.Cache = &embedcache.Redis{Client: redis.NewClient(opt)}
type Redis struct {
	Client redis.UniversalClient
	Prefix string        // "" means "toolselect:emb:"
	TTL    time.Duration // 0: no expiry
}

// defaultPrefix is the key prefix of a Redis cache without one.
const defaultPrefix = "toolselect:emb:"

// prefix is the key prefix in use.
func (r *Redis) prefix() string { return cmp.Or(r.Prefix, defaultPrefix) }

// Get implements rank.VectorCache.
func (r *Redis) Get(ctx context.Context, keys []string) ([][]float32, error) {
	out := make([][]float32, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = r.prefix() + k
	}
	vals, err := r.Client.MGet(ctx, full...).Result()
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if vec, err := decode([]byte(s)); err == nil && len(vec) > 0 {
			out[i] = vec
		}
	}
	return out, nil
}

// Set implements rank.VectorCache.
func (r *Redis) Set(ctx context.Context, items map[string][]float32) error {
	if len(items) == 0 {
		return nil
	}
	pipe := r.Client.Pipeline()
	for k, v := range items {
		pipe.Set(ctx, r.prefix()+k, encode(v), r.TTL)
	}
	_, err := pipe.Exec(ctx)
	return err
}
