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
    CHECK(rc == TS_OK && strstr(out, "\"abi\":1"), "version: %d %s", rc, out);
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

    rc = toolselect_stats(&out);
    CHECK(rc == TS_OK && strstr(out, "\"strings\":0"), "every returned string was freed: %s", out);
    toolselect_free(out);

    if (failures) return 1;
    printf("ok\n");
    return 0;
}
