"""The Python example programs under examples/ run as the README says and print
what it promises (so a quick start can never again return [] unnoticed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class ExamplesTest(unittest.TestCase):
    def run_example(self, name: str) -> str:
        if shutil.which("go") is None:
            self.skipTest("the example starts the Go fake server with go run")
        # As the README runs it: `python3 examples/NAME.py` from the checkout,
        # no PYTHONPATH (the example finds python/ when the package is not
        # installed).
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("LLM_COMMON_TOOL_SELECTION_", "OPENAI_")) and k != "PYTHONPATH"}
        proc = subprocess.run([sys.executable, str(ROOT / "examples" / name)], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        return proc.stdout

    def test_python_quickstart(self) -> None:
        out = self.run_example("python_quickstart.py")
        for want in ("no model endpoint configured: using the loopback fake server",
                     "offered: get_weather",
                     "select: get_weather {'city': 'Paris'}",
                     "run: get_weather -> light rain in Paris, 14°C"):
            self.assertIn(want, out)


if __name__ == "__main__":
    unittest.main()
