"""Start-up of the Python package in a fresh process (the targets:
`import toolselect` under 40 ms over the interpreter, the first selection
under 100 ms).

    farm-bench -n 20 -- python3 bench/python_startup.py import
    farm-bench -n 20 -- python3 bench/python_startup.py select

`import` imports the package only; `select` imports it, registers one tool
and runs one selection through a caller's client that answers at once (no
network, no server: what is timed is the package and the library).
PYTHONPATH picks the package (python/ of a checkout by default).
"""

import sys
from pathlib import Path

if not any(Path(p, "toolselect").is_dir() for p in sys.path if p):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

import toolselect as ts  # noqa: E402

if sys.argv[1:] == ["select"]:
    import asyncio

    class Client:
        async def chat_completion(self, **kw):  # type: ignore[no-untyped-def]
            return '{"calls":[{"tool":"get_weather","args":{"city":"Paris"},"reasoning":"asked"}]}'

    reg = ts.ToolRegistry()
    reg.register_tools([{"name": "get_weather", "description": "Current weather for a city",
                         "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                        "required": ["city"]}}])
    calls = asyncio.run(ts.ToolSelector(client=Client()).select_tool_calls(ts.PlannedTask("t1", "Weather in Paris?"), reg))
    assert [c.tool for c in calls] == ["get_weather"], calls
elif sys.argv[1:] != ["import"]:
    sys.exit("usage: python_startup.py import|select")
