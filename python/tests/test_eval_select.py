"""toolselect.eval_select: whole selections scored per candidate, through the
C ABI, against the scripted stand-in of examples/eval-model.json (right on 20
of the 24 example tasks, the right tools on 22) and a candidate that fails."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

import toolselect
from toolselect import ArgumentError, ToolSelectionConfig, eval_select

from .test_fault_server import ROOT, FaultServer

CATALOG = str(ROOT / "examples" / "catalog.json")
TASKS = str(ROOT / "examples" / "eval-tasks.jsonl")


class EvalSelectTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = FaultServer(script=str(ROOT / "examples" / "eval-model.json"))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.close()

    def config(self) -> ToolSelectionConfig:
        return ToolSelectionConfig(base_url=self.server.url, model="stand-in", timeout_s=5)

    def test_figures(self) -> None:
        report = eval_select(CATALOG, TASKS, config=self.config(), parallel=2,
                             candidates=[{"name": "stand-in"},
                                         {"name": "down", "base_url": self.server.base("status_503"), "model": "m2"}],
                             prices={"stand-in": (1.0, 2.0)})
        self.assertIsInstance(report, toolselect.EvalSelectReport)
        self.assertFalse(report.interrupted)
        self.assertEqual(report.total, 24)
        st, down = report.candidates
        self.assertIsInstance(st, toolselect.CandidateScore)
        self.assertEqual((st.name, st.model, st.tasks), ("stand-in", "stand-in", 24))
        self.assertAlmostEqual(st.exact, 20 / 24)
        self.assertAlmostEqual(st.tool_accuracy, 22 / 24)
        self.assertEqual(st.fail_closed, 0.0)
        self.assertEqual((st.prompt_tokens, st.completion_tokens), (2400, 480))
        self.assertAlmostEqual(st.cost, (2400 * 1 + 480 * 2) / 1e6)
        self.assertGreaterEqual(st.latency_ms.p95, st.latency_ms.p50)
        wrong = {r.id: r.verdict for r in st.results if r.verdict != "exact"}
        self.assertEqual(wrong, {"cpu": "wrong_args", "sev1": "wrong_args", "poem": "wrong_tools", "triage": "wrong_tools"})
        cpu = next(r for r in st.results if r.id == "cpu")
        self.assertIsInstance(cpu, toolselect.TaskResult)
        self.assertEqual(cpu.difference, 'get_metrics: parameter "metric" is "memory", gold accepts ["cpu"]')
        self.assertEqual(cpu.calls[0].tool, "get_metrics")
        self.assertEqual((cpu.prompt_tokens, cpu.completion_tokens, cpu.attempts), (100, 20, 1))

        self.assertEqual((down.model, down.fail_closed, down.exact, down.cost), ("m2", 1.0, 0.0, None))
        self.assertEqual(down.fail_closed_kinds, {"http_status": 24})
        self.assertEqual({r.fail_kind for r in down.results}, {"http_status"})
        self.assertEqual([c.name for c in report.best()], ["stand-in", "down"])

    def test_models_and_task_dicts(self) -> None:
        tasks = [{"id": "err", "task": "What is the error rate of checkout-api over the last 30m?",
                  "calls": [{"tool": "get_metrics", "args": {"service": ["checkout-api"], "metric": ["error_rate"], "window": ["30m"]}}]},
                 {"id": "hi", "task": "Hi! How are you today?", "calls": []}]
        reg = toolselect.ToolRegistry()
        reg.load_catalog(CATALOG)
        report = eval_select(reg, tasks, config=self.config(), models=["a", "b"])
        self.assertEqual([c.name for c in report.candidates], ["a", "b"])
        for c in report.candidates:
            self.assertEqual((c.tasks, c.exact, c.tool_accuracy), (2, 1.0, 1.0))
        self.assertEqual(len(reg), 13, "the caller's registry is left open")

    def test_bad_task_names_the_line(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "t.jsonl"
            p.write_text(json.dumps({"id": "a", "task": "t", "calls": []}) + "\n" + json.dumps({"id": "b", "task": "t"}) + "\n")
            with self.assertRaises(ArgumentError) as cm:
                eval_select(CATALOG, str(p), config=self.config())
            self.assertIn('tasks line 2: task "b": "calls" is required', str(cm.exception))
        with self.assertRaises(ArgumentError) as cm:
            eval_select(CATALOG, [{"id": "x", "task": "t", "calls": [{"tool": "fly", "args": {}}]}], config=self.config())
        self.assertIn('calls[0] names "fly", which the catalog does not hold', str(cm.exception))
        with self.assertRaises(ArgumentError) as cm:
            eval_select(CATALOG, TASKS, config=self.config(), candidates=[{"name": "a", "api_key_env": "TOOLSELECT_TEST_NO_SUCH_KEY"}])
        self.assertIn("TOOLSELECT_TEST_NO_SUCH_KEY is not set", str(cm.exception))

    def test_limit_shuffle_seed(self) -> None:
        def ids(seed: int) -> list:
            report = eval_select(CATALOG, TASKS, config=self.config(), shuffle=True, seed=seed, limit=5)
            return [r.id for r in report.candidates[0].results]
        first = ids(7)
        self.assertEqual(len(first), 5)
        self.assertEqual(first, ids(7), "the same seed, the same sample")
        self.assertNotEqual(first, ["err-rate", "cpu", "p99", "logs-timeout", "logs-oom"], "shuffled")

    def test_nothing_left_open(self) -> None:
        before = toolselect.stats()["handles"]
        eval_select(CATALOG, TASKS, config=self.config(), limit=3)
        after = toolselect.stats()
        self.assertEqual(after["handles"], before, "the registry loaded from the file and the cancel token are closed")
        self.assertEqual(after["strings"], 0)


class EvalSelectInterruptTest(unittest.TestCase):
    def test_ctrl_c_keeps_what_was_scored(self) -> None:
        server = FaultServer(latency="150ms", script=str(ROOT / "examples" / "eval-model.json"))
        self.addCleanup(server.close)
        program = (
            "import json, sys, toolselect\n"
            f"r = toolselect.eval_select({CATALOG!r}, {TASKS!r}, config=toolselect.ToolSelectionConfig(base_url={server.url!r}, model='m'))\n"
            "print(json.dumps({'interrupted': r.interrupted, 'total': r.total, 'tasks': r.candidates[0].tasks,"
            " 'results': len(r.candidates[0].results), 'prompt_tokens': r.candidates[0].prompt_tokens}))\n"
        )
        env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
        proc = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env)
        time.sleep(1.5)  # a few of the 24 selections (150 ms each) are scored
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, err)
        got = json.loads(out)
        self.assertTrue(got["interrupted"])
        self.assertEqual(got["total"], 24)
        self.assertGreater(got["tasks"], 0)
        self.assertLess(got["tasks"], 24)
        self.assertEqual(got["results"], got["tasks"])
        self.assertEqual(got["prompt_tokens"], 100 * got["tasks"])


if __name__ == "__main__":
    unittest.main()
