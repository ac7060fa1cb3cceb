// Package selector asks a language model which registered tools a task needs,
// and returns only calls it has checked.
//
// One policy, in one place ([Session]):
//
//   - Offer: the eligible tools ([registry.Eligibility]: minus unsafe ones
//     unless [Request].AllowUnsafe, those the caller's Roles may not use and
//     those lacking a required Capability). With a [Ranker] ([Config].Ranker),
//     all of them while their view fits Config.OfferTokens, else the top
//     Config.TopK ranked; a [Prefilter], if any, decides instead (it can only
//     narrow). Nothing to offer ends at once with a [*SelectionError] whose
//     [EmptyKind] says why ([EmptyNoEligibleTools], [EmptyNoRankedTools]); no
//     model is asked.
//   - Search: when the offer is a ranked subset, the model may answer
//     {"calls":[],"search":"..."} (native mode: call [SearchToolName]); the
//     eligible tools are ranked with its words and the same model is asked
//     again, Config.MaxSearches times per attempt at most, within the
//     attempt's timeout.
//   - Ask: in [ModeJSON] (the default) the system prompt embeds the offered
//     tools' schema and the answer schema, the `{"calls":[{"tool","args","reasoning"}]}`
//     contract, with the response format the provider's dialect takes; in
//     [ModeNative] the tools go in the provider's `tools` field and tool_calls
//     come back. The user prompt carries the task, sub-tasks, query and
//     context. What a request carries and how a reply is read follow the
//     provider dialect ([Provider], [Reasoning]; docs/providers.md).
//   - Check: every call must name an offered tool and its args must validate
//     against the tool's schema. Fail-closed (the default): any invalid call
//     fails the attempt. Fail-open: invalid calls are dropped and reported
//     ([DroppedCall], [DropReason]). Then the first MaxCalls calls are kept,
//     in the model's order.
//   - Attempts: the primary model, then on any failure the fallback model
//     once, then no calls and a [*SelectionError] listing every [Attempt]
//     with its [FailureKind]. No path returns "all tools".
//
// [ToolSelector.Select] drives a Session with a [ChatClient]
// ([NewOpenAIClient] is the go-openai adapter). Callers that bring their own
// LLM client, such as the Python package through the C ABI, drive the
// Session themselves: [ToolSelector.Begin], then for each [ActionChat]
// perform the request and [Session.Feed] (or [Session.FeedJSON]) the outcome,
// until [ActionDone]. Actions marshal to JSON.
//
// Configuration: [New] takes a [*Config] whose zero fields mean the defaults;
// [ConfigFromEnv] reads the [EnvPrefix] variables, [ConfigFromJSON] the
// JSON form (each starting from the defaults), and [ConfigSchema] describes
// every setting, from the one table both readers and [Settings.Validate] read. Records of
// each attempt and decision go to log/slog when [Config].Logger is set (nil
// logs nothing); selections that return calls are recorded with
// Config.Recorder ([FeedbackRecorder]).
package selector
