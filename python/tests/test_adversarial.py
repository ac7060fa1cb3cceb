"""What an attacker, or a careless approver, tries against ToolRegistry.run and
arun, and the outcome each must have: an approval is exactly True (anything
else is refused, naming what came back), the policy keywords take booleans
only, argument text is parsed once and a key given twice is refused, what
runs is what was approved and audited, and a caller's view keeps its rights
when handed to a selector."""

import asyncio
import gc
import json
import unittest
import warnings
from pathlib import Path
from typing import Optional

import toolselect as ts

from . import test_policy
from .helpers import FakeClient, calls_json
from .test_offer import offered_in

ROOT = Path(__file__).resolve().parents[2]

CFG = ts.ToolSelectionConfig(model="primary", fail_closed=False)


class Approved:
    """An approval object: approved (and by) as attributes."""

    def __init__(self, approved, by=""):
        self.approved, self.by = approved, by


class Fixture(unittest.TestCase):
    # wipe_disk (unsafe), admin_reset (roles: admin), read_file (readOnly),
    # write_file, shell (no schema, human approval), peek (no schema,
    # read-only, not declared readOnly: never runs); self.ran, self.records.
    setUp = test_policy.PolicyTest.setUp

    def one_record(self, before, outcome):
        self.assertEqual([r["outcome"] for r in self.records[before:]], [outcome], "one audit record per run")
        return self.records[-1]


class ApprovalAnswerTest(Fixture):
    """An approval is True, or a mapping or an object whose approved is True.
    Every other answer is a refusal (PolicyError, rule approval_denied) whose
    message names the answer's type and value; the callable does not run and
    the run leaves one refused record."""

    def refused(self, answer, *words, use_arun=False):
        before = len(self.records)
        with self.assertRaises(ts.PolicyError) as cm:
            if use_arun:
                asyncio.run(self.reg.arun("shell", {"cmd": "ls"}, approve=lambda req: answer))
            else:
                self.reg.run("shell", {"cmd": "ls"}, approve=lambda req: answer)
        self.assertEqual(cm.exception.rule, "approval_denied")
        for w in words:
            self.assertIn(w, str(cm.exception))
        self.assertEqual(self.ran, [], f"{answer!r} approved the call")
        self.assertIs(cm.exception.record, self.one_record(before, "refused"))
        return cm.exception

    def test_answers_that_are_not_true_are_refused_naming_what_came_back(self):
        for answer, words in (
                ("false", ("str", "'false'")), ("no", ("str", "'no'")), ("yes", ("str",)), (1, ("int", "1")),
                (None, ("NoneType", "None")), (object(), ("object",)), ([True], ("list",)),
                ({"approved": "yes"}, ("approved is str 'yes'",)), ({"approved": 1}, ("approved is int 1",)),
                ({"by": "ops"}, ("approved is NoneType None",)), (Approved("true"), ("approved is str 'true'",)),
                ("x" * 500, ("str", "...")),
        ):
            for use_arun in (False, True):
                with self.subTest(answer=answer, arun=use_arun):
                    e = self.refused(answer, *words, use_arun=use_arun)
                    self.assertLess(len(str(e)), 400, "the answer's repr is clipped")
        # The contrast: what does approve.
        for answer in (True, {"approved": True, "by": "ops"}, Approved(True, "ops")):
            self.ran.clear()
            self.assertEqual(self.reg.run("shell", {"cmd": "ls"}, approve=lambda req, a=answer: a), "shell ran")
        self.assertEqual(self.records[-1]["approvedBy"], "ops")
        self.ran.clear()
        self.assertIn("approval denied by ops: no", str(self.refused({"approved": False, "by": "ops", "reason": "no"})))

    def test_a_coroutine_left_after_one_await_is_refused_and_closed(self):
        async def really_approve(req):
            return True

        async def approve(req):
            return really_approve(req)  # the missing inner await

        before = len(self.records)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a coroutine left unclosed warns "never awaited"
            with self.assertRaises(ts.PolicyError) as cm:
                asyncio.run(self.reg.arun("shell", {"cmd": "ls"}, approve=approve))
            gc.collect()
        self.assertEqual(cm.exception.rule, "approval_denied")
        self.assertIn("still awaitable", str(cm.exception))
        self.assertIn("coroutine", str(cm.exception))
        self.assertEqual(self.ran, [])
        self.one_record(before, "refused")

    def test_a_future_of_false_is_refused(self):
        async def main():
            fut = asyncio.get_running_loop().create_future()
            fut.set_result(False)

            async def approve(req):
                return fut  # awaited once, the answer is the Future itself

            with self.assertRaises(ts.PolicyError) as cm:
                await self.reg.arun("shell", {"cmd": "ls"}, approve=approve)
            self.assertIn("Future", str(cm.exception))
            # A plain approver returning it is awaited once: False is a denial.
            with self.assertRaises(ts.PolicyError):
                await self.reg.arun("shell", {"cmd": "ls"}, approve=lambda req: fut)
            # run() cannot wait for it at all (other arguments: the declined
            # call itself is not asked about again).
            with self.assertRaises(ts.PolicyError) as cm:
                self.reg.run("shell", {"cmd": "pwd"}, approve=lambda req: fut)
            self.assertIn("use arun", str(cm.exception))

        before = len(self.records)
        asyncio.run(main())
        self.assertEqual(self.ran, [])
        self.assertEqual([r["outcome"] for r in self.records[before:]], ["refused"] * 3)

    def test_a_raising_approver_is_one_refused_record_with_the_error_and_the_args_as_asked(self):
        # The decision: an approver's exception is a refusal (PolicyError, the
        # exception as its __cause__), never a pass and never a bare re-raise.
        def approve(req):
            req["args"]["opts"]["force"] = True  # an edit before failing changes nothing
            raise RuntimeError("approval service down")

        before = len(self.records)
        with self.assertRaises(ts.PolicyError) as cm:
            self.reg.run("shell", {"cmd": "ls", "opts": {"force": False}}, approve=approve)
        rec = self.one_record(before, "refused")
        self.assertIsInstance(cm.exception.__cause__, RuntimeError)
        self.assertIn("RuntimeError: approval service down", rec["error"])
        self.assertEqual(rec["args"], {"cmd": "ls", "opts": {"force": False}})
        self.assertEqual(self.ran, [])

        class Broken:
            @property
            def approved(self):
                raise LookupError("ticket not found")

        before = len(self.records)
        with self.assertRaises(ts.PolicyError) as cm:
            self.reg.run("shell", {"cmd": "ls"}, approve=lambda req: Broken())
        self.assertIn("LookupError: ticket not found", str(cm.exception))
        self.one_record(before, "refused")
        self.assertEqual(self.ran, [])

    def test_what_runs_is_what_was_approved_and_audited(self):
        seen = []

        def approve(req):
            seen.append(json.loads(json.dumps(req["args"])))
            req["args"]["cmd"] = "rm -rf /"  # edits to the request change nothing
            req["args"]["opts"]["recursive"] = True
            return True

        before = len(self.records)
        self.reg.run("shell", {"cmd": "ls", "opts": {"recursive": False}}, approve=approve)
        want = {"cmd": "ls", "opts": {"recursive": False}}
        self.assertEqual(seen, [want])
        self.assertEqual(self.ran, [("shell", want)])
        self.assertEqual(self.one_record(before, "ok")["args"], want)
        # And the callable's own edits do not reach the record either.
        self.reg.bind("shell", lambda **kw: kw["opts"].update(recursive=True))
        before = len(self.records)
        self.reg.run("shell", {"cmd": "ls", "opts": {"recursive": False}}, approve=lambda req: True)
        self.assertEqual(self.one_record(before, "ok")["args"], want)


class PolicyKeywordTest(Fixture):
    """allow_unsafe (and register's safe, the selector's allow_unsafe) take
    True or False only: bool("false") is True. Anything else is a TypeError
    naming the keyword and the type, before anything runs or is recorded."""

    def test_allow_unsafe_takes_booleans_only(self):
        for bad in ("false", "no", "False", 0, 1, None, [], 0.0):
            with self.subTest(bad=bad):
                before = len(self.records)
                for call in (lambda: self.reg.run("wipe_disk", {"path": "/"}, allow_unsafe=bad),
                             lambda: asyncio.run(self.reg.arun("wipe_disk", {"path": "/"}, allow_unsafe=bad)),
                             lambda: self.reg.get("wipe_disk", allow_unsafe=bad),
                             lambda: self.reg.for_caller(allow_unsafe=bad),
                             lambda: ts.ToolSelector(client=FakeClient("{}"), config=CFG, allow_unsafe=bad)):
                    with self.assertRaises(TypeError) as cm:
                        call()
                    self.assertIn("allow_unsafe", str(cm.exception))
                    self.assertIn(type(bad).__name__, str(cm.exception))
                self.assertEqual(self.ran, [])
                self.assertEqual(len(self.records), before)
        with self.assertRaises(TypeError) as cm:
            self.reg.register("rm", lambda path: None, description="Remove", parameters=test_policy.OBJ,
                              safe="false")
        self.assertIn("safe", str(cm.exception))
        with self.assertRaises(TypeError) as cm:  # "false" would register a tool that runs without a schema
            self.reg.register("rm", lambda path: None, description="Remove", allow_no_schema="false",
                              no_schema_mode="full")
        self.assertIn("allow_no_schema", str(cm.exception))
        self.assertNotIn("rm", self.reg)
        with self.assertRaises(TypeError) as cm:
            self.reg.run("shell", {"cmd": "ls"}, approve=True)
        self.assertIn("approve", str(cm.exception))
        self.assertEqual(self.ran, [])

    def test_a_refusal_says_what_to_pass_in_python_words(self):
        with self.assertRaises(ts.PolicyError) as cm:
            self.reg.run("wipe_disk", {"path": "/"})
        self.assertIn("allow_unsafe=True", str(cm.exception))
        self.assertNotIn("Options", str(cm.exception))
        # The audit record of the refusal says it in Python's words too (the
        # library words it with the hints this package gives per rule).
        self.assertIn("(pass allow_unsafe=True to run it)", cm.exception.record["error"])
        self.assertNotIn("Options", cm.exception.record["error"])
        with self.assertRaises(ts.PolicyError) as cm:
            self.reg.run("shell", {"cmd": "ls"})
        self.assertEqual(cm.exception.rule, "approval_required")
        self.assertIn("approve=", str(cm.exception))
        self.assertNotIn("approver is configured", str(cm.exception))


class DuplicateKeyTest(Fixture):
    """Argument text is parsed once; a key given twice in one object is
    refused, naming it (which value a parser keeps differs between parsers,
    so the value checked need not be the value run). The callable gets the
    validated value."""

    def test_a_key_given_twice_is_refused_naming_it(self):
        for text, pointer in (('{"path":"/safe/x","path":"/etc/shadow"}', "/path"),
                              ('{"path":"a","opts":{"mode":"r","mode":"w"}}', "/opts/mode"),
                              (b'{"path":"/safe/x","path":"/etc/shadow"}', "/path")):
            for use_arun in (False, True):
                with self.subTest(text=text, arun=use_arun):
                    before = len(self.records)
                    with self.assertRaises(ts.InvalidArgumentsError) as cm:
                        if use_arun:
                            asyncio.run(self.reg.arun("write_file", text))
                        else:
                            self.reg.run("write_file", text)
                    v = cm.exception.violations[0]
                    self.assertEqual((v.pointer, v.rule), (pointer, "duplicateKey"))
                    self.assertIn(json.dumps(pointer.rsplit("/", 1)[1]), v.message)
                    self.assertEqual(self.ran, [])
                    self.one_record(before, "invalid")
        check = self.reg.validate("write_file", '{"path":"/safe/x","path":"/etc/shadow"}')
        self.assertFalse(check)
        self.assertEqual([(v.pointer, v.rule) for v in check.violations], [("/path", "duplicateKey")])
        with self.assertRaises(ts.UnknownToolError):
            self.reg.validate("nope", '{"a":1,"a":2}')

    def test_argument_text_runs_the_validated_value(self):
        self.assertEqual(self.reg.run("write_file", '{"path": "/safe/x"}'), "write_file ran")
        self.assertEqual(asyncio.run(self.reg.arun("write_file", b'{"path":"/safe/y"}')), "write_file ran")
        self.assertEqual(self.ran, [("write_file", {"path": "/safe/x"}), ("write_file", {"path": "/safe/y"})])
        self.assertEqual(self.records[-1]["args"], {"path": "/safe/y"})
        for text in ('{"path": ', '{"path": "a", "n": NaN}'):
            with self.assertRaises(ts.InvalidArgumentsError) as cm:
                self.reg.run("write_file", text)
            self.assertEqual(cm.exception.violations[0].rule, "json")
        self.assertEqual(self.records[-1]["outcome"], "invalid")


class CallerViewTest(Fixture):
    """registry.for_caller(...) keeps safe, roles and capabilities wherever it
    goes: its list_tools and schema list only what the caller may run, and a
    selector given it offers nothing else (so a model cannot pick the rest)."""

    def test_list_tools_lists_only_what_the_caller_may_run(self):
        names = lambda view: [t["name"] for t in view.list_tools()]  # noqa: E731
        self.assertEqual(names(self.reg.for_caller()), ["read_file", "write_file"])
        self.assertEqual(names(self.reg.for_caller(capabilities=["readOnly"])), ["read_file"])
        self.assertEqual(names(self.reg.for_caller(allow_unsafe=True, roles=["admin"], approve=lambda r: True)),
                         ["wipe_disk", "admin_reset", "read_file", "write_file", "shell"])
        view = self.reg.for_caller(roles=["viewer"])
        self.assertNotIn("admin_reset", view)
        self.assertIn("write_file", view)
        self.assertEqual([t["name"] for t in json.loads(view.get_tools_schema())], ["read_file", "write_file"])

    def select(self, view, **kw):
        client = FakeClient({"content": calls_json(("wipe_disk", {"path": "/"}), ("admin_reset", {"path": "/"}),
                                                   ("write_file", {"path": "a"}))})
        sel = ts.ToolSelector(client=client, config=CFG, top_k=0, **kw)
        self.addCleanup(sel.close)
        task = ts.PlannedTask(id="t", description="clean up the disk", sub_tasks=[])
        result = asyncio.run(sel.select_tool_calls_detailed(task=task, tool_registry=view))
        req = client.requests[0]
        return sorted(offered_in(req["messages"], req.get("tools"))), sorted(result.offered), \
            [c.tool for c in result.calls]

    def test_a_selector_offers_only_what_the_caller_may_run(self):
        # The selector itself would offer unsafe and admin tools; the caller may not run them.
        sent, offered, calls = self.select(self.reg.for_caller(), allow_unsafe=True, roles=["admin"])
        self.assertEqual(sent, ["read_file", "write_file"])
        self.assertEqual(offered, ["read_file", "write_file"])
        self.assertEqual(calls, ["write_file"], "the model's pick of a tool the caller may not run was kept")
        sent, _, _ = self.select(self.reg.for_caller(capabilities=["readOnly"]), allow_unsafe=True)
        self.assertEqual(sent, ["read_file"])
        # A caller with more rights is offered them; a selector without roles
        # of its own offers as the caller (as Go's chat.Resolve does).
        sent, _, calls = self.select(self.reg.for_caller(roles=["admin"]))
        self.assertEqual(sent, ["admin_reset", "read_file", "write_file"])
        self.assertEqual(calls, ["admin_reset", "write_file"])
        # An unsafe tool needs both the view and the selector to allow it.
        self.assertNotIn("wipe_disk", self.select(self.reg.for_caller(allow_unsafe=True))[0])
        self.assertIn("wipe_disk", self.select(self.reg.for_caller(allow_unsafe=True), allow_unsafe=True)[0])


if __name__ == "__main__":
    unittest.main()


class NumberTest(unittest.TestCase):
    """A number is judged as the value the callable receives: text that
    rounds across a bound is refused (as Go, the C ABI and the proxy refuse
    it), and an ``int`` parameter receives an ``int``."""

    def setUp(self):
        self.reg = ts.ToolRegistry()
        self.got = []

        def ratio(f: float) -> None:
            """A ratio strictly between 0 and 1."""
            self.got.append(f)

        def count(n: int, more: "list[int]") -> None:
            """Counts."""
            self.got.append((n, more))

        self.reg.register("ratio", ratio, parameters={
            "type": "object", "properties": {"f": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}},
            "required": ["f"]})
        self.reg.register(count)

    def test_a_number_rounding_across_a_bound_is_refused(self):
        for text, rule in (('{"f": 1e-400}', "exclusiveMinimum"), ('{"f": 0.99999999999999999999}', "exclusiveMaximum")):
            with self.subTest(text=text):
                with self.assertRaises(ts.InvalidArgumentsError) as cm:
                    self.reg.run("ratio", text)
                self.assertEqual([v.rule for v in cm.exception.violations], [rule])
        self.assertEqual(self.got, [], "nothing ran")
        self.reg.run("ratio", '{"f": 0.5}')
        self.assertEqual(self.got, [0.5])

    def test_the_one_table_of_numbers(self):
        """testdata/numbers/cases.json, the table Go's registry, the C ABI
        and the MCP proxy are held to: the same verdict on every row, and
        the callable receives the value passed on."""
        doc = json.loads((ROOT / "testdata" / "numbers" / "cases.json").read_text())
        got = []

        def table(f: Optional[float] = None, n: Optional[int] = None) -> None:
            """Takes the table's numbers."""
            got.append({k: v for k, v in (("f", f), ("n", n)) if v is not None})

        self.reg.register("table", table, parameters=doc["schema"])
        for case in doc["cases"]:
            with self.subTest(args=case["args"], why=case.get("why", "")):
                del got[:]
                if "refused" in case:
                    with self.assertRaises(ts.InvalidArgumentsError) as cm:
                        self.reg.run("table", case["args"])
                    self.assertEqual([(v.pointer, v.rule) for v in cm.exception.violations],
                                     [(case["pointer"], case["refused"])])
                    self.assertEqual(got, [], "nothing ran")
                else:
                    self.reg.run("table", case["args"])
                    self.assertEqual(got, [json.loads(case["passed"])])

    def test_an_int_parameter_receives_an_int(self):
        self.reg.run("count", '{"n": 1.0, "more": [2.0, 1e2, 3]}')
        n, more = self.got[-1]
        self.assertEqual((n, more), (1, [2, 100, 3]))
        self.assertEqual([type(x) for x in [n, *more]], [int, int, int, int])
        with self.assertRaises(ts.InvalidArgumentsError):
            self.reg.run("count", '{"n": 1.5, "more": []}')
