// Package selector asks a language model which registered tools a task needs,
// and returns only calls it has checked.
//
//	func main() {
//		cfg, err := selector.ConfigFromEnv() // the model, its endpoint and key, the limits
//		if err != nil {
//			log.Fatal(err)
//		}
//		client, err := selector.NewOpenAIClient(&cfg, nil)
//		if err != nil {
//			log.Fatal(err)
//		}
//		sel, err := selector.New(client, &cfg)
//		if err != nil {
//			log.Fatal(err)
//		}
//		reg := registry.New(nil)
//		_ = reg.Register(registry.NewTool("get_weather", "Current weather for a city.",
//			json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)))
//		calls, err := sel.SelectToolCalls(context.Background(), selector.Request{
//			Registry: reg, Task: selector.Task{Description: "What is the weather in Paris?"},
//		})
//		if err != nil {
//			log.Fatal(err) // no calls, and a *SelectionError listing every attempt
//		}
//		for _, c := range calls {
//			fmt.Println(c.Tool, string(c.Args)) // valid against the tool's schema
//		}
//	}
//
// # Start here
//
//   - [New] makes a [ToolSelector] from a [ChatClient] ([NewOpenAIClient] is
//     the go-openai adapter) and a [Config].
//   - [ToolSelector.SelectToolCalls] returns the checked [ToolCall] values for
//     a [Request] (a [Task] with its [SubTask] list, the registry, who asks);
//     [ToolSelector.Select] returns the whole [Result]: calls, every
//     [Attempt], each [DroppedCall], the tools offered.
//   - [ToolSelector.Begin] returns a [Session] for a caller that performs the
//     chat requests itself.
//   - [ToolSelector.Withdraw] takes back what a [Result] taught the feedback
//     recorder, when running its calls showed the selection wrong.
//
// # How a selection runs
//
// One policy, in one place ([Session]):
//
//   - Offer: the eligible tools ([registry.Eligibility]: minus unsafe ones
//     unless the request allows them, those the caller's roles may not use
//     and those lacking a required capability). With a [Config.Ranker], all
//     of them while their view fits [Settings.OfferTokens], else the top
//     [Settings.TopK] ranked; a [Prefilter] ([Config.Prefilter] or
//     [Request.Prefilter]), if any, decides instead (it can only narrow). Nothing to
//     offer ends at once with a [*SelectionError] whose [EmptyKind] says why
//     ([EmptyNoEligibleTools], [EmptyNoRankedTools]); no model is asked.
//   - Search: when the offer is a ranked subset, the model may answer
//     {"calls":[],"search":"..."} (native mode: it calls [SearchToolName]);
//     the eligible tools are ranked with its words and the same model is
//     asked again, [Settings.MaxSearches] times per attempt at most, within
//     the attempt's timeout ([Search] records each round).
//   - Ask: in [ModeJSON] (the default) the system prompt embeds the offered
//     tools' schema and the answer schema, the `{"calls":[{"tool","args","reasoning"}]}`
//     contract, with the response format the provider's dialect takes; in
//     [ModeNative] the tools go in the provider's `tools` field and tool_calls
//     come back ([NativeCall]). The user prompt carries the task, sub-tasks,
//     query and context. What a request carries and how a reply is read
//     follow the provider dialect ([Provider], [Reasoning]; docs/providers.md).
//   - Check: every call must name an offered tool and its args must validate
//     against the tool's schema. Fail-closed (the default): any invalid call
//     fails the attempt. Fail-open: invalid calls are dropped and reported
//     ([DroppedCall], [DropReason]); [Settings.FailOpen] chooses. Then the
//     first [Settings.MaxCalls] calls are kept, in the model's order.
//   - Attempts: the primary model, then on any failure
//     [Settings.FallbackModel] once, then no calls and a [*SelectionError] listing every [Attempt]
//     with its [FailureKind]. No path returns "all tools".
//
// # Driving a session yourself
//
// Callers that bring their own LLM client, such as the Python package
// through the C ABI, drive the [Session]: [ToolSelector.Begin], then
// [Session.Next]; for each [Action] of kind [ActionChat] perform its
// [ChatRequest] and [Session.Feed] the [ChatResponse] (or [Session.FeedJSON]
// its JSON), until [ActionDone]. Actions marshal to JSON.
//
// # Configuration
//
// [New] takes a [*Config] whose zero fields mean the defaults. A Config is
// its [Settings], what the environment and JSON carry, beside the
// collaborators: [Config.Ranker], [Config.Prefilter], [Config.Recorder] and
// [Config.Logger]. [ConfigFromEnv] reads the settings from the variables
// named [EnvPrefix] followed by the setting (and OPENAI_BASE_URL,
// OPENAI_API_KEY), [ConfigFromJSON] from the JSON form, and
// [Settings.Validate] checks them; a bad value is a [*ConfigError] naming
// the setting. [ConfigSchema] describes every setting (variable, JSON key,
// default, bounds) for other languages.
//
// # Errors
//
// A selection that ends with no calls, not by the model's choice, is a
// [*SelectionError]: it matches [ErrFailClosed] and lists each [Attempt]
// with its [FailureKind], or says with its [EmptyKind] why no model was
// asked. A bad [Request] matches [ErrBadRequest]; a chat that failed is a
// [*ChatError]. [ErrorKind] names any error's kind as JSON output writes it,
// and [ErrorInfo] carries that kind with the message.
//
// # Logs, telemetry and feedback
//
// Records of each attempt and decision go to [log/slog] when
// [Config.Logger] is set (nil logs nothing); spans and metrics go through
// the OpenTelemetry API. Selections that return calls are recorded with
// [Config.Recorder] (a [FeedbackRecorder]), which ranking learns from.
package selector
