// Package embedcache holds the vector caches of the rank package's embedding
// scorer, so that a tool's vector is computed once and survives restarts.
//
//	func main() {
//		reg := registry.New(nil)
//		_ = reg.Register(registry.NewTool("get_weather", "Current weather for a city.", json.RawMessage(`{"type":"object"}`)))
//		scorer := &rank.Embedding{
//			Embedder: &rank.OpenAIEmbedder{BaseURL: "http://localhost:11434/v1", Name: "nomic-embed-text"},
//			Cache:    &embedcache.File{}, // under the user cache directory
//		}
//		picks, err := rank.For(reg).Rank(context.Background(), "will it rain?", &rank.Options{Scorer: scorer})
//		if err != nil {
//			log.Fatal(err)
//		}
//		fmt.Println(picks[0].Tool)
//	}
//
// Both caches store a vector as little-endian float32s under the key rank
// gives it (a hash of the model and the tool text), and both are literals
// set as rank.Embedding's Cache:
//
//   - [File] keeps vectors under a directory, one file per vector written
//     atomically (&embedcache.File{Dir: dir}; the zero Dir is the user cache
//     directory).
//   - [Redis] keeps them in Redis (&embedcache.Redis{Client: client}), with an
//     optional key prefix and expiry.
package embedcache
