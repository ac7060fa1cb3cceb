import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import toolselect as ts

from .helpers import FakeClient, calls_json, run

P = "LLM_COMMON_TOOL_SELECTION_"

TOOLS = (("get_weather", "Current weather for a city"), ("send_email", "Send an email message"),
         ("read_file", "Read a file from disk"), ("list_calendar", "List calendar events"),
         ("convert_units", "Convert a quantity between units"))


class FeedbackTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "feedback.jsonl")
        self.reg = ts.ToolRegistry()
        for name, desc in TOOLS:
            self.reg.register(name, lambda **kw: 0, description=desc, parameters={"type": "object"})

    def tearDown(self):
        self.reg.close()
        self.dir.cleanup()

    def selector(self, client, **kw):
        cfg = ts.ToolSelectionConfig(model="m", feedback=self.path)
        return ts.ToolSelector(client=client, config=cfg, top_k=1, **kw)

    def test_config_reads_the_variable(self):
        with mock.patch.dict(os.environ, {P + "FEEDBACK": " /tmp/fb.jsonl "}):
            self.assertEqual(ts.ToolSelectionConfig.from_env().feedback, "/tmp/fb.jsonl")
        with mock.patch.dict(os.environ, {P + "FEEDBACK": ""}):
            self.assertIsNone(ts.ToolSelectionConfig.from_env().feedback)
        with self.assertRaisesRegex(ValueError, "feedback"):
            ts.ToolSelectionConfig(feedback=3)

    def test_malformed_store_url_is_a_value_error(self):
        cfg = ts.ToolSelectionConfig(model="m", feedback="http://example.invalid/x")
        with ts.ToolSelector(client=FakeClient(calls_json()), config=cfg) as sel:
            with self.assertRaisesRegex(ValueError, "FEEDBACK"):
                sel.add_feedback("q", ["get_weather"])

    def test_add_feedback_by_hand_is_stored_and_lifts_the_tool(self):
        q = "is it going to snow on my ski trip"
        with self.selector(FakeClient(calls_json(("read_file", {})))) as sel:
            # Nothing learned: the ranking offers what matches the words.
            res = run(sel.select_tool_calls_detailed(task=ts.PlannedTask(id="1", description=q), tool_registry=self.reg))
            self.assertNotEqual(res.offered, ["get_weather"])
            stats = sel.add_feedback("will it snow during my ski trip", ["get_weather", "no_such_tool"])
            self.assertEqual(stats["pairs"], 2)
        with open(self.path) as f:
            lines = [json.loads(line) for line in f]
        self.assertIn({"query": "will it snow during my ski trip", "tools": ["get_weather", "no_such_tool"]}, lines)
        # A new selector loads the store and offers the learned tool.
        client = FakeClient(calls_json(("get_weather", {"city": "Chamonix"})))
        with self.selector(client) as sel:
            res = run(sel.select_tool_calls_detailed(task=ts.PlannedTask(id="2", description=q), tool_registry=self.reg))
            self.assertEqual(res.offered, ["get_weather"])
            self.assertEqual([c.tool for c in res.calls], ["get_weather"])
            # The validated selection was recorded under the task text.
            with open(self.path) as f:
                self.assertEqual(json.loads(f.readlines()[-1]), {"query": q, "tools": ["get_weather"]})
            stats = sel.add_feedback(q, ["get_weather"], remove=True)
            self.assertGreaterEqual(stats["pairs"], 1)
            self.assertEqual(stats["withdrawn"], 1)
            # A withdrawal that matches nothing raises, and writes nothing.
            size = os.path.getsize(self.path)
            with self.assertRaises(ts.NotRecordedError) as cm:
                sel.add_feedback(q, ["get_weather"], remove=True)
            self.assertEqual(os.path.getsize(self.path), size)
            self.assertIsInstance(cm.exception, ValueError)
            self.assertEqual(cm.exception.kind, "not_recorded")

    def test_withdraw_takes_the_selection_or_its_feedback_query(self):
        task = ts.PlannedTask(id="1", description="Plan a day in Oslo",
                              sub_tasks=[ts.SubTask("a", "check the weather")])
        client = FakeClient(calls_json(("get_weather", {"city": "Oslo"}), ("read_file", {}), ("get_weather", {})))
        cfg = ts.ToolSelectionConfig(model="m", feedback=self.path)
        with ts.ToolSelector(client=client, config=cfg, top_k=0) as sel:
            res = run(sel.select_tool_calls_detailed(task=task, tool_registry=self.reg))
            self.assertEqual([c.tool for c in res.calls], ["get_weather", "read_file", "get_weather"])
            # The text it was recorded under: the description and each sub-task's, one a line.
            self.assertEqual(res.feedback_query, "Plan a day in Oslo\ncheck the weather")
            with open(self.path) as f:
                self.assertEqual(json.loads(f.readlines()[-1]), {"query": res.feedback_query,
                                                                 "tools": ["get_weather", "read_file"]})
            # The selection itself: every tool its calls named, counted once.
            self.assertEqual(sel.withdraw(res), 2)
            with self.assertRaisesRegex(ts.NotRecordedError, r"no tool of \['get_weather', 'read_file'\]") as cm:
                sel.withdraw(res)
            self.assertNotIn("Result.FeedbackQuery", str(cm.exception))
            self.assertIn("feedback_query", str(cm.exception))
            # Its feedback_query and some of its tools.
            sel.add_feedback(res.feedback_query, ["get_weather", "read_file"])
            self.assertEqual(sel.withdraw(res.feedback_query, ["read_file"]), 1)
            self.assertEqual(sel.withdraw(res, ["get_weather"]), 1)
            # A text it was not recorded under matches nothing.
            sel.add_feedback(res.feedback_query, ["get_weather"])
            with self.assertRaises(ts.NotRecordedError):
                sel.withdraw("Plan a day in Oslo", ["get_weather"])
            self.assertEqual(sel.withdraw(res), 1)
            with self.assertRaisesRegex(TypeError, "tools"):
                sel.withdraw(res.feedback_query)
            with self.assertRaisesRegex(TypeError, "SelectionResult"):
                sel.withdraw(42)  # type: ignore[arg-type]
            # A selection that returned no calls taught nothing.
            with ts.ToolSelector(client=FakeClient(calls_json()), config=cfg) as other:
                empty = run(other.select_tool_calls_detailed(task=task, tool_registry=self.reg))
            self.assertEqual((empty.calls, empty.feedback_query), ([], ""))
            with self.assertRaisesRegex(ValueError, "returned no calls"):
                sel.withdraw(empty)

    def test_feedback_by_hand_reaches_the_selector_that_selects(self):
        # With the caller's client and an endpoint in the environment, the
        # feedback added by hand lifts the tool in this same selector.
        q = "is it going to snow on my ski trip"
        env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", P + "BASE_URL": "http://127.0.0.1:9/v1"}
        with mock.patch.dict(os.environ, env), \
                self.selector(FakeClient(calls_json(("get_weather", {"city": "Chamonix"})))) as sel:
            res = run(sel.select_tool_calls_detailed(task=ts.PlannedTask(id="1", description=q), tool_registry=self.reg))
            self.assertNotEqual(res.offered, ["get_weather"])
            sel.add_feedback("will it snow during my ski trip", ["get_weather"])
            res = run(sel.select_tool_calls_detailed(task=ts.PlannedTask(id="2", description=q), tool_registry=self.reg))
            self.assertEqual(res.offered, ["get_weather"])

    def test_bad_feedback_is_a_value_error(self):
        with self.selector(FakeClient()) as sel:
            for query, tools in (("", ["get_weather"]), ("weather", []), ("x " * 40000, ["get_weather"])):
                with self.subTest(query=query[:10], tools=tools), self.assertRaises(ValueError):
                    sel.add_feedback(query, tools)
            with self.assertRaises(TypeError):
                sel.add_feedback("weather", "get_weather")
        with ts.ToolSelector(client=FakeClient(), config=ts.ToolSelectionConfig(model="m")) as sel:
            with self.assertRaisesRegex(ValueError, "feedback store"):
                sel.add_feedback("weather", ["get_weather"])


DOORS = Path(__file__).resolve().parents[2] / "testdata" / "feedback-doors"


class FeedbackDoorsTest(unittest.TestCase):
    """One feedback log, one ranking, whichever door reads it: the Python selector's top_k
    offer, ranked with a store that names tools the catalog lacks, is the
    top k of `toolselect rank --feedback` on the same files (which drops those
    names as it reads them). cabi/internal/capi/feedback_doors_test.go
    compares the CLI, the Go API and the C ABI score for score."""

    @classmethod
    def setUpClass(cls):
        go = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else None)
        if not go:
            raise unittest.SkipTest("needs Go to build the toolselect CLI")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.bin = os.path.join(cls.tmp.name, "toolselect")
        subprocess.run([go, "build", "-o", cls.bin, "./cmd/toolselect"], cwd=DOORS.parents[1], check=True)
        cls.store = os.path.join(cls.tmp.name, "past.jsonl")  # a copy: a learner may append to it
        shutil.copy(DOORS / "past.jsonl", cls.store)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def cli_top(self, query, k):
        out = subprocess.run([self.bin, "rank", "--catalog", str(DOORS / "tools.jsonl"), "--feedback", self.store,
                              "--json", "--k", str(k), query], capture_output=True, text=True, check=True).stdout
        return sorted(p["tool"] for p in json.loads(out))

    def test_python_offers_the_clis_top_k(self):
        queries = [q for q in (DOORS / "queries.txt").read_text().splitlines() if q.strip()]
        with ts.ToolRegistry() as reg:
            reg.load_catalog(DOORS / "tools.jsonl")
            for k in (1, 2, 3):
                cfg = ts.ToolSelectionConfig(model="m", feedback=self.store)
                with ts.ToolSelector(client=FakeClient(calls_json()), config=cfg, top_k=k) as sel:
                    for q in queries:
                        with self.subTest(query=q, k=k):
                            res = run(sel.select_tool_calls_detailed(task=ts.PlannedTask(id="1", description=q),
                                                                     tool_registry=reg))
                            self.assertEqual(sorted(res.offered), self.cli_top(q, k))


if __name__ == "__main__":
    unittest.main()
