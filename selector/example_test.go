package selector_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/toolselect/toolselect/modeltest"
	"github.com/toolselect/toolselect/rank"
	"github.com/toolselect/toolselect/registry"
	"github.com/toolselect/toolselect/selector"
)

func exampleRegistry() *registry.Registry {
	reg := registry.New(nil)
	_ = reg.Register(registry.NewTool("get_weather", "Current weather for a city.",
		json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)))
	_ = reg.Register(registry.NewTool("send_email", "Send an email.",
		json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}},"required":["to"]}`)))
	return reg
}

// Selecting calls through the go-openai adapter; here the fake model of
// package modeltest stands in for an OpenAI-compatible endpoint (OpenAI, GLM,
// Ollama, vLLM).
func ExampleToolSelector_SelectToolCalls() {
	srv := modeltest.NewServer(modeltest.Reply{Calls: []modeltest.Call{
		{Tool: "get_weather", Args: map[string]any{"city": "Paris"}, Reasoning: "the task asks for the weather"},
		{Tool: "launch_rockets"},
	}})
	defer srv.Close()

	var cfg selector.Config
	cfg.BaseURL = srv.URL
	cfg.FailOpen = true // drop the invented tool instead of failing the attempt
	client, err := selector.NewOpenAIClient(&cfg, nil)
	if err != nil {
		panic(err)
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	sel, err := selector.New(client, &cfg)
	if err != nil {
		panic(err)
	}
	calls, err := sel.SelectToolCalls(context.Background(), selector.Request{
		Task:     selector.Task{ID: "T1", Description: "What is the weather in Paris?"},
		Registry: exampleRegistry(),
	})
	if err != nil {
		panic(err)
	}
	for _, c := range calls {
		fmt.Printf("%s %s (%s)\n", c.Tool, c.Args, c.Reasoning)
	}
	// Output:
	// get_weather {"city":"Paris"} (the task asks for the weather)
}

// scripted is a ChatClient with canned replies per model.
type scripted map[string]string

func (s scripted) Chat(_ context.Context, req selector.ChatRequest) (selector.ChatResponse, error) {
	reply, ok := s[req.Model]
	if !ok {
		return selector.ChatResponse{}, &selector.ChatError{Kind: selector.KindHTTPStatus, StatusCode: 503, Message: "HTTP 503: overloaded"}
	}
	return selector.ChatResponse{Content: reply}, nil
}

// When every attempt fails, no calls are returned and the error lists each attempt.
func ExampleSelectionError() {
	var cfg selector.Config
	cfg.Model, cfg.FallbackModel = "primary", "fallback"
	cfg.Logger = slog.New(slog.DiscardHandler)
	sel, _ := selector.New(scripted{"primary": "Sure, I'd call get_weather!"}, &cfg)
	calls, err := sel.SelectToolCalls(context.Background(), selector.Request{
		Task: selector.Task{Description: "Weather in Paris?"}, Registry: exampleRegistry(),
	})
	var se *selector.SelectionError
	if errors.As(err, &se) {
		fmt.Println(len(calls), errors.Is(err, selector.ErrFailClosed), se.Kind)
		for _, a := range se.Attempts {
			fmt.Println(a.Model, a.Kind)
		}
	}
	// Output:
	// 0 true fail_closed
	// primary parse
	// fallback http_status
}

// Driving a Session without Go I/O: the caller performs each chat (here a
// canned reply) and feeds the outcome back as JSON, as the Python package does.
func ExampleToolSelector_Begin() {
	sel, _ := selector.New(nil, &selector.Config{Logger: slog.New(slog.DiscardHandler)})
	ss, err := sel.Begin(context.Background(), selector.Request{
		Task: selector.Task{Description: "Email bob that it is sunny."}, Registry: exampleRegistry(),
	})
	if err != nil {
		panic(err)
	}
	act := ss.Next()
	for act.Kind == selector.ActionChat {
		fmt.Println("chat with", act.Chat.Model, "temperature", act.Chat.Temperature)
		act, err = ss.FeedJSON(context.Background(), []byte(`{"content":"{\"calls\":[{\"tool\":\"send_email\",\"args\":\"{\\\"to\\\":\\\"bob\\\",\\\"body\\\":\\\"sunny\\\"}\"}]}"}`))
		if err != nil {
			panic(err)
		}
	}
	fmt.Println(string(act.Result.Calls[0].Args))
	// Output:
	// chat with glm-4.5-air temperature 0
	// {"to":"bob","body":"sunny"}
}

// Reading the configuration from an explicit environment.
func ExampleConfigFromEnvMap() {
	cfg, err := selector.ConfigFromEnvMap(map[string]string{
		"LLM_COMMON_TOOL_SELECTION_MAX_CALLS":   "3",
		"LLM_COMMON_TOOL_SELECTION_FAIL_CLOSED": "off",
		"OPENAI_BASE_URL":                       "http://localhost:11434/v1",
	})
	fmt.Println(cfg.Model, cfg.MaxCalls, !cfg.FailOpen, cfg.BaseURL, err)
	_, err = selector.ConfigFromEnvMap(map[string]string{"LLM_COMMON_TOOL_SELECTION_MAX_CALLS": "50"})
	fmt.Println(err)
	// Output:
	// glm-4.5-air 3 false http://localhost:11434/v1 <nil>
	// LLM_COMMON_TOOL_SELECTION_MAX_CALLS="50" (MaxCalls) is out of range: want an integer from 1 to 20
}

// The offer budget and the search round, driven as a session: over the
// budget (one token here) the offer is the top 1 ranked for the task, the
// model searches with its own words, and the second request offers what
// those words match.
func ExampleConfig_ranker() {
	var cfg selector.Config
	cfg.OfferTokens, cfg.TopK = 1, 1
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Ranker = &rank.Offering{}
	sel, err := selector.New(nil, &cfg)
	if err != nil {
		panic(err)
	}
	ss, err := sel.Begin(context.Background(), selector.Request{
		Task: selector.Task{Description: "Should I take an umbrella to Lyon?"}, Registry: exampleRegistry()})
	if err != nil {
		panic(err)
	}
	fmt.Println("first offer:", ss.Offered())
	ss.Feed(context.Background(), selector.ChatResponse{Content: `{"calls":[],"search":"weather forecast for a city"}`}, nil)
	fmt.Println("after the search:", ss.Offered())
	act := ss.Feed(context.Background(), selector.ChatResponse{Content: `{"calls":[{"tool":"get_weather","args":{"city":"Lyon"}}]}`}, nil)
	fmt.Println(act.Result.Calls[0].Tool, act.Result.Attempts[0].Searches[0].Query)

	// Nothing eligible: no request, and a kind that says so.
	ss, _ = sel.Begin(context.Background(), selector.Request{
		Task: selector.Task{Description: "x"}, Registry: exampleRegistry(), Capabilities: []string{"teleport"}})
	fmt.Println(selector.ErrorKind(ss.Next().Err))
	// Output:
	// first offer: []
	// after the search: [get_weather]
	// get_weather weather forecast for a city
	// no_eligible_tools
}

// A call of a registered tool the request did not offer is dropped with the
// one reason that applied: here the tool is for admins and the caller is not
// one (Rule "role"); registry.RuleNotInOffer would say the offer left an eligible tool out.
func ExampleDroppedCall() {
	reg := exampleRegistry()
	admin := registry.NewTool("reset_password", "Reset a user's password.", json.RawMessage(`{"type":"object"}`))
	admin.Roles = []string{"admin"}
	_ = reg.Register(admin)
	cfg := selector.Config{Settings: selector.Settings{FailOpen: true}} // return the valid calls and report the dropped ones
	sel, _ := selector.New(scripted{selector.DefaultModel: `{"calls":[{"tool":"reset_password","args":{}}]}`}, &cfg)
	res, err := sel.Select(context.Background(), selector.Request{
		Task: selector.Task{Description: "Reset bob's password"}, Registry: reg,
	})
	if err != nil {
		panic(err)
	}
	for _, d := range res.Dropped {
		fmt.Println(d.Reason, d.Rule)
		fmt.Println(d.Message)
	}
	// Output:
	// not_offered role
	// tool "reset_password" was not offered: it is for the roles [admin], and the caller holds none of them
}

// A call of a tool that is not registered is dropped with the registered
// tools the model most likely meant, among those the caller may run only
// (DroppedCall.DidYouMean, and in the message): registry.Registry.Suggest's
// order, the one the executor's unknown-tool error uses.
func ExampleDroppedCall_didYouMean() {
	cfg := selector.Config{Settings: selector.Settings{FailOpen: true}}
	sel, _ := selector.New(scripted{selector.DefaultModel: `{"calls":[{"tool":"get_wether","args":{"city":"Oslo"}}]}`}, &cfg)
	res, err := sel.Select(context.Background(), selector.Request{
		Task: selector.Task{Description: "Weather in Oslo?"}, Registry: exampleRegistry(),
	})
	if err != nil {
		panic(err)
	}
	for _, d := range res.Dropped {
		fmt.Println(d.Reason, d.DidYouMean)
		fmt.Println(d.Message)
	}
	// Output:
	// unknown_tool [get_weather]
	// tool "get_wether" is not registered (did you mean "get_weather"?)
}
