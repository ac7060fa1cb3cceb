#!/usr/bin/env python3
"""llm-common's executor pattern: a new ToolSelector for every task, never
closed, over an llm-common-style registry (``get_tools_schema()`` returns JSON
text). Compares the package in this tree with another tree's package, side by
side in one run, each in its own process, alternating.

    make python && python3 bench/python_per_task.py [--tools 50] [--tasks 400] [--rounds 3] \\
        [--other /tmp/old/python]

Per task: build ToolSelector(client), select through an in-process async client
(sans-I/O session), drop the selector. Reports the median milliseconds per
task, the ResourceWarnings seen, and the open native handles at the end.
Without --other only this tree is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r'''
import asyncio, gc, json, sys, time, warnings
import toolselect as ts
n_tools, n_tasks = int(sys.argv[1]), int(sys.argv[2])
tools = [{"name": f"tool_{i}", "description": f"Does thing number {i} for a user",
          "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
                         "required": ["q"]}} for i in range(n_tools)]
text = json.dumps(tools)
class Reg:
    def get_tools_schema(self):
        return text
class Client:
    async def chat_completion(self, *, messages, model, temperature, response_format, timeout, **kw):
        return json.dumps({"calls": [{"tool": "tool_1", "args": {"q": "x"}}]})
task = ts.PlannedTask("t", "do thing one", [])
cfg = ts.ToolSelectionConfig()
async def main():
    reg, times = Reg(), []
    for _ in range(n_tasks):
        t0 = time.perf_counter()
        sel = ts.ToolSelector(client=Client(), config=cfg)
        calls = await sel.select_tool_calls(task=task, tool_registry=reg)
        assert len(calls) == 1
        del sel
        times.append(time.perf_counter() - t0)
    return times
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    times = asyncio.run(main())
    gc.collect()
rw = sum(1 for x in w if issubclass(x.category, ResourceWarning))
h = {k: v for k, v in ts.stats()["handles"].items() if v}
print(json.dumps({"times": times[len(times) // 10:], "resource_warnings": rw, "handles": h}))
'''


def run(pkg: str, lib: str, tools: int, tasks: int) -> dict:
    env = dict(os.environ, PYTHONPATH=pkg, TOOLSELECT_LIBRARY=lib)
    out = subprocess.run([sys.executable, "-c", CHILD, str(tools), str(tasks)], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", type=int, default=50)
    ap.add_argument("--tasks", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--other", help="another tree's python/ folder to compare with")
    a = ap.parse_args()
    here = str(Path(__file__).resolve().parent.parent / "python")
    lib = str(Path(here) / "toolselect" / "libtoolselect.so")
    trees = [("this tree", here)] + ([("other", a.other)] if a.other else [])
    acc = {name: {"times": [], "rw": 0, "handles": None} for name, _ in trees}
    for _ in range(a.rounds):
        for name, pkg in trees:
            r = run(pkg, lib, a.tools, a.tasks)
            acc[name]["times"] += r["times"]
            acc[name]["rw"] += r["resource_warnings"]
            acc[name]["handles"] = r["handles"]
    print(f"{a.tools} tools, {a.tasks} tasks x {a.rounds} rounds, a new unclosed ToolSelector per task")
    base = None
    for name, _ in trees:
        med = statistics.median(acc[name]["times"]) * 1000
        base = base or med
        print(f"{name:10s} median {med:7.3f} ms/task ({med / base:4.2f}x)  ResourceWarnings {acc[name]['rw']:5d}  "
              f"open handles at the end {acc[name]['handles']}")


if __name__ == "__main__":
    main()
