"""ToolRegistry.rank: the ranking the CLI shows, from Python, without a model."""

import asyncio
import threading
import unittest

import toolselect as ts

CATALOG = [
    {"name": "list_events", "description": "List the calendar events of a day at work",
     "parameters": {"type": "object", "properties": {"day": {"type": "string"}}}},
    {"name": "send_email", "description": "Send an email message",
     "parameters": {"type": "object", "properties": {"to": {"type": "string"}}}},
    {"name": "delete_events", "description": "Delete every calendar event of a day", "safe": False,
     "parameters": {"type": "object", "properties": {"day": {"type": "string"}}}},
    {"name": "payroll_events", "description": "Calendar events of the payroll team", "roles": ["hr"],
     "parameters": {"type": "object", "properties": {}}},
]


class RankTest(unittest.TestCase):
    def setUp(self):
        self.reg = ts.ToolRegistry()
        self.addCleanup(self.reg.close)
        self.reg.register_tools(CATALOG)

    def test_scores_and_reasons_best_first(self):
        got = self.reg.rank("calendar events at work", k=1)
        self.assertIsInstance(got, ts.Ranking)
        self.assertEqual([p.tool for p in got], ["list_events"])
        self.assertIsInstance(got[0], ts.RankedTool)
        self.assertGreater(got[0].score, 0)
        self.assertLessEqual(got[0].score, 1)
        self.assertIn("matched", got[0].reason)
        self.assertIn("calendar", got[0].reason)

    def test_hidden_says_which_filter(self):
        got = self.reg.rank("calendar events at work")
        why = {h.tool: h.rule for h in got.hidden}
        self.assertEqual(why, {"delete_events": "unsafe", "payroll_events": "role"})
        self.assertNotIn("delete_events", [p.tool for p in got])
        opened = self.reg.rank("calendar events", allow_unsafe=True, roles=["hr"], min_score=-1)
        self.assertEqual(opened.hidden, [])
        self.assertEqual({p.tool for p in opened} >= {"delete_events", "payroll_events"}, True)

    def test_cli_options(self):
        got = self.reg.rank("calendar events", k=2, scorer="keyword", debug=True, min_score=-1, allow_unsafe=True)
        self.assertEqual(len(got), 2)
        self.assertTrue(got[0].raw["provenance"].get("matched"), got[0].raw)
        self.assertEqual(list(self.reg.rank("zzz qqq")), [])

    def test_bad_options_named(self):
        with self.assertRaisesRegex(ts.ArgumentError, "k must be from 1"):
            self.reg.rank("x", k=0)
        with self.assertRaisesRegex(ts.ArgumentError, "unknown scorer"):
            self.reg.rank("x", scorer="bm52")
        with self.assertRaisesRegex(ts.ArgumentError, "task is empty"):
            self.reg.rank("")
        with self.assertRaisesRegex(TypeError, r"roles=\['hr'\]"):
            self.reg.rank("x", roles="hr")

    def test_threads_and_asyncio(self):
        errors = []

        def worker():
            try:
                for _ in range(20):
                    self.assertEqual(self.reg.rank("send an email", k=1)[0].tool, "send_email")
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

        async def many():
            return await asyncio.gather(*(self.reg.arank("send an email", k=1) for _ in range(16)))

        for got in asyncio.run(many()):
            self.assertEqual(got[0].tool, "send_email")


if __name__ == "__main__":
    unittest.main()
