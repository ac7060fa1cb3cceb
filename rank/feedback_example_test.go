package rank_test

import (
	"context"
	"fmt"

	"github.com/toolselect/toolselect/rank"
)

// Feedback: a past selection teaches the ranking that a task about snow on a
// ski trip needed the forecast tool, whose description says neither word.
func ExampleFeedback() {
	reg := exampleRegistry()
	fb := rank.NewFeedback(&rank.FeedbackOptions{Known: func(name string) bool { _, ok := reg.Get(name); return ok }})
	n, err := fb.Add("will it snow during my ski trip to Chamonix next week", "weather__get_forecast", "no_such_tool")
	fmt.Println(n, err, fb.Stats().Unknown)

	picks, _ := rank.For(reg).Rank(context.Background(), "is snow expected on my ski trip?", &rank.Options{Feedback: fb})
	for _, p := range picks {
		fmt.Println(p.Tool, p.Provenance.Scorer)
	}
	// Output:
	// 1 <nil> 1
	// weather__get_forecast bm25+feedback
}

// Holds says how many of the pairs a withdrawal would match: the query as
// it was learned, exactly.
func ExampleFeedback_Holds() {
	fb := rank.NewFeedback(nil)
	_, _ = fb.Add("will it snow during my ski trip", "get_forecast", "book_hotel")
	fmt.Println(fb.Holds("will it snow during my ski trip", "get_forecast", "send_email"))
	fmt.Println(fb.Holds("will it snow on my ski trip", "get_forecast"))
	// Output:
	// 1
	// 0
}
