"""Per-tool allow/ask/deny rules (rules=) on the Python front doors: run and
arun, get and for_caller, and the ToolSelector's offer. The library's
registry.Eligibility.Decide reads them, as it does for the Go executor and
the MCP proxy: deny first, then ask, then allow; deny and ask patterns
match whatever the case, allow patterns case for case."""

import asyncio
import json
import unittest

import toolselect as ts
from toolselect._run import _RULE_HINTS

from .helpers import FakeClient, calls_json, make_registry, run, task

OBJ = {"type": "object", "properties": {"path": {"type": "string"}}}


class RulesTest(unittest.TestCase):
    def setUp(self):
        self.records = []
        self.reg = ts.ToolRegistry(audit=self.records.append)
        self.addCleanup(self.reg.close)
        self.ran = []

        def tool(name):
            def fn(**kw):
                self.ran.append(name)
                return f"{name} ran"
            return fn

        self.reg.register("fs__delete", tool("fs__delete"), description="Delete a file", parameters=OBJ, safe=False)
        self.reg.register("fs__read", tool("fs__read"), description="Read a file", parameters=OBJ)
        self.reg.register("mail__send", tool("mail__send"), description="Send mail", parameters=OBJ)
        self.reg.register("pay", tool("pay"), description="Pay", parameters=OBJ, requires_approval=True)

    def refused(self, rule, tool, **kw):
        before = len(self.records)
        with self.assertRaises(ts.PolicyError) as cm:
            self.reg.run(tool, {"path": "/x"}, **kw)
        self.assertEqual(cm.exception.rule, rule, str(cm.exception))
        self.assertEqual(self.ran, [], "the callable ran although the policy refused it")
        self.assertEqual(len(self.records), before + 1, "a refusal leaves one audit record")
        self.assertEqual(self.records[-1]["policy"], rule)
        return cm.exception

    def test_deny_beats_allow_unsafe_and_allow_rules(self):
        e = self.refused("denied_by_rule", "fs__delete", allow_unsafe=True, rules={"deny": ["fs__delete"]})
        self.assertIn('a pattern in rules["deny"] matches it', str(e))
        self.assertIn('rules["deny"]', self.records[-1]["error"], "the record says it in Python's names too")
        # Deny is read first, however specific the allow pattern.
        self.refused("denied_by_rule", "fs__delete", allow_unsafe=True,
                     rules={"allow": ["fs__delete"], "deny": ["fs__*"]})
        # Even a safe tool, even with an approver who would say yes.
        self.refused("denied_by_rule", "fs__read", rules={"deny": ["fs__read"]}, approve=lambda r: True)

    def test_the_hint_is_worded_in_python(self):
        self.assertEqual(_RULE_HINTS["denied_by_rule"],
                         'a pattern in rules["deny"] matches it; deny is read first, so no allow rule undoes it')

    def test_an_ask_rule_asks_about_a_safe_tool(self):
        asked = []

        def approve(request):
            asked.append(request["tool"])
            return True

        self.assertEqual(self.reg.run("fs__read", {"path": "/x"}, rules={"ask": ["fs__read"]}, approve=approve),
                         "fs__read ran")
        self.assertEqual(asked, ["fs__read"])
        self.assertIn("ask", self.records[-1]["policy"])
        self.assertEqual(self.records[-1]["approvedBy"], "approver")
        # Without the rule, the safe tool runs unasked.
        self.reg.run("fs__read", {"path": "/y"}, approve=approve)
        self.assertEqual(asked, ["fs__read"])
        self.ran.clear()
        # Without an approver the ask rule refuses, naming approve=.
        e = self.refused("approval_required", "fs__read", rules={"ask": ["fs__read"]})
        self.assertIn("an ask rule names it", str(e))
        self.assertIn("approve=", str(e))

    def test_an_allow_rule_runs_an_unsafe_tool_without_allow_unsafe(self):
        self.refused("unsafe", "fs__delete")
        self.assertEqual(self.reg.run("fs__delete", {"path": "/x"}, rules={"allow": ["fs__delete"]}), "fs__delete ran")
        self.assertIn("unsafe-allowed", self.records[-1]["policy"])
        # Unasked even when an approver is given (it would ask about an
        # unsafe tool no rule names)...
        asked = []
        self.reg.run("fs__delete", {"path": "/x"}, rules={"allow": ["fs__delete"]},
                     approve=lambda r: asked.append(r) or True)
        self.assertEqual(asked, [])
        # ...but a tool that requires approval is still asked about.
        self.ran.clear()
        self.refused("approval_required", "pay", rules={"allow": ["pay"]})

    def test_glob_patterns_and_case(self):
        self.refused("denied_by_rule", "mail__send", rules={"deny": ["mail__*"]})
        self.refused("denied_by_rule", "mail__send", rules={"deny": ["MAIL__S?ND"]})  # deny ignores case
        self.refused("denied_by_rule", "fs__read", rules={"deny": ["fs__[rw]*"]})
        self.assertEqual(self.reg.run("fs__delete", {"path": "/x"}, rules={"allow": ["fs__*"]}), "fs__delete ran")
        self.ran.clear()
        self.refused("unsafe", "fs__delete", rules={"allow": ["FS__*"]})  # allow matches case for case
        # ? is one character: "mail?send" does not match "mail__send".
        self.assertEqual(self.reg.run("mail__send", {"path": "/x"}, rules={"deny": ["mail?send"]}), "mail__send ran")

    def test_the_edited_arguments_are_checked_under_the_same_rules(self):
        sent = []
        call = self.reg._call

        def spy(name, *args, **kw):
            if name == "toolselect_registry_authorize":
                sent.append(json.loads(args[1]))
            return call(name, *args, **kw)

        self.reg._call = spy
        rules = {"ask": ["fs__*"], "deny": ["admin_*"]}
        out = self.reg.run("fs__read", {"path": "/x"}, rules=rules,
                           approve=lambda r: {"approved": True, "args": {"path": "/y"}})
        self.assertEqual(out, "fs__read ran")
        self.assertTrue(self.records[-1]["approvalEdited"])
        self.assertEqual(len(sent), 2, "the first check and the re-check of the edited arguments")
        self.assertEqual([p.get("rules") for p in sent], [rules, rules])
        # Invalid edited arguments are refused by the re-check, rules and all.
        self.ran.clear()
        with self.assertRaises(ts.InvalidArgumentsError):
            self.reg.run("fs__read", {"path": "/x"}, rules=rules,
                         approve=lambda r: {"approved": True, "args": {"path": 1}})
        self.assertEqual(self.ran, [])
        self.assertEqual(sent[-1].get("rules"), rules)

    def test_no_rules_sends_none(self):
        sent = []
        call = self.reg._call
        self.reg._call = lambda name, *a, **kw: (sent.append(json.loads(a[1])) if name.endswith("authorize") else None,
                                                 call(name, *a, **kw))[1]
        self.reg.run("fs__read", {"path": "/x"})
        self.assertNotIn("rules", sent[0])

    def test_a_misspelt_list_is_an_error_naming_it(self):
        for rules, words in (({"alow": ["x"]}, ['"rules.alow"', "allow, ask, deny"]),
                             ({"Deny": ["x"]}, ['"rules.Deny"', 'write "deny"']),
                             ({"unsafe": "deny"}, ['"rules.unsafe"']),
                             ({"deny": ["[x"]}, ['rules.deny[0] "[x"', "syntax error in pattern"]),
                             ({"ask": [""]}, ["rules.ask[0]", "empty pattern"])):
            with self.subTest(rules=rules):
                with self.assertRaises(ts.ArgumentError) as cm:
                    self.reg.run("fs__read", {"path": "/x"}, rules=rules)
                self.assertIsInstance(cm.exception, ValueError)
                for w in words:
                    self.assertIn(w, str(cm.exception))
                self.assertNotIn("policy_json", str(cm.exception), "the C argument's name means nothing in Python")
        self.assertEqual(self.ran, [])
        self.assertEqual(self.records, [], "a bad keyword is not a call: nothing to audit")

    def test_a_string_is_not_a_list(self):
        for rules, words in (({"deny": "fs__*"}, ["rules['deny']", "not one string", "['fs__*']"]),
                             ("deny", ["rules must be a mapping"]),
                             (["fs__*"], ["rules must be a mapping"]),
                             ({"deny": None}, ["rules['deny']", "None"]),
                             ({"deny": [3]}, ["rules['deny'][0]", "int 3"]),
                             ({1: ["x"]}, ["rules keys"])):
            with self.subTest(rules=rules):
                with self.assertRaises(TypeError) as cm:
                    self.reg.run("fs__read", {"path": "/x"}, rules=rules)
                for w in words:
                    self.assertIn(w, str(cm.exception))
        self.assertEqual(self.ran, [])

    def test_a_typed_rules_value_and_other_sequences(self):
        rules = ts.ToolRules(deny=["mail__*"])
        self.refused("denied_by_rule", "mail__send", rules=rules)
        self.refused("denied_by_rule", "mail__send", rules={"deny": ("mail__send",)})

    def test_arun_applies_the_rules(self):
        async def main():
            with self.assertRaises(ts.PolicyError) as cm:
                await self.reg.arun("fs__delete", {"path": "/x"}, allow_unsafe=True, rules={"deny": ["fs__*"]})
            self.assertEqual(cm.exception.rule, "denied_by_rule")
            asked = []

            async def approve(request):
                asked.append(request["tool"])
                return {"approved": True, "args": {"path": "/z"}}

            out = await self.reg.arun("mail__send", {"path": "/x"}, rules={"ask": ["MAIL__*"]}, approve=approve)
            self.assertEqual((out, asked), ("mail__send ran", ["mail__send"]))
            self.assertEqual(await self.reg.arun("fs__delete", {"path": "/x"}, rules={"allow": ["fs__delete"]}),
                             "fs__delete ran")
            with self.assertRaises(ts.ArgumentError):
                await self.reg.arun("fs__read", {"path": "/x"}, rules={"alow": ["x"]})

        asyncio.run(main())

    def test_get_and_for_caller_keep_the_rules(self):
        with self.assertRaises(ts.ArgumentError) as cm:
            self.reg.get("fs__read", rules={"alow": ["x"]})
        self.assertIn('"rules.alow"', str(cm.exception))
        with self.assertRaises(ts.ArgumentError):
            self.reg.for_caller(rules={"deny": ["[x"]})
        got = self.reg.get("mail__send", rules={"deny": ["mail__*"]})
        with self.assertRaises(ts.PolicyError) as cm:
            asyncio.run(got.execute(path="/x"))
        self.assertEqual(cm.exception.rule, "denied_by_rule")
        caller = self.reg.for_caller(rules={"deny": ["mail__*"], "allow": ["fs__delete"]})
        self.assertEqual(sorted(t["name"] for t in caller.list_tools()), ["fs__delete", "fs__read"])
        self.assertNotIn("mail__send", caller)
        res = asyncio.run(caller.execute("fs__delete", {"path": "/x"}))
        self.assertTrue(res.success, res)


class SelectorRulesTest(unittest.TestCase):
    def setUp(self):
        self.reg = make_registry()
        self.addCleanup(self.reg.close)
        self.reg.register("rm", lambda: 0, description="delete everything", parameters={"type": "object"},
                          safe=False)

    def select(self, client, **kw):
        sel = ts.ToolSelector(client=client, config=ts.ToolSelectionConfig(model="m", fail_closed=False), **kw)
        self.addCleanup(sel.close)
        return run(sel.select_tool_calls_detailed(task=task(), tool_registry=self.reg))

    def test_a_denied_tool_is_never_offered(self):
        res = self.select(FakeClient(calls_json(("add", {"a": 1, "b": 2}), ("get_weather", {"city": "Paris"}))),
                          rules={"deny": ["GET_*"]})
        self.assertNotIn("get_weather", res.offered)
        self.assertIn("add", res.offered)
        self.assertEqual([c.tool for c in res.calls], ["add"])
        self.assertEqual([(d.tool, d.reason, d.rule) for d in res.dropped],
                         [("get_weather", "not_offered", "denied_by_rule")])

    def test_an_allow_rule_offers_an_unsafe_tool(self):
        res = self.select(FakeClient(calls_json(("rm", {}))))
        self.assertNotIn("rm", res.offered)
        res = self.select(FakeClient(calls_json(("rm", {}))), rules={"allow": ["rm"]})
        self.assertIn("rm", res.offered)
        self.assertEqual([c.tool for c in res.calls], ["rm"])
        # deny still wins over allow_unsafe
        res = self.select(FakeClient(calls_json(("rm", {}))), allow_unsafe=True, rules={"deny": ["rm"]})
        self.assertNotIn("rm", res.offered)

    def test_bad_rules_are_refused_when_the_selector_is_made(self):
        with self.assertRaises(ts.ArgumentError) as cm:
            ts.ToolSelector(client=FakeClient(), rules={"alow": ["rm"]})
        self.assertIn('"rules.alow"', str(cm.exception))
        with self.assertRaises(TypeError):
            ts.ToolSelector(client=FakeClient(), rules={"deny": "rm"})



class RankRulesTest(unittest.TestCase):
    """rank and arank read the rules as the other front doors do: a tool a
    deny rule names is hidden, with the rule; an unsafe tool an allow rule
    names is ranked without allow_unsafe."""

    def setUp(self):
        self.reg = ts.ToolRegistry()
        self.addCleanup(self.reg.close)
        self.reg.register("fs__delete", lambda path: 0, description="Delete a file from the disk", parameters=OBJ,
                          safe=False)
        self.reg.register("fs__read", lambda path: 0, description="Read a file from the disk", parameters=OBJ)

    def test_deny_hides_and_allow_shows(self):
        plain = self.reg.rank("delete or read a file on the disk", min_score=-1)
        self.assertEqual([p.tool for p in plain], ["fs__read"])
        self.assertEqual([(h.tool, h.rule) for h in plain.hidden], [("fs__delete", "unsafe")])

        denied = self.reg.rank("delete or read a file on the disk", min_score=-1, allow_unsafe=True,
                               rules={"deny": ["FS__READ"]})
        self.assertEqual([p.tool for p in denied], ["fs__delete"])
        self.assertEqual([(h.tool, h.rule) for h in denied.hidden], [("fs__read", "denied_by_rule")])

        allowed = self.reg.rank("delete or read a file on the disk", min_score=-1, rules={"allow": ["fs__*"]})
        self.assertEqual(sorted(p.tool for p in allowed), ["fs__delete", "fs__read"])
        self.assertEqual(list(allowed.hidden), [])

    def test_arank_and_bad_rules(self):
        r = asyncio.run(self.reg.arank("read a file", min_score=-1, rules={"deny": ["fs__*"]}))
        self.assertEqual(list(r), [])
        self.assertEqual(sorted(h.rule for h in r.hidden), ["denied_by_rule", "denied_by_rule"])
        with self.assertRaises(ts.ArgumentError) as cm:
            self.reg.rank("read a file", rules={"alow": ["fs__read"]})
        self.assertTrue(str(cm.exception).startswith('unknown field "rules.alow"'), str(cm.exception))
        with self.assertRaises(TypeError):
            self.reg.rank("read a file", rules={"deny": "fs__read"})
        with self.assertRaises(ts.ArgumentError) as cm:
            self.reg.rank("read a file", k=0)
        self.assertIn("request_json: k must be", str(cm.exception), "errors not about the rules keep their words")


if __name__ == "__main__":
    unittest.main()
