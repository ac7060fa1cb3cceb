// Package modeltest is a fake model for tests and quick starts, in the
// spirit of net/http/httptest: an OpenAI-compatible chat completions server
// on the loopback interface ([NewServer]) that answers scripted replies
// ([Reply], [Call]) and records the requests it got ([Server.Requests]).
//
//	func main() {
//		fake := modeltest.NewServer(modeltest.Reply{Calls: []modeltest.Call{
//			{Tool: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
//		}})
//		defer fake.Close()
//		reg := registry.New(nil)
//		_ = reg.Register(registry.NewTool("get_weather", "Current weather for a city.",
//			json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)))
//		cfg := selector.Config{Settings: selector.Settings{BaseURL: fake.URL}}
//		client, _ := selector.NewOpenAIClient(&cfg, nil)
//		sel, _ := selector.New(client, &cfg)
//		calls, err := sel.SelectToolCalls(context.Background(), selector.Request{
//			Registry: reg, Task: selector.Task{Description: "What is the weather in Paris?"},
//		})
//		fmt.Println(calls[0].Tool, string(calls[0].Args), err) // get_weather {"city":"Paris"} <nil>
//		fmt.Println(fake.Requests()[0].Messages[0].Content)    // the system prompt the selector sent
//	}
//
// Each request takes the next reply in order; after the last, the last one
// is repeated; with none, every answer is a selection of no calls. A reply's
// calls are sent the way the request asked for them: as native tool_calls
// when the request offered tools, otherwise as toolselect's JSON contract
// ({"calls":[...]}) in the message content. Each request's Tools are the
// names of the tools it offered in either mode: the native "tools", or
// the tools the JSON mode's system prompt lists.
package modeltest
