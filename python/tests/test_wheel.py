"""`make wheel` output installs offline into a fresh virtual environment,
imports, validates and selects using the library shipped inside it."""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

PY_DIR = Path(__file__).resolve().parents[1]

CHECK = r"""
import asyncio, json, os, sys
import toolselect as ts
assert "site-packages" in str(ts.library_path()), ts.library_path()
assert os.path.commonpath([ts.__file__, sys.prefix]) == sys.prefix, ts.__file__
with ts.ToolRegistry() as reg:
    reg.register("add", lambda a, b: a + b, description="Add",
                 parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                             "required": ["a", "b"]})
    assert not reg.validate("add", {"a": "x"})

    class Client:
        async def chat_completion(self, **kw):
            return json.dumps({"calls": [{"tool": "add", "args": {"a": 1, "b": 2}}]})

    with ts.ToolSelector(client=Client(), config=ts.ToolSelectionConfig(model="m")) as sel:
        calls = asyncio.run(sel.select_tool_calls(task=ts.PlannedTask("t", "add"), tool_registry=reg))
    print(reg.run(calls[0]), ts.version()["abi"])
"""


@unittest.skipIf(os.environ.get("TOOLSELECT_SKIP_WHEEL_TEST"), "TOOLSELECT_SKIP_WHEEL_TEST is set")
@unittest.skipUnless((PY_DIR / "toolselect" / "libtoolselect.so").is_file(), "run `make lib` first")
class WheelTest(unittest.TestCase):
    def test_wheel_installs_offline_in_a_fresh_venv(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            out = subprocess.run([sys.executable, str(PY_DIR / "build_wheel.py"), "--out", str(tmp / "dist")],
                                 check=True, capture_output=True, text=True)
            wheel = out.stdout.strip().splitlines()[-1]
            subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True)
            py = str(tmp / "venv" / "bin" / "python")
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TOOLSELECT_LIBRARY")}
            env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
            subprocess.run([py, "-m", "pip", "install", "--no-index", "--quiet", wheel], check=True, env=env,
                           cwd=tmp)
            r = subprocess.run([py, "-c", CHECK], capture_output=True, text=True, env=env, cwd=tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), ["3", "1"])


if __name__ == "__main__":
    unittest.main()
