#!/usr/bin/env python3
"""Whole-process cost of loading feedback: `toolselect eval` on the same
catalog and queries, without and with --feedback FILE of N lines, run
alternately in one session; prints the median wall and CPU (user+sys) time
of each and the ratios (the target: under 2x with 10,000 lines).
On a shared machine the CPU ratio is the steadier one. (The evaluated
queries are among the learned ones, so quality here means nothing.)

usage: bench/feedback_load.py [--toolselect bin/toolselect] [--lines 10000]
                              [--runs 7] DATASET_DIR
       (DATASET_DIR holds tools.jsonl and queries.jsonl)

The feedback lines are the data set's own queries with their gold tools,
repeated with a case number until N lines, so every line is a distinct
(task, tools) pair the store has to parse, check and index.
"""
import argparse, json, os, resource, statistics, subprocess, sys, tempfile, time

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolselect", default="bin/toolselect")
    ap.add_argument("--lines", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("dataset")
    a = ap.parse_args()
    tools = os.path.join(a.dataset, "tools.jsonl")
    queries = os.path.join(a.dataset, "queries.jsonl")
    qs = [json.loads(l) for l in open(queries) if l.strip()]
    with tempfile.TemporaryDirectory() as d:
        fb = os.path.join(d, "feedback.jsonl")
        with open(fb, "w") as f:
            for i in range(a.lines):
                q = qs[i % len(qs)]
                f.write(json.dumps({"query": f"{q['query']} (case {i // len(qs)})", "tools": q["gold"]}) + "\n")
        base = [a.toolselect, "eval", "--catalog", tools, "--queries", queries, "--json"]
        runs = {"without": base, "with": base + ["--feedback", fb]}
        times = {k: [] for k in runs}
        cpu = {k: [] for k in runs}
        out = {}
        for _ in range(a.runs):
            for k, cmd in runs.items():
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t = time.perf_counter()
                p = subprocess.run(cmd, capture_output=True, text=True)
                times[k].append(time.perf_counter() - t)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[k].append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
                if p.returncode != 0:
                    sys.exit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr}")
                out[k] = json.loads(p.stdout)
    m = {k: statistics.median(v) for k, v in times.items()}
    c = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"{os.path.basename(a.dataset.rstrip('/'))}: {len(qs)} queries, {a.lines} feedback lines, {a.runs} runs each")
    for k in runs:
        print(f"  {k:8s} feedback: median wall {m[k]*1000:6.0f} ms, CPU {c[k]*1000:6.0f} ms, query p50 {out[k]['latency_p50_us']:.0f} us")
    print(f"  ratio with/without: wall {m['with'] / m['without']:.2f}x, CPU {c['with'] / c['without']:.2f}x")

if __name__ == "__main__":
    main()
