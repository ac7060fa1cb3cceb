#!/usr/bin/env python3
"""Build a large canonical JSON Lines catalog (and its queries) from the shared
data sets, for `make bench-scale`.

usage: bench/scale_catalog.py --tools N --out DIR DATASET_DIR...

The first copy of every tool keeps its name and schema, so every query's gold
tools are in the catalog. Copy c >= 1 of a tool is named NAME__vC and its
schema gains one property of its own ("variant_C"), so no two tools share a
schema text and sharing compiled schemas by content cannot carry the figures.
The queries are every query of the given sets (there is no ToolBench set in
testdata/sets); they are written to DIR/queries.jsonl.
"""
import argparse, json, os, sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("datasets", nargs="+")
    a = ap.parse_args()
    base, queries = [], []
    for d in a.datasets:
        with open(os.path.join(d, "tools.jsonl"), encoding="utf-8") as f:
            base += [json.loads(l) for l in f if l.strip()]
        with open(os.path.join(d, "queries.jsonl"), encoding="utf-8") as f:
            queries += [json.loads(l) for l in f if l.strip()]
    if not base:
        sys.exit("no tools in the given data sets")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tools.jsonl"), "w", encoding="utf-8") as out:
        for i in range(a.tools):
            c = i // len(base)
            t = json.loads(json.dumps(base[i % len(base)]))
            if c > 0:
                t["name"] = f"{t['name']}__v{c}"
                p = t.get("parameters") or {"type": "object"}
                props = p.setdefault("properties", {})
                props[f"variant_{c}"] = {"type": "string", "description": f"Which variant ({c}) of the tool to run."}
                t["parameters"] = p
            out.write(json.dumps(t, ensure_ascii=False) + "\n")
    with open(os.path.join(a.out, "queries.jsonl"), "w", encoding="utf-8") as out:
        for q in queries:
            out.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(f"{a.out}: {a.tools} tools, {len(queries)} queries", file=sys.stderr)


if __name__ == "__main__":
    main()
