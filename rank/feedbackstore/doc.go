// Package feedbackstore keeps what ranking learns from selections: an
// append-only log of feedback records, in a JSON Lines file or a Redis list,
// and a [Learner] that replays the log into a [rank.Feedback] and appends to
// it as selections succeed (or are withdrawn).
//
//	func main() {
//		ctx := context.Background()
//		learner, err := feedbackstore.OpenLearner(ctx, "feedback.jsonl", rank.NewFeedback(nil)) // or redis://host:6379/0
//		if err != nil {
//			log.Fatal(err)
//		}
//		defer learner.Close()
//		reg := registry.New(nil)
//		_ = reg.Register(registry.NewTool("get_weather", "Current weather for a city.", json.RawMessage(`{"type":"object"}`)))
//		_ = learner.Record(ctx, "Should I take an umbrella in Lyon?", []string{"get_weather"})
//		picks, _ := rank.For(reg).Rank(ctx, "umbrella for Nantes?", &rank.Options{Feedback: learner.Feedback()})
//		fmt.Println(picks[0].Tool) // get_weather, learned from the record
//	}
//
// One record per line (a file) or list element (Redis):
//
//	{"query": "Should I take an umbrella in Lyon?", "tools": ["get_weather"]}
//	{"query": "...", "tools": ["get_weather"], "remove": true}
//
// "remove" withdraws an earlier record (an executor outcome said the
// selection was wrong). Several processes may share one store: each Learner
// reads the records the others appended with [Learner.Sync].
//
// # Start here
//
//   - [OpenLearner] opens the store a spec names (a file path, or a redis://
//     or rediss:// URL) and loads it; [Learner.Feedback] is what it learned,
//     for [rank.Options.Feedback], and the [Learner] itself is the selector's
//     feedback recorder ([Learner.Record], [Learner.Withdraw]).
//   - [Open] returns the [Store] alone; [NewLearner] puts a Learner over any
//     Store, including your own.
//   - A record that does not read is a [LineError] naming where it is;
//     errors.Is(err, [ErrMalformed]) matches it.
package feedbackstore
