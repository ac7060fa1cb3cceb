#!/usr/bin/env python3
"""Per-call overhead of Python -> C -> Go -> Python for a 1 KB request and
reply, next to the same operation called from Go.

    make python && PYTHONPATH=python python3 bench/python_overhead.py [--go]

Operations:
  echo      toolselect_echo: a 1 KB dict is json.dumps'ed and encoded in
            Python, copied into Go, parsed and compacted there, copied back
            into C memory, read, freed and json.loads'ed in Python.
  validate  ToolRegistry.validate(tool, 1 KB dict): the same plus the schema
            check and the verdict (a small JSON reply).
  floor     toolselect_echo with a pre-encoded 1 KB body and no decoding:
            the bare ctypes + cgo + copy + free cost.
With --go it runs the Go benchmarks of the same operations
(cabi/internal/capi BenchmarkEcho1KB, BenchmarkValidate1KB) and prints the
difference: what crossing the boundary from Python adds.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import toolselect as ts
from toolselect import _lib

ROOT = Path(__file__).resolve().parents[1]

TOOL = {"name": "search", "description": "Search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1},
                                     "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["query"]}}


def doc_1kb() -> dict:
    tags = []
    while len(",".join(json.dumps(t) for t in tags)) < 940:
        tags.append(f"item number {len(tags):03d} with some padding text")
    return {"query": "find the weather in Paris", "limit": 10, "tags": tags}


def bench(fn, n: int, repeat: int = 5) -> float:
    """Best-of-repeat mean seconds per call."""
    for _ in range(min(n, 2000)):
        fn()
    best = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best.append((time.perf_counter() - t) / n)
    return min(best)


def go_bench() -> dict:
    out = subprocess.run(["go", "test", "-run", "^$", "-bench", "Echo1KB|Validate1KB$", "-count", "5",
                          "./internal/capi"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    res: dict = {}
    for m in re.finditer(r"^Benchmark(\w+)-\d+\s+\d+\s+([\d.]+) ns/op", out, re.M):
        res.setdefault(m.group(1), []).append(float(m.group(2)) / 1000)
    return {k: min(v) for k, v in res.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=20000)
    ap.add_argument("--go", action="store_true", help="also run the Go benchmarks and print the difference")
    args = ap.parse_args()

    doc = doc_1kb()
    body = json.dumps(doc, separators=(",", ":")).encode()
    assert 1000 <= len(body) <= 1100, len(body)
    reg = ts.ToolRegistry()
    reg.register_tools([TOOL])
    assert reg.validate("search", doc).valid

    py = {
        "floor": bench(lambda: _lib.raw_call("toolselect_echo", body), args.n),
        "echo": bench(lambda: _lib.call("toolselect_echo", json.dumps(doc, separators=(",", ":")).encode()), args.n),
        "validate": bench(lambda: reg.validate("search", doc), args.n),
    }
    go = go_bench() if args.go else {}
    go_for = {"echo": go.get("Echo1KB"), "validate": go.get("Validate1KB")}
    print(f"python {sys.version.split()[0]}, library {ts.version()['version']} ({ts.version()['go']}), "
          f"1 KB = {len(body)} bytes, best of 5 x {args.n}")
    print(f"{'operation':<10} {'from Python':>12} {'from Go':>10} {'added':>10}")
    for op in ("floor", "echo", "validate"):
        g = go_for.get(op)
        gtxt = f"{g:7.1f} us" if g is not None else f"{'-':>10}"
        added = f"{py[op] * 1e6 - g:7.1f} us" if g is not None else f"{'-':>10}"
        print(f"{op:<10} {py[op] * 1e6:9.1f} us {gtxt} {added}")
    reg.close()


if __name__ == "__main__":
    main()
