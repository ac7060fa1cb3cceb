"""The README's Python quick start as a whole program.

    make python                                   # builds the shared library into python/toolselect
    python3 examples/python_quickstart.py          # from a checkout: uses python/ when not installed

(or install the wheel for this machine: `make wheel && pip install --no-index --find-links dist
toolselect`, then run it without PYTHONPATH.)

It registers a tool, asks a model which calls the task needs, and runs them. The model endpoint is
LLM_COMMON_TOOL_SELECTION_BASE_URL (or OPENAI_BASE_URL) when one is set. Without one it starts the
fake model inside the wheel (toolselect.testing.FakeModel: the library's own server, on 127.0.0.1
only, no Go needed), scripted to answer get_weather for Paris, and says so.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

try:
    import toolselect as ts
except ImportError:  # run from a checkout without installing: the package is in python/
    sys.path.insert(0, str(ROOT / "python"))
    import toolselect as ts
from toolselect.testing import FakeModel


def get_weather(city: str) -> str:
    return f"light rain in {city}, 14°C"


async def main() -> int:
    # 1. One canonical definition per tool; the schema is checked at registration (fail-closed).
    registry = ts.ToolRegistry()
    registry.register("get_weather", get_weather, description="Current weather for a city.",
                      parameters={"type": "object", "properties": {"city": {"type": "string"}},
                                  "required": ["city"]})

    # 2. The selector reads LLM_COMMON_TOOL_SELECTION_* at call time (checked). With client=None the
    # library's own HTTP client talks to the endpoint; pass your own client object to use it instead.
    fake = None
    if not (os.environ.get("LLM_COMMON_TOOL_SELECTION_BASE_URL") or os.environ.get("OPENAI_BASE_URL")):
        fake = FakeModel([{"calls": [{"tool": "get_weather", "args": {"city": "Paris"},
                                      "reasoning": "the task asks for the weather"}]}])
        os.environ["LLM_COMMON_TOOL_SELECTION_BASE_URL"] = fake.url
        print("no model endpoint configured: using the loopback fake server "
              "(set LLM_COMMON_TOOL_SELECTION_BASE_URL for a real one)")
    try:
        selector = ts.ToolSelector(client=None)  # the offer budget decides what is offered
        task = ts.PlannedTask(id="t1", description="Should I take an umbrella in Paris? Check the weather.",
                              sub_tasks=[ts.SubTask(id="s1", description="look up the weather")])
        result = await selector.select_tool_calls_detailed(task=task, tool_registry=registry)
    finally:
        if fake is not None:
            fake.close()

    # 3. What was offered, and the calls (every one names an offered tool and passed its schema).
    print("offered:", ", ".join(result.offered))
    if result.failure is not None:  # a kind the caller can see: fail_closed, no_eligible_tools, ...
        print(f"select: no calls ({result.failure.kind}: {result.failure.message})")
        return 1
    if not result.calls:
        print("select: the model chose no call")
    for call in result.calls:
        print(f"select: {call.tool} {call.args}")
        # 4. Run it: the arguments are validated again before the function is called.
        print(f"run: {call.tool} -> {registry.run(call)}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
