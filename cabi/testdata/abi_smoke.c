/* Drives libtoolselect through toolselect.h from plain C: the header compiles,
 * results are JSON, errors are codes with messages, nothing crashes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "toolselect.h"

static int failures = 0;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

static uint64_t handle_of(const char *json) {
    const char *p = strstr(json, "\"handle\":");
    return p ? strtoull(p + 9, NULL, 10) : 0;
}

int main(void) {
    char *out = NULL;
    int rc = toolselect_version(&out);
    char abi[32];
    snprintf(abi, sizeof abi, "\"abi\":%d,", TOOLSELECT_ABI_VERSION);
    CHECK(rc == TS_OK && strstr(out, abi), "version: %d %s (want %s)", rc, out, abi);
    CHECK(toolselect_free(out) == TS_OK, "free");
    CHECK(toolselect_free(out) == TS_ERR_POINTER, "double free must be reported");
    CHECK(toolselect_free(NULL) == TS_OK, "free(NULL)");

    rc = toolselect_config_schema(&out);
    CHECK(rc == TS_OK && strstr(out, "\"name\":\"max_calls\"") && strstr(out, "LLM_COMMON_TOOL_SELECTION_MAX_CALLS"),
          "config_schema: %d %s", rc, out);
    toolselect_free(out);

    rc = toolselect_registry_new(NULL, &out);
    CHECK(rc == TS_OK, "registry_new: %s", out);
    uint64_t reg = handle_of(out);
    toolselect_free(out);

    rc = toolselect_registry_register(reg,
        "{\"name\":\"add\",\"description\":\"Add\",\"parameters\":{\"type\":\"object\","
        "\"properties\":{\"a\":{\"type\":\"integer\"}},\"required\":[\"a\"]}}", &out);
    CHECK(rc == TS_OK, "register: %s", out);
    toolselect_free(out);

    rc = toolselect_registry_validate(reg, "add", "{\"a\":\"x\"}", &out);
    CHECK(rc == TS_OK && strstr(out, "\"valid\":false") && strstr(out, "\"pointer\":\"/a\""), "validate: %s", out);
    toolselect_free(out);

    /* A key given twice is refused, naming it; what an allowed call may run
     * with is the validated value written again, not the caller's bytes. */
    rc = toolselect_registry_validate(reg, "add", "{\"a\":1,\"a\":\"x\"}", &out);
    CHECK(rc == TS_OK && strstr(out, "\"valid\":false") && strstr(out, "\"rule\":\"duplicateKey\""), "duplicate key: %s", out);
    toolselect_free(out);
    rc = toolselect_registry_authorize(reg, "{\"tool\":\"add\",\"args\":{\"a\":\"x\",\"a\":1}}", NULL, &out);
    CHECK(rc == TS_OK && strstr(out, "\"allowed\":false") && strstr(out, "\"rule\":\"invalid_args\"")
          && strstr(out, "duplicateKey"), "authorize a duplicate key: %d %s", rc, out);
    toolselect_free(out);
    rc = toolselect_registry_authorize(reg, "{\"tool\":\"add\",\"args\":{ \"a\" : 1 }}", NULL, &out);
    CHECK(rc == TS_OK && strstr(out, "\"allowed\":true") && strstr(out, "\"args\":{\"a\":1}"), "authorize: %d %s", rc, out);
    toolselect_free(out);
    /* A number is judged as the double a receiver reads: 1.00000000000000000001
     * is the integer 1 and is passed on so; 1e400 is no double at all. */
    rc = toolselect_registry_authorize(reg, "{\"tool\":\"add\",\"args\":{\"a\":1.00000000000000000001}}", NULL, &out);
    CHECK(rc == TS_OK && strstr(out, "\"allowed\":true") && strstr(out, "\"args\":{\"a\":1}"), "authorize a rounded number: %d %s", rc, out);
    toolselect_free(out);
    rc = toolselect_registry_validate(reg, "add", "{\"a\":1e400}", &out);
    CHECK(rc == TS_OK && strstr(out, "\"valid\":false") && strstr(out, "\"rule\":\"number\""), "a number beyond a double: %s", out);
    toolselect_free(out);
    /* Policy keys are exact, and given once. */
    rc = toolselect_registry_authorize(reg, "{\"tool\":\"add\",\"args\":{\"a\":1}}", "{\"Allow_Unsafe\":true}", &out);
    CHECK(rc == TS_ERR_ARGUMENT && strstr(out, "Allow_Unsafe"), "a policy key in another case: %d %s", rc, out);
    toolselect_free(out);
    rc = toolselect_registry_authorize(reg, "{\"tool\":\"add\",\"args\":{\"a\":1}}", "{\"allow_unsafe\":false,\"allow_unsafe\":true}", &out);
    CHECK(rc == TS_ERR_ARGUMENT && strstr(out, "given twice"), "a policy key given twice: %d %s", rc, out);
    toolselect_free(out);

    /* The allow/ask/deny rule behind the verdict: an unsafe tool is refused,
     * allowed with allow_unsafe, asked about (approval_required, with the
     * arguments' hash) once the caller has an approver, even with
     * allow_unsafe; a tool marked requiresApproval without an approver is
     * refused naming the rule. */
    rc = toolselect_registry_register(reg,
        "{\"name\":\"rm\",\"description\":\"Remove\",\"safe\":false,\"parameters\":{\"type\":\"object\"}}", &out);
    CHECK(rc == TS_OK, "register rm: %s", out);
    toolselect_free(out);
    rc = toolselect_registry_register(reg,
        "{\"name\":\"pay\",\"description\":\"Pay\",\"requiresApproval\":true,\"parameters\":{\"type\":\"object\"}}", &out);
    CHECK(rc == TS_OK, "register pay: %s", out);
    toolselect_free(out);
    rc = toolselect_registry_authorize(reg, "{\"tool\":\"rm\",\"args\":{}}", NULL, &out);
    CHECK(rc == TS_OK && strstr(out, "\"allowed\":false") && strstr(out, "\"rule\":\"unsafe\""), "deny: %s", out);
    toolselect_free(out);
    rc = toolselect_registry_authorize(reg, "{\"tool\":\"rm\",\"args\":{}}", "{\"allow_unsafe\":true}", &out);
    CHECK(rc == TS_OK && strstr(out, "\"allowed\":true") && strstr(out, "\"approval_required\":false"), "allow: %s", out);
    toolselect_free(out);
    rc = toolselect_registry_authorize(reg, "{\"tool\":\"rm\",\"args\":{}}", "{\"allow_unsafe\":true,\"approver\":true}", &out);
    CHECK(rc == TS_OK && strstr(out, "\"allowed\":true") && strstr(out, "\"approval_required\":true")
          && strstr(out, "\"args_sha256\":\"44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a\""),
          "ask: %s", out);
    toolselect_free(out);
    rc = toolselect_registry_authorize(reg, "{\"tool\":\"pay\",\"args\":{}}", "{\"allow_unsafe\":true}", &out);
    CHECK(rc == TS_OK && strstr(out, "\"allowed\":false") && strstr(out, "\"rule\":\"approval_required\""), "deny pay: %s", out);
    toolselect_free(out);
    rc = toolselect_registry_authorize(reg, "{\"tool\":\"pay\",\"args\":{}}", "{\"approver\":true}", &out);
    CHECK(rc == TS_OK && strstr(out, "\"approval_required\":true"), "ask pay: %s", out);
    toolselect_free(out);

    rc = toolselect_registry_validate(reg, NULL, "{}", &out);
    CHECK(rc == TS_ERR_ARGUMENT && strstr(out, "tool is NULL"), "NULL tool: %d %s", rc, out);
    toolselect_free(out);

    rc = toolselect_registry_validate(reg, "nope", "{}", &out);
    CHECK(rc == TS_ERR_NOT_FOUND, "unknown tool: %d %s", rc, out);
    toolselect_free(out);

    rc = toolselect_registry_register(reg, "{\"name\":\"\xff\"}", &out);
    CHECK(rc == TS_ERR_ARGUMENT && strstr(out, "UTF-8"), "bad UTF-8: %d %s", rc, out);
    toolselect_free(out);

    rc = toolselect_echo("{\"a\":", &out);
    CHECK(rc == TS_ERR_ARGUMENT, "bad JSON: %d %s", rc, out);
    toolselect_free(out);

    CHECK(toolselect_registry_schema(reg, NULL) == TS_OK, "NULL out discards the result");
    CHECK(toolselect_registry_close(reg, NULL) == TS_OK, "close");
    rc = toolselect_registry_close(reg, &out);
    CHECK(rc == TS_ERR_HANDLE && strstr(out, "is closed"), "double close: %d %s", rc, out);
    toolselect_free(out);
    rc = toolselect_session_feed(12345678, "{}", &out);
    CHECK(rc == TS_ERR_HANDLE, "unknown session: %d %s", rc, out);
    toolselect_free(out);

    /* The offer budget and the search round, driven as a session. */
    rc = toolselect_registry_new(NULL, &out);
    uint64_t reg2 = handle_of(out);
    toolselect_free(out);
    rc = toolselect_registry_register(reg2,
        "{\"name\":\"add\",\"description\":\"Add two integers\",\"parameters\":{\"type\":\"object\"}}", &out);
    toolselect_free(out);
    rc = toolselect_registry_register(reg2,
        "{\"name\":\"get_weather\",\"description\":\"Current weather forecast for a city\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}", &out);
    CHECK(rc == TS_OK, "register get_weather: %s", out);
    toolselect_free(out);
    rc = toolselect_selector_new("{\"model\":\"m\",\"base_url\":\"http://127.0.0.1:9/v1\",\"offer_tokens\":1,\"top_k\":1,\"max_searches\":1}", &out);
    CHECK(rc == TS_OK, "selector_new with the budget fields: %d %s", rc, out);
    uint64_t sel = handle_of(out);
    toolselect_free(out);
    rc = toolselect_session_begin(sel, reg2, "{\"task\":{\"description\":\"Will I need an umbrella in Lyon tomorrow?\"}}", &out);
    CHECK(rc == TS_OK && strstr(out, "\"action\":\"chat\"") && strstr(out, "search"), "begin: %d %s", rc, out);
    const char *sp = strstr(out, "\"session\":");
    uint64_t sess = sp ? strtoull(sp + 10, NULL, 10) : 0;
    toolselect_free(out);
    rc = toolselect_session_feed(sess, "{\"content\":\"{\\\"calls\\\":[],\\\"search\\\":\\\"weather forecast\\\"}\"}", &out);
    CHECK(rc == TS_OK && strstr(out, "\"action\":\"chat\"") && strstr(out, "get_weather"), "search round: %d %s", rc, out);
    toolselect_free(out);
    rc = toolselect_session_feed(sess, "{\"content\":\"{\\\"calls\\\":[{\\\"tool\\\":\\\"get_weather\\\",\\\"args\\\":{\\\"city\\\":\\\"Lyon\\\"}}]}\"}", &out);
    CHECK(rc == TS_OK && strstr(out, "\"offered\":[\"get_weather\"]")
          && strstr(out, "\"searches\":[{\"query\":\"weather forecast\",\"offered\":[\"get_weather\"]}]")
          && strstr(out, "\"error\":null"), "done after the search: %d %s", rc, out);
    toolselect_free(out);
    toolselect_session_close(sess, NULL);

    /* Nothing eligible: an outcome with a kind, and no request sent (the
     * endpoint above refuses connections, so a request would fail as transport). */
    rc = toolselect_selector_select(sel, reg2, "{\"task\":{\"description\":\"x\"},\"capabilities\":[\"teleport\"]}", 0, &out);
    CHECK(rc == TS_OK && strstr(out, "\"kind\":\"no_eligible_tools\"") && strstr(out, "\"attempts\":[]")
          && strstr(out, "\"offered\":[]"), "no eligible tools: %d %s", rc, out);
    toolselect_free(out);
    toolselect_selector_close(sel, NULL);
    toolselect_registry_close(reg2, NULL);

    rc = toolselect_stats(&out);
    CHECK(rc == TS_OK && strstr(out, "\"strings\":0"), "every returned string was freed: %s", out);
    toolselect_free(out);

    if (failures) return 1;
    printf("ok\n");
    return 0;
}
