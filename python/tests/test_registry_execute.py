"""llm-common's registry surface on toolselect's ToolRegistry: execute(),
get() and for_caller() run through arun, so the one run policy and its
audit records cover the executor side too."""

import asyncio
import json
import unittest

import toolselect as ts

from . import test_policy


class ExecutePolicyTest(unittest.TestCase):
    """llm-common's registry surface, execute() and get(), runs through arun:
    the same policy, the same audit records. execute() reports a refusal as
    llm-common's registry reports a failure, ToolResult(success=False)."""

    setUp = test_policy.PolicyTest.setUp

    def execute(self, *args, **kw):
        return asyncio.run(self.reg.execute(*args, **kw))

    def refused_result(self, rule_word, res, before):
        self.assertIsInstance(res, ts.ToolResult)
        self.assertFalse(res.success)
        self.assertIn(rule_word, res.error)
        self.assertEqual(self.ran, [], "the callable ran although the policy refused it")
        self.assertEqual(len(self.records), before + 1, "a refusal leaves an audit record")
        self.assertEqual(self.records[-1]["outcome"], "refused")

    def test_execute_applies_the_default_policy(self):
        for tool, word in (("wipe_disk", "unsafe"), ("admin_reset", "role"), ("shell", "approval")):
            with self.subTest(tool):
                before = len(self.records)
                self.refused_result(word, self.execute(tool, {"path": "/"}), before)
        res = self.execute("write_file", {"path": "a"})
        self.assertEqual((res.success, res.data, res.error), (True, "write_file ran", None))
        self.assertEqual((self.records[-1]["tool"], self.records[-1]["outcome"]), ("write_file", "ok"))

    def test_execute_never_raises_for_a_failed_run(self):
        res = self.execute("write_file", {"path": 3})
        self.assertFalse(res.success)
        self.assertIn("path", res.error)
        self.assertEqual(self.records[-1]["outcome"], "invalid")
        res = self.execute("nope", {})
        self.assertEqual((res.success, res.error), (False, "Tool 'nope' not found"))

        def boom(path):
            raise RuntimeError("disk on fire")
        self.reg.bind("write_file", boom)
        res = self.execute("write_file", path="a")
        self.assertEqual((res.success, res.error), (False, "disk on fire"))
        self.assertEqual(self.records[-1]["outcome"], "tool_error")
        with self.assertRaises(TypeError):
            self.execute("write_file", {"path": "a"}, path="b")

    def test_for_caller_runs_with_the_callers_rights(self):
        admin = self.reg.for_caller(allow_unsafe=True, roles=["admin"], approve=lambda req: True)
        for tool in ("wipe_disk", "admin_reset", "shell"):
            res = asyncio.run(admin.execute(tool, {"path": "/"}))
            self.assertEqual((res.success, res.data), (True, f"{tool} ran"), res.error)
        self.assertEqual([r[0] for r in self.ran], ["wipe_disk", "admin_reset", "shell"])
        self.assertEqual([r["outcome"] for r in self.records[-3:]], ["ok", "ok", "ok"])
        viewer = self.reg.for_caller(roles=["viewer"])
        self.assertFalse(asyncio.run(viewer.execute("admin_reset", path="x")).success)
        may_run = ["read_file", "write_file"]  # not unsafe, role, approval or read-only-without-readOnly tools
        self.assertEqual([t["name"] for t in json.loads(viewer.get_tools_schema())], may_run)
        self.assertEqual([t["name"] for t in viewer.list_tools()], may_run)
        with self.assertRaises(TypeError):
            self.reg.for_caller(roles="admin")

    def test_get_returns_a_tool_that_runs_through_the_policy(self):
        self.assertIsNone(self.reg.get("nope"))
        tool = self.reg.get("wipe_disk")
        self.assertEqual(tool.metadata.name, "wipe_disk")
        self.assertEqual(tool.metadata.to_schema(), test_policy.OBJ)
        with self.assertRaises(ts.PolicyError) as cm:
            asyncio.run(tool.execute(path="/"))
        self.assertEqual(cm.exception.rule, "unsafe")
        self.assertEqual((self.ran, self.records[-1]["outcome"]), ([], "refused"))
        allowed = self.reg.get("wipe_disk", allow_unsafe=True)
        self.assertEqual(asyncio.run(allowed.execute(path="/")), "wipe_disk ran")
        self.assertEqual(self.reg.for_caller(roles=["admin"]).get("admin_reset").metadata.description, "Reset")
        self.assertEqual(asyncio.run(self.reg.for_caller(roles=["admin"]).get("admin_reset").execute(path="x")),
                         "admin_reset ran")
        self.assertEqual(self.reg.list_tools()[0], {"name": "wipe_disk", "description": "Erase a disk"})


if __name__ == "__main__":
    unittest.main()
