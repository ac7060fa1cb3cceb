"""One policy on every run path (issue 21): ToolRegistry.run/arun go through
the Go executor's policy. A refusal raises PolicyError naming the rule and the
callable is not run; every call leaves an audit record."""

import asyncio
import unittest

import toolselect as ts

OBJ = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


class PolicyTest(unittest.TestCase):
    def setUp(self):
        self.records = []
        self.reg = ts.ToolRegistry(audit=self.records.append)
        self.addCleanup(self.reg.close)
        self.ran = []

        def tool(name):
            def fn(**kw):
                self.ran.append((name, kw))
                return f"{name} ran"
            return fn

        self.reg.register("wipe_disk", tool("wipe_disk"), description="Erase a disk", parameters=OBJ, safe=False)
        self.reg.register("admin_reset", tool("admin_reset"), description="Reset", parameters=OBJ, roles=["admin"])
        self.reg.register("read_file", tool("read_file"), description="Read", parameters=OBJ, capabilities=["readOnly"])
        self.reg.register("write_file", tool("write_file"), description="Write", parameters=OBJ)
        self.reg.register("shell", tool("shell"), description="Run a command", allow_no_schema=True,
                          no_schema_mode="human-approval")
        self.reg.register("peek", tool("peek"), description="Look", allow_no_schema=True,
                          no_schema_mode="read-only")

    def refused(self, rule, call, args=None, **kw):
        before = len(self.records)
        with self.assertRaises(ts.PolicyError) as cm:
            self.reg.run(call, args, **kw)
        self.assertEqual(cm.exception.rule, rule, str(cm.exception))
        self.assertEqual(self.ran, [], "the callable ran although the policy refused it")
        self.assertEqual(len(self.records), before + 1, "a refusal leaves an audit record")
        rec = self.records[-1]
        self.assertEqual(rec["outcome"], "refused")
        self.assertIs(cm.exception.record, rec)
        return cm.exception

    def test_unsafe_needs_allow_unsafe(self):
        e = self.refused("unsafe", ts.ToolCall("wipe_disk", {"path": "/"}))
        self.assertIn("unsafe", str(e))
        self.assertEqual(self.reg.run(ts.ToolCall("wipe_disk", {"path": "/"}), allow_unsafe=True), "wipe_disk ran")
        self.assertEqual(self.records[-1]["outcome"], "ok")
        self.assertIn("unsafe-allowed", self.records[-1]["policy"])

    def test_roles(self):
        self.refused("role", "admin_reset", {"path": "x"})
        self.refused("role", "admin_reset", {"path": "x"}, roles=["viewer"])
        self.assertEqual(self.reg.run("admin_reset", {"path": "x"}, roles=["viewer", "admin"]), "admin_reset ran")

    def test_capabilities(self):
        self.refused("capability", "write_file", {"path": "x"}, capabilities=["readOnly"])
        self.assertEqual(self.reg.run("read_file", {"path": "x"}, capabilities=["readOnly"]), "read_file ran")
        self.assertEqual(self.reg.run("write_file", {"path": "x"}), "write_file ran")

    def test_no_schema_modes_and_approval(self):
        self.refused("approval_required", "shell", {"cmd": "ls"})
        self.refused("no_schema_read_only", "peek", {})
        asked = []
        e = self.refused("approval_denied", "shell", {"cmd": "rm -rf /"},
                         approve=lambda req: asked.append(req) or {"approved": False, "by": "ops", "reason": "no"})
        self.assertIn("denied by ops: no", str(e))
        self.assertEqual(asked[0]["tool"], "shell")
        self.assertEqual(self.reg.run("shell", {"cmd": "ls"}, approve=lambda req: True), "shell ran")
        rec = self.records[-1]
        self.assertEqual((rec["outcome"], rec["approvedBy"], rec["validated"]), ("ok", "approver", False))

    def test_invalid_and_unknown(self):
        with self.assertRaises(ts.InvalidArgumentsError) as cm:
            self.reg.run("write_file", {"path": 3})
        self.assertEqual(cm.exception.violations[0].pointer, "/path")
        self.assertEqual(self.records[-1]["outcome"], "invalid")
        with self.assertRaises(ts.UnknownToolError):
            self.reg.run("nope", {})
        self.assertEqual(self.ran, [])

    def test_audit_of_a_run_and_a_tool_error(self):
        self.reg.run("write_file", {"path": "a"})
        rec = self.records[-1]
        self.assertEqual(rec["tool"], "write_file")
        self.assertEqual(rec["args"], {"path": "a"})
        self.assertEqual(rec["policy"], "schema")
        self.assertGreaterEqual(rec["durationMs"], 0)
        self.assertTrue(rec["start"].endswith("Z"))

        def boom(path):
            raise RuntimeError("disk on fire")
        self.reg.bind("write_file", boom)
        with self.assertRaises(RuntimeError):
            self.reg.run("write_file", {"path": "a"})
        self.assertEqual((self.records[-1]["outcome"], self.records[-1]["error"]), ("tool_error", "RuntimeError: disk on fire"))
        self.assertEqual(list(self.reg.audit_records)[-1], self.records[-1])

    def test_arun_same_policy(self):
        async def approve(req):
            return True

        async def main():
            with self.assertRaises(ts.PolicyError):
                await self.reg.arun("wipe_disk", {"path": "/"})
            self.assertEqual(await self.reg.arun("shell", {"cmd": "ls"}, approve=approve), "shell ran")
            return await self.reg.arun("wipe_disk", {"path": "/"}, allow_unsafe=True)

        self.assertEqual(asyncio.run(main()), "wipe_disk ran")
        self.assertEqual([r[0] for r in self.ran], ["shell", "wipe_disk"])

    def test_roles_must_be_a_list(self):
        with self.assertRaises(TypeError):
            self.reg.run("admin_reset", {"path": "x"}, roles="admin")


if __name__ == "__main__":
    unittest.main()
