// Package selecteval scores whole tool selections on the user's own catalog
// and tasks: for each candidate (a model and its settings at an endpoint),
// every task runs through the real selection path ([selector.ToolSelector.Select]:
// ranking, offer, search rounds, the model, validation, the fail-closed
// rules) and the calls returned are checked against the task's gold calls.
//
//	func main() {
//		fake := modeltest.NewServer(modeltest.Reply{Calls: []modeltest.Call{
//			{Tool: "get_weather", Args: map[string]any{"city": "Paris"}},
//		}})
//		defer fake.Close()
//		reg := registry.New(nil)
//		_ = reg.Register(registry.NewTool("get_weather", "Current weather for a city.",
//			json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)))
//		tasks, _ := selecteval.ReadTasks(strings.NewReader(
//			`{"id":"w","task":"What is the weather in Paris?","calls":[{"tool":"get_weather","args":{"city":["Paris"]}}]}`), "tasks.jsonl")
//		cand := selecteval.Candidate{Name: "small", Config: selector.Config{Settings: selector.Settings{BaseURL: fake.URL, Model: "small"}}}
//		rep, err := selecteval.Run(context.Background(), reg, tasks, []selecteval.Candidate{cand}, selecteval.Options{})
//		if err != nil {
//			panic(err)
//		}
//		s := rep.Candidates[0]
//		fmt.Println(s.Name, s.Exact, s.ToolAccuracy, s.PromptTokens) // small 1 1 100
//	}
//
// A tasks file is JSON Lines ([ReadTasks]), one task a line:
//
//	{"id": "t1", "task": "...", "sub_tasks": ["..."], "calls": [{"tool": "get_metrics", "args": {"service": ["checkout-api"], "window": ["30m", ""]}}]}
//
// Arguments follow BFCL's possible-answer form: each parameter maps to the
// list of its acceptable values, and "" in the list means the parameter may
// be omitted; a parameter the gold call does not name must not be given.
// "calls": [] means the right answer is no call. The order of the calls does
// not matter unless the task says "ordered": true. Values compare as JSON
// values (numbers by value: 1 equals 1.0; strings exactly).
//
// [Run] returns a [Score] per candidate: the share of tasks whose set of
// tools equals the gold set (ToolAccuracy), whose tools and arguments pass
// the checker (Exact) and whose selection failed (FailClosed, by kind in each
// [Result]), the calls dropped, the latency percentiles, the tokens the
// endpoint reported and, with a [Price], the cost. The command line is
// `toolselect eval --select` (docs/eval-select.md).
package selecteval
