"""What `import toolselect` leaves for later: the evaluation API and the
modules only an error message or an exotic number needs are loaded on first
use (the start-up figures are in docs/measurements.md)."""
import os
import subprocess
import sys
import unittest
from pathlib import Path

PYTHON_DIR = str(Path(__file__).resolve().parents[1])


class ImportCostTest(unittest.TestCase):
    def test_import_leaves_them_for_first_use(self):
        code = (
            "import sys, toolselect\n"
            "for m in ('toolselect.evalselect', 'difflib', 'decimal', 'fractions'):\n"
            "    assert m not in sys.modules, m + ' imported with the package'\n"
            "from toolselect import eval_select, CandidateScore\n"
            "import toolselect.evalselect as ev\n"
            "assert eval_select is ev.eval_select and CandidateScore is ev.CandidateScore\n"
            "ns = {}\n"
            "exec('from toolselect import *', ns)\n"
            "assert ns['EvalSelectReport'] is ev.EvalSelectReport and ns['TaskResult'] is ev.TaskResult\n"
            "assert 'Latency' in dir(toolselect)\n"
            "try:\n"
            "    toolselect.no_such_name\n"
            "except AttributeError as e:\n"
            "    assert 'no_such_name' in str(e)\n"
            "else:\n"
            "    raise AssertionError('no AttributeError')\n"
        )
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
        subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=PYTHON_DIR, timeout=60)

    def test_decimal_and_fraction_settings_still_read(self):
        # The config's number checks know Decimal and Fraction without
        # importing them: a value of either means its module is loaded.
        import decimal
        import fractions

        import toolselect as ts
        self.assertEqual(ts.ToolSelectionConfig(max_calls=decimal.Decimal(3)).max_calls, 3)
        self.assertEqual(ts.ToolSelectionConfig(max_calls=fractions.Fraction(6, 2)).max_calls, 3)
        for bad in (decimal.Decimal("2.5"), fractions.Fraction(5, 2)):
            with self.assertRaises(ValueError):
                ts.ToolSelectionConfig(max_calls=bad)

    def test_unknown_setting_still_suggests(self):
        import toolselect as ts
        with self.assertRaises(TypeError) as cm:
            ts.ToolSelectionConfig(max_cals=3)  # type: ignore[call-arg]
        self.assertIn("max_calls", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
