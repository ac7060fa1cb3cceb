"""toolselect.testing.FakeModel: the library's own fake model, no Go needed."""

import asyncio
import json
import unittest
import urllib.error
import urllib.request

import toolselect as ts
from toolselect.testing import FakeModel

from .helpers import make_registry, task


def post(url, body):
    req = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


class FakeModelTest(unittest.TestCase):
    def test_selection_against_scripted_replies(self):
        reg = make_registry()
        self.addCleanup(reg.close)
        with FakeModel([{"calls": [{"tool": "add", "args": {"a": 1, "b": 2}, "reasoning": "sum"}]}, "not JSON at all", 503]) as fake:
            self.assertTrue(fake.url.startswith("http://127.0.0.1:") and fake.url.endswith("/v1"), fake.url)
            sel = ts.ToolSelector(config=ts.ToolSelectionConfig(base_url=fake.url, model="m1", fallback_model="m2"))
            self.addCleanup(sel.close)
            calls = asyncio.run(sel.select_tool_calls(task(), reg))
            self.assertEqual(calls, [ts.ToolCall("add", {"a": 1, "b": 2}, "sum")])
            res = asyncio.run(sel.select_tool_calls_detailed(task(), reg))
            self.assertEqual([a.kind for a in res.attempts], ["parse", "http_status"])
            self.assertEqual(res.calls, [])
            bodies = fake.requests
            self.assertEqual([b["model"] for b in bodies], ["m1", "m1", "m2"])
            self.assertIn("Add 1 and 2", json.dumps(bodies[0]["messages"]))
        self.assertTrue(fake.closed)
        with self.assertRaises(ts.HandleError):
            fake.requests
        with self.assertRaises(urllib.error.URLError):
            post(fake.url, {"model": "m"})

    def test_reply_forms(self):
        with FakeModel([{"calls": []}, {"status": 429, "content": "slow down"}]) as fake:
            self.assertEqual(json.loads(post(fake.url, {"model": "m"})["choices"][0]["message"]["content"]),
                             {"calls": []})
            with self.assertRaises(urllib.error.HTTPError) as cm:
                post(fake.url, {"model": "m"})
            self.assertEqual(cm.exception.code, 429)
            self.assertIn("slow down", cm.exception.read().decode())
        with FakeModel() as fake:  # no script: no calls
            self.assertEqual(len(post(fake.url, {"model": "m"})["choices"]), 1)

    def test_bad_scripts_are_named(self):
        with self.assertRaisesRegex(TypeError, "list of replies"):
            FakeModel({"calls": []})
        with self.assertRaisesRegex(TypeError, "reply 0"):
            FakeModel([3.5])
        with self.assertRaisesRegex(ts.ArgumentError, "tool is empty"):
            FakeModel([{"calls": [{"tool": ""}]}])
        with self.assertRaisesRegex(ts.ArgumentError, "cals"):
            FakeModel([{"cals": []}])
        with self.assertRaisesRegex(ts.ArgumentError, "HTTP status"):
            FakeModel([42])


if __name__ == "__main__":
    unittest.main()
