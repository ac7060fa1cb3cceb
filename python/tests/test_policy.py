"""One policy on every run path (no path around the rules): ToolRegistry.run/arun go through
the Go executor's policy. A refusal raises PolicyError naming the rule and the
callable is not run; every call leaves an audit record."""

import asyncio
import gc
import re
import time
import unittest
import warnings

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
        self.assertEqual(rec["policy"], rule, "the record names the rule the exception carries")
        self.assertIs(cm.exception.record, rec)
        return cm.exception

    def test_unsafe_needs_allow_unsafe(self):
        e = self.refused("unsafe", ts.ToolCall("wipe_disk", {"path": "/"}))
        self.assertIn("unsafe", str(e))
        self.assertEqual(self.reg.run(ts.ToolCall("wipe_disk", {"path": "/"}), allow_unsafe=True), "wipe_disk ran")
        self.assertEqual(self.records[-1]["outcome"], "ok")
        self.assertIn("unsafe-allowed", self.records[-1]["policy"])

    def test_an_approver_that_raises_is_recorded_by_its_rule(self):
        def approve(request):
            raise RuntimeError("the approval service is down")
        e = self.refused("approval_denied", "shell", {"cmd": "ls"}, approve=approve)
        self.assertIsInstance(e.__cause__, RuntimeError)

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


# The keys of the Go executor's Record in JSON, in its order (executor/audit.go).
GO_KEYS = ["id", "tool", "args", "originalArgs", "validated", "repaired", "policy", "approvedBy", "argsSha256",
           "approvalEdited", "start", "durationMs", "outcome", "error"]
GO_START = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$")  # RFC 3339, UTC, Go's trimmed fraction


class OneRecordPerRunTest(unittest.TestCase):
    """Every run leaves exactly one audit record shaped like the Go
    executor's: when the approver fails, when no callable is bound, for an
    async tool run with run(), with or without a call id."""

    def setUp(self):
        self.records = []
        self.reg = ts.ToolRegistry(audit=self.records.append)
        self.addCleanup(self.reg.close)
        self.ran = []
        self.reg.register("shell", lambda **kw: self.ran.append(kw) or "shell ran", description="Run a command",
                          allow_no_schema=True, no_schema_mode="human-approval")
        self.reg.register("write_file", lambda path: self.ran.append(path) or "written", description="Write",
                          parameters=OBJ)

        async def fetch(path):
            await asyncio.sleep(0)
            self.ran.append(path)
            if path == "bad":
                raise ValueError("no such page")
            return f"fetched {path}"
        self.reg.register("fetch", fetch, description="Fetch a page", parameters=OBJ)

    def one(self, before):
        """The one record written since `before` records, checked for Go's shape."""
        self.assertEqual(len(self.records), before + 1, [r.get("outcome") for r in self.records[before:]])
        rec = self.records[-1]
        keys = list(rec)
        self.assertEqual(keys, [k for k in GO_KEYS if k in rec], "keys out of Go's order")
        for k in ("tool", "args", "validated", "start", "durationMs", "outcome"):
            self.assertIn(k, rec)
        for k in ("id", "policy", "approvedBy", "error"):
            if k in rec:
                self.assertNotEqual(rec[k], "", f"{k} is empty: Go leaves it out")
        self.assertRegex(rec["start"], GO_START)
        self.assertIs(list(self.reg.audit_records)[-1], rec)
        return rec

    def test_an_approver_that_raises_is_a_denial_with_a_record(self):
        def approve(req):
            raise RuntimeError("approval service down")
        n = len(self.records)
        with self.assertRaises(ts.PolicyError) as cm:
            self.reg.run("shell", {"cmd": "ls"}, approve=approve)
        rec = self.one(n)
        self.assertEqual(cm.exception.rule, "approval_denied")
        self.assertIsInstance(cm.exception.__cause__, RuntimeError)
        self.assertIs(cm.exception.record, rec)
        self.assertEqual(rec["outcome"], "refused")
        self.assertEqual(rec["error"], 'call of tool "shell" refused: approval denied: the approver failed: '
                                       'RuntimeError: approval service down')
        self.assertEqual(self.ran, [])

    def test_an_async_approver_that_raises_in_arun(self):
        async def approve(req):
            raise ConnectionError("pager unreachable")
        n = len(self.records)
        with self.assertRaises(ts.PolicyError):
            asyncio.run(self.reg.arun("shell", {"cmd": "ls"}, approve=approve))
        self.assertIn("the approver failed: ConnectionError: pager unreachable", self.one(n)["error"])
        self.assertEqual(self.ran, [])

    def test_an_approver_interrupted_is_recorded_as_canceled_and_reraised(self):
        def approve(req):
            raise KeyboardInterrupt
        n = len(self.records)
        with self.assertRaises(KeyboardInterrupt):
            self.reg.run("shell", {"cmd": "ls"}, approve=approve)
        rec = self.one(n)
        self.assertEqual(rec["outcome"], "canceled")
        self.assertEqual(rec["error"], 'call of tool "shell" canceled: waiting for approval: KeyboardInterrupt')
        self.assertEqual(self.ran, [])

    def test_run_with_an_async_approver_denies_rather_than_approving_a_coroutine(self):
        async def approve(req):
            return True
        n = len(self.records)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "coroutine was never awaited"
            with self.assertRaises(ts.PolicyError) as cm:
                self.reg.run("shell", {"cmd": "ls"}, approve=approve)
        self.assertIn("use arun", str(cm.exception))
        self.assertEqual(self.one(n)["outcome"], "refused")
        self.assertEqual(self.ran, [])

    def test_a_tool_without_a_callable_leaves_a_record(self):
        self.reg.register_tools([{"name": "unbound", "description": "No callable", "parameters": OBJ}])
        n = len(self.records)
        with self.assertRaises(ts.UnknownToolError):
            self.reg.run("unbound", {"path": "x"})
        rec = self.one(n)
        self.assertEqual((rec["outcome"], rec["validated"]), ("refused", False))
        self.assertEqual(rec["error"], 'call of tool "unbound" refused: no handler bound to the tool "unbound"')

    def test_run_of_an_async_tool_records_when_the_coroutine_ends(self):
        n = len(self.records)
        coro = self.reg.run("fetch", {"path": "a"})
        self.assertEqual(len(self.records), n, "recorded before the coroutine ran")
        self.assertEqual(asyncio.run(coro), "fetched a")
        self.assertEqual(self.one(n)["outcome"], "ok")
        n = len(self.records)
        with self.assertRaises(ValueError):
            asyncio.run(self.reg.run("fetch", {"path": "bad"}))
        rec = self.one(n)
        self.assertEqual((rec["outcome"], rec["error"]), ("tool_error", "ValueError: no such page"))

    def test_an_async_tool_never_awaited_is_recorded_as_canceled(self):
        n = len(self.records)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # "coroutine ... was never awaited": true
            coro = self.reg.run("fetch", {"path": "a"})
            del coro
            gc.collect()
        rec = self.one(n)
        self.assertEqual(rec["outcome"], "canceled")
        self.assertIn("never awaited", rec["error"])
        self.assertEqual(self.ran, [])

    def test_arun_cancelled_is_recorded_as_canceled(self):
        async def slow(path):
            await asyncio.sleep(10)
        self.reg.bind("fetch", slow)

        async def main():
            task = asyncio.ensure_future(self.reg.arun("fetch", {"path": "a"}))
            await asyncio.sleep(0.01)
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
        n = len(self.records)
        asyncio.run(main())
        rec = self.one(n)
        self.assertEqual((rec["outcome"], rec["error"]), ("canceled", 'call of tool "fetch" canceled: CancelledError'))

    def test_the_id_is_left_out_when_empty_and_kept_when_given(self):
        n = len(self.records)
        self.reg.run("write_file", {"path": "a"})
        self.assertNotIn("id", self.one(n))
        call = ts.ToolCall("write_file", {"path": "b"})
        call.id = "call_7"
        n = len(self.records)
        self.reg.run(call)
        self.assertEqual(self.one(n)["id"], "call_7")

    def test_start_is_when_the_call_reached_the_policy(self):
        def approve(req):
            time.sleep(0.05)
            return {"approved": True, "by": "ops"}
        before = time.time()
        n = len(self.records)
        self.reg.run("shell", {"cmd": "ls"}, approve=approve)
        rec = self.one(n)
        self.assertEqual(rec["approvedBy"], "ops")
        start = time.mktime(time.strptime(rec["start"][:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
        start += float("0." + rec["start"][20:-1]) if "." in rec["start"] else 0
        self.assertLess(abs(start - before), 0.04, "start is not when the call reached the policy")
        self.assertGreaterEqual(rec["durationMs"], 50, "the approval wait is part of the duration, as in Go")

    def test_a_refusal_is_the_go_executors_own_record(self):
        self.reg.register("wipe", lambda path: 0, description="Erase", parameters=OBJ, safe=False)
        n = len(self.records)
        with self.assertRaises(ts.PolicyError):
            self.reg.run("wipe", {"path": "/"})
        self.assertEqual(self.one(n)["outcome"], "refused")


if __name__ == "__main__":
    unittest.main()
