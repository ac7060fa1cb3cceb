// Package rank cuts a tool catalog down to the few tools that matter for an
// input, before any model sees the catalog.
//
// Ranking is a pure function of a catalog and an input: it never runs a tool.
// Filters (unsafe tools, roles, required capabilities) apply before scoring;
// a scorer (bm25 by default; keyword, embedding, hybrid or your own) orders
// what is left; then always-active and related tools are added. Every pick
// carries a score in 0..1, a reason and its provenance.
//
//	func main() {
//		reg := registry.New(nil)
//		city := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)
//		_ = reg.RegisterAll([]registry.Tool{
//			registry.NewTool("weather__get_forecast", "Get the weather forecast for a city.", city),
//			registry.NewTool("mail__send_email", "Send an email message.", city),
//		})
//		picks, err := rank.For(reg).Rank(context.Background(), "weather forecast for Paris?", nil)
//		if err != nil {
//			log.Fatal(err)
//		}
//		for _, p := range picks {
//			fmt.Printf("%s %.2f %s\n", p.Tool, p.Score, p.Reason) // weather__get_forecast 0.58 bm25 score ...
//		}
//	}
//
// [For] returns the registry's shared [Ranker]: it keeps one index per
// registry and updates it as tools are registered.
//
// # Start here
//
//   - [For] returns a registry's [Ranker]; [Ranker.Rank] ranks it for an
//     input, tuned by [Options] (nil: the defaults).
//   - Scorers: bm25 (default), keyword, embedding ([OpenAIEmbedder]),
//     hybrid, or your own [Scorer].
//   - [NewFeedback] learns from past selections ([Feedback.Add],
//     [Feedback.Replay]); rankings with feedback are a pure function of the
//     catalog, the log and the query.
//   - [Offering] is the selector's offer (token budget and ranking); it
//     implements selector.Ranker.
//   - [Evaluate] measures recall and NDCG on labelled queries.
package rank
