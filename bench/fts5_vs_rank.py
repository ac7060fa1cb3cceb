#!/usr/bin/env python3
"""Rank the same catalog and queries with SQLite FTS5 bm25() and with
`toolselect eval`, in one run, and print quality and the speed ratio.

usage: bench/fts5_vs_rank.py [--toolselect bin/toolselect] DATASET_DIR...
       (each DATASET_DIR holds tools.jsonl and queries.jsonl)

       bench/fts5_vs_rank.py --scale [--startup BIN] [--runs N] [--python] DATASET_DIR...
       whole processes side by side, as a user meets them: `toolselect rank
       --catalog C --queries Q --k 10 --json` against a Python process that
       loads the same catalog into SQLite FTS5 and answers the same queries
       (top 10 by bm25()); wall time and peak RSS of each, medians of N runs
       alternating the two, and their ratios. With --startup (bench/startup
       built), the phases of toolselect's start-up (parse, register, index,
       queries) and bytes per tool; with --python, loading the catalog through
       the Python package next to the same load in Go. `make bench-scale`
       builds 10k and 100k catalogs (bench/scale_catalog.py) and runs this.

FTS5 indexes what the reference numbers indexed: the tool name split into
words plus the description (parameters not indexed), a small English
stopword list, query tokens OR-ed, top 10 by bm25().
"""
import argparse, json, re, sqlite3, statistics, subprocess, sys, time

STOP = set("a an and are as at be but by for from has have how i if in into is it its me my of on or our "
           "please so that the their them then there these they this to was we what when where which who "
           "will with you your".split())

def words(s):
    s = re.sub(r"([a-z])([A-Z])", r"\1 \2", s)
    return [w for w in re.findall(r"[^\W_]+", s.lower()) if w not in STOP]

def metrics(ranked, gold):
    gold = set(gold)
    r = lambda k: len(gold & set(ranked[:k])) / len(gold)
    import math
    dcg = sum(1 / math.log2(i + 2) for i, n in enumerate(ranked[:10]) if n in gold)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
    return r(1), r(5), r(10), dcg / idcg

def fts5(dirname):
    tools = [json.loads(l) for l in open(f"{dirname}/tools.jsonl") if l.strip()]
    queries = [json.loads(l) for l in open(f"{dirname}/queries.jsonl") if l.strip()]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(name UNINDEXED, text)")
    t0 = time.perf_counter()
    db.executemany("INSERT INTO t VALUES (?, ?)",
                   [(x["name"], " ".join(words(x["name"]) + words(x.get("description", "")))) for x in tools])
    build = time.perf_counter() - t0
    lat, tot = [], [0.0] * 4
    for q in queries:
        toks = sorted(set(words(q["query"])))
        expr = " OR ".join('"%s"' % w.replace('"', '""') for w in toks)
        t0 = time.perf_counter()
        rows = db.execute("SELECT name FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (expr,)).fetchall() if toks else []
        lat.append(time.perf_counter() - t0)
        for i, v in enumerate(metrics([r[0] for r in rows], q["gold"])):
            tot[i] += v
    n = len(queries)
    return dict(r1=tot[0] / n, r5=tot[1] / n, r10=tot[2] / n, ndcg=tot[3] / n,
                p50_us=statistics.median(lat) * 1e6, build_ms=build * 1e3)

def fts5_child(dirname):
    """One whole FTS5 process: read and parse the catalog, index it, answer
    every query; prints its phase timings as JSON."""
    t0 = time.perf_counter()
    with open(f"{dirname}/tools.jsonl", encoding="utf-8") as f:
        tools = [json.loads(l) for l in f if l.strip()]
    with open(f"{dirname}/queries.jsonl", encoding="utf-8") as f:
        queries = [json.loads(l) for l in f if l.strip()]
    t1 = time.perf_counter()
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(name UNINDEXED, text)")
    db.executemany("INSERT INTO t VALUES (?, ?)",
                   [(x["name"], " ".join(words(x["name"]) + words(x.get("description", "")))) for x in tools])
    t2 = time.perf_counter()
    out = []
    for q in queries:
        toks = sorted(set(words(q["query"])))
        expr = " OR ".join('"%s"' % w.replace('"', '""') for w in toks)
        rows = db.execute("SELECT name FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (expr,)).fetchall() if toks else []
        out.append(json.dumps({"query": q["query"], "picks": [r[0] for r in rows]}))
    t3 = time.perf_counter()
    sys.stdout.write("\n".join(out) + "\n")
    sys.stderr.write(json.dumps({"parse_ms": (t1 - t0) * 1e3, "index_ms": (t2 - t1) * 1e3, "query_ms": (t3 - t2) * 1e3}) + "\n")


def run_measured(argv, env=None):
    """Runs argv to completion; returns (wall seconds, peak RSS MiB, stderr)."""
    import os, subprocess
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {p.returncode}: {err.decode()[-2000:]}")
    return wall, ru.ru_maxrss / 1024, err.decode()


def py_load_child(path):
    """Loads a catalog through the Python package, from the file and as a
    get_tools_schema() string; prints the timings as JSON."""
    import toolselect as ts
    ts.ToolRegistry().close()  # load the shared library outside the timing
    t0 = time.perf_counter()
    reg = ts.ToolRegistry()
    n = reg.load_catalog(path)
    t1 = time.perf_counter()
    text = reg.get_tools_schema()

    class Source:
        def get_tools_schema(self):
            return text

    # No request is made: a loopback base URL only satisfies the selector's
    # check that requests could go somewhere.
    sel = ts.ToolSelector(client=None, config=ts.ToolSelectionConfig(base_url="http://127.0.0.1:9/v1"))
    t2 = time.perf_counter()
    # What select_tool_calls does with a caller's registry before its first
    # request: read get_tools_schema() and compile it (once per text).
    with sel._registry_use(sel._schema_of(Source())):
        t3 = time.perf_counter()
    print(json.dumps({"tools": n, "file_ms": (t1 - t0) * 1e3, "schema_string_ms": (t3 - t2) * 1e3,
                      "schema_bytes": len(text)}))


def mcp_first_answer(toolselect, catalog):
    """Seconds from starting `toolselect mcp --catalog C` (stdio) to its
    answer to the first find_tool call (after initialize)."""
    import subprocess
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                                      "clientInfo": {"name": "bench", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "find_tool", "arguments": {"query": "weather forecast for a city"}}},
    ]
    t0 = time.perf_counter()
    p = subprocess.Popen([toolselect, "mcp", "--catalog", catalog], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    for m in msgs[:1]:
        p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()
    for line in p.stdout:
        if json.loads(line).get("id") == 1:
            break
    for m in msgs[1:]:
        p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()
    for line in p.stdout:
        if json.loads(line).get("id") == 2:
            break
    wall = time.perf_counter() - t0
    p.stdin.close()
    p.wait()
    return wall


def scale(a):
    import os
    med = statistics.median
    rows = []
    for d in a.datasets:
        name = d.rstrip("/").split("/")[-1]
        ts_argv = [a.toolselect, "rank", "--catalog", f"{d}/tools.jsonl", "--queries", f"{d}/queries.jsonl", "--k", "10", "--json"]
        fts_argv = [sys.executable, __file__, "--fts5-child", d]
        ts_runs, fts_runs, fts_phases, st_runs = [], [], [], []
        for _ in range(a.runs):
            ts_runs.append(run_measured(ts_argv)[:2])
            w, rss, err = run_measured(fts_argv)
            fts_runs.append((w, rss))
            fts_phases.append(json.loads(err.strip().splitlines()[-1]))
            if a.startup:
                out = subprocess.run([a.startup, "-catalog", f"{d}/tools.jsonl", "-queries", f"{d}/queries.jsonl"],
                                     capture_output=True, text=True, check=True).stdout
                st_runs.append(json.loads(out))
        tw, trss = med([r[0] for r in ts_runs]), med([r[1] for r in ts_runs])
        fw, frss = med([r[0] for r in fts_runs]), med([r[1] for r in fts_runs])
        print(f"\n== {name}: {sum(1 for _ in open(f'{d}/tools.jsonl'))} tools, {sum(1 for _ in open(f'{d}/queries.jsonl'))} queries, {a.runs} runs each, medians")
        print(f"{'whole process':<34} {'wall s':>8} {'peak RSS MiB':>13}")
        print(f"{'toolselect rank --json':<34} {tw:8.2f} {trss:13.0f}")
        print(f"{'python + sqlite fts5 bm25()':<34} {fw:8.2f} {frss:13.0f}")
        print(f"ratio: toolselect {fw / tw:.1f}x faster; RSS {trss / frss:.2f}x of FTS5")
        fp = {k: med([p[k] for p in fts_phases]) for k in fts_phases[0]}
        print(f"fts5 phases ms: parse {fp['parse_ms']:.0f}, index {fp['index_ms']:.0f}, queries {fp['query_ms']:.0f}")
        row = {"name": name, "ts_wall": tw, "ts_rss": trss, "fts_wall": fw, "fts_rss": frss, "fts": fp}
        if st_runs:
            k = lambda f: med([f(r) for r in st_runs])
            st = {
                "parse": k(lambda r: r["parse"]["wall_ms"]), "register": k(lambda r: r["register"]["wall_ms"]),
                "index": k(lambda r: r["index"]["wall_ms"]), "startup": k(lambda r: r["startup"]["wall_ms"]),
                "startup_cpu": k(lambda r: r["startup"]["cpu_ms"]), "queries": k(lambda r: r["query_total_ms"]),
                "p50": k(lambda r: r["query_p50_us"]), "reg_bpt": k(lambda r: r["registry_bytes_per_tool"]),
                "idx_bpt": k(lambda r: r["index_bytes_per_tool"]), "rss": k(lambda r: r["peak_rss_mb"]),
            }
            row["startup"] = st
            print(f"toolselect phases ms: parse {st['parse']:.0f}, register {st['register']:.0f}, index {st['index']:.0f}"
                  f" -> start-up {st['startup']:.0f} (cpu {st['startup_cpu']:.0f}); queries {st['queries']:.0f}"
                  f" (p50 {st['p50']:.0f} µs); bytes/tool registry {st['reg_bpt']:.0f}, index {st['idx_bpt']:.0f}")
        if a.python and a.startup:
            valid = os.path.join(d, "valid.jsonl")
            subprocess.run([a.startup, "-catalog", f"{d}/tools.jsonl", "-valid-out", valid], capture_output=True, check=True)
            go_ms, py = [], []
            env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
            for _ in range(a.runs):
                out = subprocess.run([a.startup, "-catalog", valid], capture_output=True, text=True, check=True).stdout
                g = json.loads(out)
                go_ms.append(g["parse"]["wall_ms"] + g["register"]["wall_ms"])
                out = subprocess.run([sys.executable, __file__, "--py-load-child", valid], capture_output=True, text=True,
                                     check=True, env=env).stdout
                py.append(json.loads(out))
            g, pf, ps = med(go_ms), med([p["file_ms"] for p in py]), med([p["schema_string_ms"] for p in py])
            row["python"] = {"go_ms": g, "file_ms": pf, "string_ms": ps}
            print(f"load {py[0]['tools']} tools: Go parse+register {g:.0f} ms; Python load_catalog(path) {pf:.0f} ms"
                  f" (+{(pf / g - 1) * 100:.0f}%); get_tools_schema() string ({py[0]['schema_bytes'] / 1e6:.1f} MB) {ps:.0f} ms"
                  f" (+{(ps / g - 1) * 100:.0f}%)")
            # What a user waits for: whole processes, alternating. Go: the
            # command line loading the catalog and checking one call; Python:
            # the interpreter, `import toolselect`, the same load and check.
            with open(valid) as f:
                first = json.loads(f.readline())["name"]
            whole = {
                "go": [a.toolselect, "validate", "--catalog", valid, "--tool", first, "--args", "{}"],
                "python": [sys.executable, "-c", f"import toolselect as ts; r = ts.ToolRegistry(); "
                                                 f"r.load_catalog({valid!r}); r.validate({first!r}, {{}})"],
                "interpreter": [sys.executable, "-c", "pass"],
            }
            took = {k: [] for k in whole}
            for _ in range(a.runs):
                for k, cmd in whole.items():
                    t0 = time.perf_counter()
                    subprocess.run(cmd, env=env, capture_output=True)
                    took[k].append((time.perf_counter() - t0) * 1e3)
            w = {k: med(v) for k, v in took.items()}
            row["python"]["whole_ms"] = w
            print(f"whole process, load + one check: Go {w['go']:.0f} ms; Python {w['python']:.0f} ms"
                  f" (+{(w['python'] / w['go'] - 1) * 100:.0f}%; the interpreter alone {w['interpreter']:.0f} ms)")
        if a.mcp:
            m = med([mcp_first_answer(a.toolselect, f"{d}/tools.jsonl") for _ in range(a.runs)])
            row["mcp_first_answer_s"] = m
            print(f"toolselect mcp --catalog: first find_tool answered {m:.2f} s after the process started")
        rows.append(row)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(rows, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolselect", default="bin/toolselect")
    ap.add_argument("--scale", action="store_true", help="whole processes side by side (see the module docstring)")
    ap.add_argument("--startup", help="bench/startup binary: toolselect's start-up phases (with --scale)")
    ap.add_argument("--python", action="store_true", help="time loading through the Python package (with --scale --startup)")
    ap.add_argument("--mcp", action="store_true", help="time `toolselect mcp --catalog` to its first find_tool answer (with --scale)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json-out", help="write the --scale figures here")
    ap.add_argument("--fts5-child", help=argparse.SUPPRESS)
    ap.add_argument("--py-load-child", help=argparse.SUPPRESS)
    ap.add_argument("datasets", nargs="*")
    a = ap.parse_args()
    if a.fts5_child:
        return fts5_child(a.fts5_child)
    if a.py_load_child:
        return py_load_child(a.py_load_child)
    if not a.datasets:
        ap.error("give at least one DATASET_DIR")
    if a.scale:
        return scale(a)
    print(f"sqlite {sqlite3.sqlite_version}")
    print(f"{'dataset':<28} {'ranker':<10} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'NDCG@10':>8} {'p50 µs':>9}")
    for d in a.datasets:
        f = fts5(d)
        out = subprocess.run([a.toolselect, "eval", "--catalog", f"{d}/tools.jsonl", "--queries", f"{d}/queries.jsonl", "--json"],
                             capture_output=True, text=True, check=True).stdout
        g = json.loads(out)
        name = d.rstrip("/").split("/")[-1]
        print(f"{name:<28} {'fts5':<10} {f['r1']:6.3f} {f['r5']:6.3f} {f['r10']:6.3f} {f['ndcg']:8.3f} {f['p50_us']:9.1f}")
        print(f"{name:<28} {'toolselect':<10} {g['r@1']:6.3f} {g['r@5']:6.3f} {g['r@10']:6.3f} {g['ndcg@10']:8.3f} {g['latency_p50_us']:9.1f}")
        print(f"{name:<28} speed ratio (fts5 median / toolselect median): {f['p50_us'] / g['latency_p50_us']:.1f}x")

if __name__ == "__main__":
    sys.exit(main())
