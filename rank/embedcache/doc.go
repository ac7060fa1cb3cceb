// Package embedcache holds the vector caches of the rank package's embedding
// scorer: a file cache (one file per vector, written atomically, surviving
// restarts) and a Redis cache. Both store a vector as little-endian float32s
// under the key rank gives it (a hash of the model and the tool text), and
// both are literals set as rank.Embedding's Cache:
//
//   - [File] keeps vectors under a directory (&embedcache.File{Dir: dir}; the
//     zero Dir is the user cache directory).
//   - [Redis] keeps them in Redis (&embedcache.Redis{Client: client}), with an
//     optional key prefix and expiry.
package embedcache
