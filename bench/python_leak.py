#!/usr/bin/env python3
"""Leak check: 100,000 select/validate round trips through the C ABI, with
the growth of the resident set size reported.

    make python && PYTHONPATH=python python3 bench/python_leak.py [-n 100000]

Each round trip is one ToolRegistry.validate (alternately valid and invalid
arguments, so both reply shapes are exercised) and one full selection through
the sans-I/O session (begin -> chat via an in-process async client -> feed ->
done -> close). RSS is sampled after a warm-up of 5% of the rounds (so the Go
heap, the allocator arenas and the thread pool have reached their working
size) and at the end; the target is under 5 MB of growth. The library's own
ledger must end with no open handle and no unfreed string.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import time

import toolselect as ts

ARGS_SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "minLength": 1},
                                                "days": {"type": "integer", "minimum": 1, "maximum": 14}},
               "required": ["city"]}
REPLY = json.dumps({"calls": [{"tool": "forecast", "args": {"city": "Paris", "days": 3}, "reasoning": "asked"}]})


class Client:
    async def chat_completion(self, **kw):
        return REPLY


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def rounds(sel: ts.ToolSelector, reg: ts.ToolRegistry, task: ts.PlannedTask, n: int) -> None:
    good, bad = {"city": "Paris", "days": 3}, {"city": "", "days": 99}
    for i in range(n):
        v = reg.validate("forecast", good if i & 1 else bad)
        assert v.valid == bool(i & 1)
        calls = await sel.select_tool_calls(task=task, tool_registry=reg)
        assert len(calls) == 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=100_000)
    ap.add_argument("--max-growth-mib", type=float, default=5.0)
    args = ap.parse_args()

    reg = ts.ToolRegistry()
    reg.register("forecast", lambda city, days=1: f"{city}:{days}", description="Weather forecast",
                 parameters=ARGS_SCHEMA)
    sel = ts.ToolSelector(client=Client(), config=ts.ToolSelectionConfig(model="m"))
    task = ts.PlannedTask("t1", "Weather in Paris for three days")

    warm = max(1, args.n // 20)
    start = time.perf_counter()
    asyncio.run(rounds(sel, reg, task, warm))
    gc.collect()
    base = rss_kib()
    asyncio.run(rounds(sel, reg, task, args.n))
    gc.collect()
    end = rss_kib()
    elapsed = time.perf_counter() - start
    sel.close()
    reg.close()
    stats = ts.stats()
    growth_mib = (end - base) / 1024
    print(f"{args.n} select/validate round trips (+{warm} warm-up) in {elapsed:.1f} s "
          f"({elapsed / (args.n + warm) * 1e6:.0f} us per round trip)")
    print(f"RSS after warm-up {base / 1024:.1f} MiB, at the end {end / 1024:.1f} MiB, growth {growth_mib:+.2f} MiB "
          f"(target < {args.max_growth_mib} MiB)")
    print(f"library ledger at the end: {json.dumps(stats)}")
    ok = growth_mib < args.max_growth_mib and stats["strings"] == 0 and not any(stats["handles"].values())
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
