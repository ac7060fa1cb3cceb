/* A selection smoke test through the C ABI of the library a wheel ships,
 * for targets whose Python is not on this machine (aarch64, run under
 * qemu-aarch64-static): load the library, check its version, register a
 * tool, validate arguments, and drive a selection session with a canned
 * model reply (the sans-I/O session needs no network). Prints "ok VERSION". */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*out_fn)(char **);
typedef int (*free_fn)(char *);
typedef int (*new_fn)(const char *, char **);
typedef int (*reg_fn)(uint64_t, const char *, char **);
typedef int (*val_fn)(uint64_t, const char *, const char *, char **);
typedef int (*begin_fn)(uint64_t, uint64_t, const char *, char **);
typedef int (*feed_fn)(uint64_t, const char *, char **);

static void *sym(void *h, const char *name) {
	void *p = dlsym(h, name);
	if (!p) { fprintf(stderr, "missing %s\n", name); exit(2); }
	return p;
}

static uint64_t handle_of(const char *json, const char *key) {
	const char *p = strstr(json, key);
	if (!p) { fprintf(stderr, "no %s in %s\n", key, json); exit(3); }
	return strtoull(p + strlen(key) + 1, NULL, 10);
}

int main(int argc, char **argv) {
	if (argc != 2) { fprintf(stderr, "usage: wheel_smoke LIB\n"); return 2; }
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
	free_fn tfree = (free_fn)sym(h, "toolselect_free");
	char *out = NULL;
	if (((out_fn)sym(h, "toolselect_version"))(&out) != 0) return 4;
	char version[256];
	snprintf(version, sizeof version, "%s", out);
	tfree(out);
	if (((new_fn)sym(h, "toolselect_registry_new"))(NULL, &out) != 0) return 5;
	uint64_t reg = handle_of(out, "\"handle\"");
	tfree(out);
	const char *tool = "{\"name\":\"get_weather\",\"description\":\"Current weather for a city.\","
	                   "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}";
	if (((reg_fn)sym(h, "toolselect_registry_register"))(reg, tool, &out) != 0) { fprintf(stderr, "%s\n", out); return 6; }
	tfree(out);
	if (((val_fn)sym(h, "toolselect_registry_validate"))(reg, "get_weather", "{\"city\":3}", &out) != 0 ||
	    !strstr(out, "\"valid\":false")) { fprintf(stderr, "validate: %s\n", out); return 7; }
	tfree(out);
	if (((new_fn)sym(h, "toolselect_selector_new"))("{\"model\":\"m\"}", &out) != 0) return 8;
	uint64_t sel = handle_of(out, "\"handle\"");
	tfree(out);
	if (((begin_fn)sym(h, "toolselect_session_begin"))(sel, reg, "{\"task\":{\"description\":\"weather in Paris\"}}", &out) != 0 ||
	    !strstr(out, "\"action\":\"chat\"")) { fprintf(stderr, "begin: %s\n", out); return 9; }
	uint64_t sess = handle_of(out, "\"session\"");
	tfree(out);
	const char *reply = "{\"content\":\"{\\\"calls\\\":[{\\\"tool\\\":\\\"get_weather\\\",\\\"args\\\":{\\\"city\\\":\\\"Paris\\\"}}]}\"}";
	if (((feed_fn)sym(h, "toolselect_session_feed"))(sess, reply, &out) != 0 ||
	    !strstr(out, "\"action\":\"done\"") || !strstr(out, "\"tool\":\"get_weather\"") || !strstr(out, "\"error\":null")) {
		fprintf(stderr, "feed: %s\n", out);
		return 10;
	}
	tfree(out);
	printf("ok %s\n", version);
	return 0;
}
