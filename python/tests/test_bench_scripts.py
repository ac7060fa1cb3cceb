"""The Python side of `make bench-scale` (bench/fts5_vs_rank.py --py-load-child)
runs against the package as it is, so the benchmark cannot rot unnoticed
when the package's insides change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class BenchScriptsTest(unittest.TestCase):
    def test_python_load_child(self) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
        proc = subprocess.run([sys.executable, str(ROOT / "bench" / "fts5_vs_rank.py"), "--py-load-child",
                               str(ROOT / "examples" / "assistant.json")], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = json.loads(proc.stdout)
        self.assertEqual(out["tools"], 24)
        self.assertGreater(out["schema_bytes"], 0)
        self.assertGreaterEqual(out["file_ms"], 0)
        self.assertGreaterEqual(out["schema_string_ms"], 0)


if __name__ == "__main__":
    unittest.main()
