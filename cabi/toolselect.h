/*
 * toolselect.h - the C ABI of libtoolselect (hand-written; the header cgo
 * generates is not installed).
 *
 * Build:  go build -buildmode=c-shared -o libtoolselect.so ./cabi   (or `make lib`)
 *
 * ---------------------------------------------------------------------------
 * CONVENTIONS (they hold for every function below)
 *
 * JSON in, JSON out.  Every `const char *` argument is a NUL-terminated UTF-8
 * string owned by the caller; the library copies what it keeps and never holds
 * on to the pointer after the call returns.
 *
 * Return codes.  Every function returns one of TS_OK ... TS_ERR_POINTER.
 *
 * Results.  Every function except toolselect_free takes `char **out` last.
 * When `out` is not NULL the library stores in *out a NUL-terminated JSON
 * document, on success AND on failure:
 *   - on TS_OK, the function's result as documented below;
 *   - otherwise {"error":{"code":N,"kind":"argument|handle|not_found|rejected|
 *     canceled|internal|pointer","message":"...","detail":...}}
 *     ("detail" is present for some errors, e.g. {"refused":[{"tool","index",
 *     "reason","message","rule"}]} for TS_ERR_REJECTED; "rule", when present,
 *     is "no_schema"|"no_schema_mode", a refusal whose reason names the
 *     definition's JSON fields and which a binding may word in its own names).
 * When `out` is NULL the result is discarded and only the code is returned.
 * *out is set to NULL only if the library could not allocate memory (then the
 * code is TS_ERR_INTERNAL).
 *
 * OWNERSHIP RULE.  Every string the library stores in *out is C memory that
 * the caller owns and must release with toolselect_free() (not free(): the
 * library tracks its allocations so that a double free or a foreign pointer is
 * reported as TS_ERR_POINTER instead of corrupting the heap).
 *
 * Handles.  Registries, selectors, sessions and cancel tokens are uint64_t
 * handles (never pointers). 0 is never a valid handle. Handles are not reused
 * within a process: a closed handle stays invalid (TS_ERR_HANDLE, "... is
 * closed"), as do handles of the wrong kind. Closing a handle twice is
 * TS_ERR_HANDLE. Closing a registry or selector does not disturb a selection
 * or session already using it.
 *
 * Safety.  Every function recovers Go panics (TS_ERR_INTERNAL with a message
 * and stack) and checks its arguments: a NULL string, invalid UTF-8, malformed
 * JSON, an unknown or closed handle each return an error code with a message;
 * none crashes the process.
 *
 * Threads.  Every function may be called from any thread, concurrently. Calls
 * block the calling thread only; toolselect_selector_select blocks for the
 * duration of the HTTP attempts (bounded by timeout_s per attempt) and can be
 * interrupted with a cancel token.
 *
 * fork().  The Go runtime does not survive fork(): a child forked after the
 * library was loaded must not call into it (calls may hang). Load the library
 * after forking, or use spawn/forkserver process pools.
 *
 * Never unload the library (dlclose) and never load two Go shared libraries
 * into one process.
 * ---------------------------------------------------------------------------
 */
#ifndef TOOLSELECT_H
#define TOOLSELECT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The C ABI version this header describes: toolselect_version reports the
 * library's as "abi". It changes whenever an export is added or removed or an
 * export's signature or meaning changes; a host compares it at load time. */
#define TOOLSELECT_ABI_VERSION 3

/* Return codes. */
#define TS_OK            0 /* success; *out holds the result */
#define TS_ERR_ARGUMENT  1 /* NULL string, invalid UTF-8, malformed JSON, bad value, invalid config */
#define TS_ERR_HANDLE    2 /* unknown, closed or wrong-kind handle */
#define TS_ERR_NOT_FOUND 3 /* unknown tool */
#define TS_ERR_REJECTED  4 /* the registry refused a tool or catalog (detail.refused lists each) */
#define TS_ERR_CANCELED  5 /* the call was cancelled through its cancel token */
#define TS_ERR_INTERNAL  6 /* a recovered panic or an allocation failure: a bug, please report */
#define TS_ERR_POINTER   7 /* toolselect_free: not a pointer from this library, or already freed */

/* ---- memory and diagnostics ------------------------------------------- */

/* Release a string returned in *out. NULL is a no-op (TS_OK). A pointer the
 * library did not return, or one already freed, is left alone and reported as
 * TS_ERR_POINTER. */
int toolselect_free(char *p);

/* Result: {"version":"0.1.0","go":"go1.26.x","abi":2} ("abi" is the
 * library's TOOLSELECT_ABI_VERSION). */
int toolselect_version(char **out);

/* Export the OpenTelemetry spans and metrics the library still holds, within
 * 5 s (docs/observability.md). Telemetry is set up when the library loads,
 * from the process's OTEL_* environment; with none set this does nothing.
 * Result: {"flushed":true}, plus "warnings":[...] naming each OTEL_* setting
 * that could not be used (it turned its signal off; the rest still exports). */
int toolselect_telemetry_flush(char **out);

/* Result: {"handles":{"registry":N,...},"strings":N,"goroutines":N}: open
 * handles per kind, returned strings not yet freed, and the library's live
 * goroutines (for leak checks). */
int toolselect_stats(char **out);

/* Result: json_text, parsed and compacted. For measuring the cost of a round
 * trip through the ABI. TS_ERR_ARGUMENT if json_text is not JSON. */
int toolselect_echo(const char *json_text, char **out);

/* ---- registries --------------------------------------------------------- */

/* Create an empty registry. options_json may be NULL or "" for defaults, or
 * {"limits":{"MaxSchemaBytes":N,"MaxSchemaDepth":N,"MaxEnum":N,
 *            "MaxArgsBytes":N,"MaxArgsDepth":N}} (0 or absent = default).
 * Result: {"handle":H}. Close it with toolselect_registry_close. */
int toolselect_registry_new(const char *options_json, char **out);

/* Register one canonical tool (a JSON object: type, name, description,
 * parameters, strict, allowNoSchema, noSchemaMode, safe (default true), tags,
 * roles, capabilities, metadata) or a batch (a JSON array of them, atomic:
 * all or none). Result: {"registered":N}.
 * TS_ERR_REJECTED names each refused tool and why (detail.refused[i] =
 * {"tool","index","reason","message"}). */
int toolselect_registry_register(uint64_t registry, const char *tool_json, char **out);

/* Parse a catalog and register every tool, atomically. The format is detected:
 * canonical JSON array or JSON Lines, OpenAI tools array (chat or responses),
 * Anthropic tools array, MCP tools/list result (bare or JSON-RPC), or an object
 * with a "tools" array. Result: {"registered":N,"format":"canonical|openai|..."}.
 * TS_ERR_ARGUMENT if the text is not a catalog; TS_ERR_REJECTED if a tool is refused. */
int toolselect_registry_load_catalog(uint64_t registry, const char *catalog, char **out);

/* toolselect_registry_load_catalog for a file the library reads itself (no
 * copy of the text through the caller; errors name the file and line).
 * TS_ERR_ARGUMENT also when the file cannot be read. */
int toolselect_registry_load_catalog_file(uint64_t registry, const char *path, char **out);

/* Result: the tools as [{"name","description","parameters"}] (schemas verbatim). */
int toolselect_registry_schema(uint64_t registry, char **out);

/* Result: every tool in a provider format, a JSON array. format is one of
 * canonical, schema, openai, openai-responses, anthropic, ollama, mcp.
 * Names a provider forbids are mapped reversibly. TS_ERR_ARGUMENT for an
 * unknown format. */
int toolselect_registry_view(uint64_t registry, const char *format, char **out);

/* Validate an argument document (JSON text, as a model produced it) for a tool
 * named canonically or by its provider-mapped name.
 * Result (TS_OK whether or not the arguments are valid):
 *   {"valid":true|false,"tool":"canonical name","validated":bool,
 *    "violations":[{"pointer":"/a","rule":"type","message":"..."}],"message":"..."}
 * Malformed JSON in args_json is a violation (rule "json"), not an error;
 * so is a key given twice in one object (rule "duplicateKey", the pointer
 * naming it), which parsers would read differently.
 * "validated" is false for a tool registered without a schema.
 * TS_ERR_NOT_FOUND for an unknown tool. */
int toolselect_registry_validate(uint64_t registry, const char *tool, const char *args_json, char **out);

/* Rank the registry's tools for a task without a model, as `toolselect rank`
 * does. request_json: {"task":"...", and optionally the rank options the CLI
 * has as flags: "k":10 (1..1000), "min_score":0.05 (negative: every tool
 * scoring above zero), "scorer":"bm25"|"keyword", "allow_unsafe":false,
 * "roles":[...], "capabilities":[...], "timeout_s":0, "no_prerequisites",
 * "no_name_words", "no_namespace", "no_related_words", "debug" (false),
 * "rules":{"allow","ask","deny"} (per-tool patterns, as authorize takes them:
 * a tool a deny pattern names is hidden, "denied_by_rule")}.
 * cancel: 0 or a cancel token. Result:
 *   {"picks":[{"tool","score","reason","provenance":{"scorer","source","rank",
 *     "matched"?,"components"?}}],
 *    "hidden":[{...the same, "hidden":"unsafe"|"role"|"capability"|
 *      "denied_by_rule"}]}
 * picks best first; hidden lists the tools the caller's filters kept out that
 * would otherwise have been picked. TS_ERR_ARGUMENT for an empty task, an
 * unknown key, a value out of range or the embedding/hybrid scorers (they
 * need an endpoint the C ABI does not configure); TS_ERR_CANCELED. */
int toolselect_registry_rank(uint64_t registry, const char *request_json, uint64_t cancel, char **out);

/* A fake model for tests: the library's own OpenAI-compatible server
 * (Go's modeltest) on 127.0.0.1, so a binding's users need neither Go nor
 * the source checkout. replies_json (NULL: answer no calls) is an array of
 * replies answered in order, the last again when they run out:
 *   {"calls":[{"tool":"...","args":{...},"reasoning":"..."}]}  tool calls
 *   {"content":"..."}                                           raw message text
 *   {"status":503,"content":"message"}                          an HTTP error
 * Result: {"handle":H,"url":"http://127.0.0.1:PORT/v1"} (the base URL to
 * configure). TS_ERR_ARGUMENT for an unknown key, an empty tool name or a
 * status outside 100..599. */
int toolselect_fake_model_new(const char *replies_json, char **out);

/* The requests the fake model got, in order:
 * {"requests":[{"model","messages":[{"role","content"}],"tools":[...],"body":{...}}]}
 * ("body": the request's JSON body as sent). */
int toolselect_fake_model_requests(uint64_t fake, char **out);

/* Stop the fake model (up to 2 s for requests being answered) and close its handle. */
int toolselect_fake_model_close(uint64_t fake, char **out);

/* The executor's run policy, for callers that run tools themselves: may this
 * call run for this caller? call_json: {"id":"...","tool":"...","args":{...}};
 * policy_json (NULL: the defaults): {"allow_unsafe":false,"roles":[...],
 * "capabilities":[...],"approver":false,"hints":{"unsafe":"..."},
 * "rules":{"allow":[...],"ask":[...],"deny":[...]}} ("hints",
 * when given, word what would let a refused call run, by rule, in the
 * caller's names: the message and the audit record carry them instead of
 * Go's, and a rule without one gets none; "rules", per-tool patterns of
 * tool names in Go's path.Match syntax that take precedence over the rest:
 * deny first (rule "denied_by_rule", even for a safe tool), then ask
 * (approval_required, even for a safe tool), then allow (an unsafe tool
 * runs unasked); deny and ask match whatever the case; a pattern
 * path.Match cannot read is TS_ERR_ARGUMENT naming it). Result, TS_OK either way:
 * {"allowed":true,"tool":CANONICAL,"args":{...},"policy":"schema","validated":true,
 *  "approval_required":false} — run it with these args (the validated value
 * written again, never call_json's bytes; asking the approver first when
 * approval_required, which the one allow/ask/deny rule sets with "approver"
 * true for every unsafe tool and every tool marked "requiresApproval",
 * with "args_sha256", the hash of args, for the record beside who
 * approved), and write the audit record; or {"allowed":false,"tool",
 * "outcome":"refused"|"invalid","rule":"unsafe"|"role"|"capability"|
 * "denied_by_rule"|"no_schema_read_only"|"approval_required"|"unknown_tool"|"invalid_args",
 * "message","violations":[...],"audit":{record}} — do not run it.
 * TS_ERR_ARGUMENT for malformed JSON, or a key of call_json or policy_json
 * that is unknown, in another case than written here, or given twice. */
int toolselect_registry_authorize(uint64_t registry, const char *call_json, const char *policy_json, char **out);

/* Release a registry handle. Result: {}. */
int toolselect_registry_close(uint64_t registry, char **out);

/* ---- selectors ---------------------------------------------------------- */

/* Describe every selector setting, so that bindings read the rules instead
 * of restating them. Result: {"env_prefix":"LLM_COMMON_TOOL_SELECTION_",
 * "bool_true":[...],"bool_false":[...],"fields":[{"name":"max_calls",
 * "go_field":"MaxCalls","type":"string|int|float|bool","default":5|null,
 * "env":["LLM_COMMON_TOOL_SELECTION_MAX_CALLS"],"want":"an integer from 1 to
 * 20","required":false,"min":1|null,"max":20|null,"choices":[...],
 * "fold_case":true,"format":"http_url","secret":false,"nullable":false},...]}
 * in the order of
 * Go's selector.Config ("choices", "fold_case", "format" only when set). The
 * keys of config_json below are the "name"s. */
int toolselect_config_schema(char **out);

/* Warnings for the variables of env_json (a JSON object, name -> value: the
 * caller's environment; the library never reads the process's) that start
 * with the selector's prefix (LLM_COMMON_TOOL_SELECTION_) but name no
 * setting, each naming the setting's variable most likely meant:
 *   {"warnings":["LLM_COMMON_TOOL_SELECTION_MAX_CALS names no setting and is
 *     ignored (did you mean LLM_COMMON_TOOL_SELECTION_MAX_CALLS?)"]}
 * Values are never shown (a misspelt API key is still a key). */
int toolselect_config_unknown_env(const char *env_json, char **out);

/* Create a selector. config_json is an object with any of: "model",
 * "fallback_model", "max_calls" (1-20), "timeout_s" (1-120), "temperature"
 * (0-1), "fail_closed", "base_url", "api_key", "mode" ("json"|"native"),
 * "max_response_bytes", "offer_tokens" (1-10000000, default 10000), "top_k"
 * (1-1000, default 10), "max_searches" (0-10, default 1; 0 turns the search
 * round off), "feedback" (a JSON Lines file path or redis:// URL: successful
 * selections are recorded there as ranking feedback, loaded now, and used by
 * the offer budget's ranking and "top_k"), "provider" (the provider dialect:
 * "auto", the default, decides from base_url's host, then the model name;
 * or "generic", "openai", "deepseek", "zai", "qwen", "vllm", "ollama",
 * "lmstudio", "llamacpp", "openrouter", "mistral", "moonshot", "gemini", "azure",
 * "anthropic"; any case),
 * "reasoning" ("off", the default: each dialect's lowest setting; "low",
 * "medium", "high"; "provider": send no reasoning control), "max_tokens"
 * (0-1000000; 0, the default, is the dialect's default limit: none for the
 * generic dialect and OpenAI's chat models; sent as max_tokens or
 * max_completion_tokens as the dialect says; docs/providers.md has every
 * rule); a missing key takes its default (the library never
 * reads the environment: the caller passes what it read). Unknown keys and
 * out-of-range values are TS_ERR_ARGUMENT naming the setting.
 * "own_client": true (not a setting) says the caller's own client will send
 * the requests of this selector's sessions, to base_url: the dialect follows
 * base_url as for the built-in client, and an empty base_url means an
 * endpoint the caller cannot name (not api.openai.com): the dialect then
 * follows the model name, then generic, and adaptations learned from its
 * 400s stay with this selector.
 * Result: {"handle":H}. */
int toolselect_selector_new(const char *config_json, char **out);

/* The selection request, shared by select and session_begin:
 *   {"task":{"id":"...","description":"...","sub_tasks":[{"id":"...","description":"..."}]},
 *    "query":"...", "context":{...}, "roles":["..."], "allow_unsafe":false,
 *    "capabilities":["readOnly"], "top_k":0,
 *    "rules":{"allow":[...],"ask":[...],"deny":[...]}}   (everything but task optional)
 * "rules" are the per-tool patterns toolselect_registry_authorize takes,
 * checked the same way (an unknown key or a bad pattern is an argument
 * error naming it): a tool a deny rule names is never offered, an unsafe
 * tool an allow or ask rule names is offered without "allow_unsafe".
 * Absent "top_k" follows the selector's offer budget: every eligible tool
 * while their view (the tools as the request carries them) is at most
 * offer_tokens tokens, else the selector's top_k ranked by bm25; when the
 * offer is such a ranked part, the model may answer {"calls":[],"search":"..."}
 * (native mode: call search_tools) and is asked again with the best matches
 * for its words, at most max_searches times per attempt. "top_k" above 0 (at
 * most 1000) overrides the budget: only the top_k eligible tools the bm25
 * ranking puts first for the query (or the task and sub-tasks), in catalog
 * order; the prerequisites of the best ones (sibling tools that yield a
 * parameter they require) count among them. "top_k": 0 offers every eligible
 * tool. The registry's index is built once and shared.
 *
 * The selection result ("done"):
 *   {"calls":[{"tool","args":{...},"reasoning"}],
 *    "attempts":[{"model","ok","error":{"kind","message"}|null,"latency_ms",...,
 *                 "searches":[{"query","offered":[...]}], "unanswered_search"}],
 *    "dropped":[{"tool","args","reason","message"}], "offered":["tool",...],
 *    "error":null | {"kind":"fail_closed|no_eligible_tools|no_ranked_tools|...","message":"..."}}
 * "offered" names the tools of the final request, in its order. A failed
 * selection is TS_OK with "calls":[] and a non-null "error": it is an
 * outcome, not an API error. "no_eligible_tools" (no tool passed the safety,
 * role and capability filters) and "no_ranked_tools" (the ranking found
 * nothing and the search round is off) send no request at all. Rejected
 * calls' args are clipped to the registry's depth and size limits. */

/* Select tool calls with the built-in OpenAI-compatible HTTP client (the
 * selector's base_url and api_key). Blocks for the attempts. cancel is 0 or a
 * token from toolselect_cancel_new; toolselect_cancel(token) from another
 * thread makes this return TS_ERR_CANCELED promptly.
 * Result: the selection result above. */
int toolselect_selector_select(uint64_t selector, uint64_t registry, const char *request_json,
                               uint64_t cancel, char **out);

/* Release a selector handle. Result: {}. */
int toolselect_selector_close(uint64_t selector, char **out);

/* Record feedback by hand in the selector's "feedback" store:
 *   {"query":"...","tools":["name",...]}   ("remove":true withdraws the pair)
 * It is appended to the store and learned at once (with what other processes
 * appended). Result: {"pairs":N,"tools":N,"unknown":N,"evicted":N}, and for a
 * removal "withdrawn":N, the pairs it matched. A selector without a store, an
 * empty query, no tools, or a removal that matches no learned pair is
 * TS_ERR_ARGUMENT (the last with "detail":{"rule":"not_recorded"}). */
int toolselect_selector_add_feedback(uint64_t selector, const char *feedback_json, char **out);

/* ---- sans-I/O sessions: bring your own LLM client ------------------------ */

/* Begin a selection whose chat requests the caller performs. Result: the
 * first action with the session handle:
 *   {"session":H,"action":"chat","model":"...","dialect":"deepseek",
 *    "messages":[{"role":"system","content":"..."},{"role":"user","content":"..."}],
 *    "params":{"temperature":0,"response_format":{"type":"json_object"},
 *              "timeout_s":30,"tools":[...],
 *              "max_tokens":32768,"max_completion_tokens":25000,
 *              "reasoning_effort":"low","extra_body":{"thinking":{"type":"disabled"}}}}
 * The provider dialect (docs/providers.md) decides what params holds; a key
 * the request does not carry is absent:
 *   "dialect"   the dialect's name; absent for the plain OpenAI-compatible
 *               request (the generic dialect and OpenAI's chat models).
 *   "temperature"  absent when the dialect omits it (OpenAI's reasoning
 *               models); 1 where only 1 is accepted (Moonshot's thinking models).
 *   "response_format"  {"type":"json_object"}, or {"type":"json_schema",
 *               "json_schema":{...}} where json_object is refused (LM Studio);
 *               absent in native mode, or where the dialect sends none.
 *   "tools"     native mode only.
 *   "max_tokens" | "max_completion_tokens"  the token limit, in the dialect's
 *               field; absent when none is sent.
 *   "reasoning_effort"  OpenAI's reasoning control, where the dialect uses it.
 *   "extra_body"  provider fields outside OpenAI's API ("thinking",
 *               "enable_thinking", "chat_template_kwargs", "reasoning"), to be
 *               merged at the top level of the request body (as the OpenAI
 *               SDKs' extra_body does).
 * A continued conversation (a native search round with thinking on, for
 * DeepSeek) also carries assistant messages with "reasoning_content" and
 * "tool_calls" and "tool" messages with "tool_call_id": send them as they are.
 * Perform the chat, then call toolselect_session_feed. The policy (attempts,
 * fallback, checks, cap, fail-closed) stays in the library. */
int toolselect_session_begin(uint64_t selector, uint64_t registry, const char *request_json, char **out);

/* Feed the reply to the last "chat" action:
 *   {"content":"...", "tool_calls":[{"id","name","arguments":"<json text>"}],
 *    "reasoning_content":"...", "finish_reason":"stop|length|...",
 *    "usage":{"prompt_tokens":N,"completion_tokens":N}}
 * or the whole chat completion as the provider sent it ({"choices":[...],
 * "usage":{...}}, read by the library's one reply reader: content as a
 * string or a list of parts, reasoning fields, arguments as a string or an
 * object, an "error" in the body), or the failure to get one:
 *   {"error":{"kind":"transport|timeout|http_status|empty_choices|...","message":"...","status_code":429}}
 * an http_status failure may add "body" (the error body the client kept, as
 * JSON or text), "retry_after" (its Retry-After header) and "source" (what
 * raised it, put before the message).
 * Result: the next action, {"action":"chat",...} (e.g. the fallback model) or
 * {"action":"done", ...the selection result...}. Feeding a session that is
 * done is TS_ERR_ARGUMENT. Close the session when done. */
int toolselect_session_feed(uint64_t session, const char *reply_json, char **out);

/* Release a session handle (finished or not). Result: {}. */
int toolselect_session_close(uint64_t session, char **out);

/* ---- cancellation -------------------------------------------------------- */

/* Create a cancel token. Result: {"handle":H}. */
int toolselect_cancel_new(char **out);

/* Cancel every call using the token (now and later). Result: {}. */
int toolselect_cancel(uint64_t token, char **out);

/* Release a cancel token. Result: {}. */
int toolselect_cancel_close(uint64_t token, char **out);

/* ---------------------------------------------------------------------------
 * Selection evaluation (`toolselect eval --select`; docs/eval-select.md)
 * ------------------------------------------------------------------------- */

/* Score whole selections per candidate on the registry's tools: each task
 * runs the real selection path with the built-in HTTP client. Blocks for every
 * selection. request_json:
 *   {"tasks": [{"id","task","sub_tasks","calls":[{"tool","args":{"p":[values]}}],"ordered"}],
 *    "config": {...base configuration, as toolselect_selector_new takes it},
 *    "candidates": [{"name","base_url","model","provider","mode","reasoning",
 *                    "top_k","offer_tokens","api_key_file"|"api_key_env"}],
 *    "env": {"VAR": "value"}   (the variables api_key_env names),
 *    "prices": {"MODEL": {"In": dollars per million, "Out": ...}},
 *    "parallel", "rps", "roles", "allow_unsafe"}
 * A bad task is TS_ERR_ARGUMENT naming it ("tasks line N: ..."). cancel is 0
 * or a token: toolselect_cancel(token) ends the run with what was scored.
 * Result: {"candidates":[{"name","model","tasks","tool_accuracy","exact",
 * "fail_closed","dropped","latency_ms":{"p50","p95"},"prompt_tokens",
 * "completion_tokens","cost":x|null,"results":[{"id","verdict","tools_ok",
 * "exact","difference","calls","fail_kind","error","dropped","latency_ms",
 * "prompt_tokens","completion_tokens","attempts"}]}], "total": N,
 * "interrupted": bool, "fail_closed_kinds": [{"kind": n}] (one per candidate)} */
int toolselect_eval_select(uint64_t registry, const char *request_json, uint64_t cancel, char **out);

#ifdef __cplusplus
}
#endif

#endif /* TOOLSELECT_H */
