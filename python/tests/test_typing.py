"""The public API's annotations: what type checkers and IDEs are told."""
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from typing import Literal, Optional, Union, get_args, get_type_hints

import toolselect as ts
from toolselect.types import ChatClient, TaskLike, ToolSchemaSource


class TypingTest(unittest.TestCase):
    def test_selector_parameters_are_typed(self):
        hints = get_type_hints(ts.ToolSelector.__init__)
        self.assertEqual(hints["client"], Optional[ChatClient])
        self.assertEqual(hints["config"], Optional[ts.ToolSelectionConfig])
        for fn in (ts.ToolSelector.select_tool_calls, ts.ToolSelector.select_tool_calls_detailed):
            with self.subTest(fn=fn.__name__):
                hints = get_type_hints(fn)
                self.assertIs(hints["task"], TaskLike)
                self.assertEqual(hints["tool_registry"], Union[ts.ToolRegistry, ToolSchemaSource])

    def test_protocols_fit_what_the_selector_accepts(self):
        class Task:
            description = "d"

        class Registry:
            def get_tools_schema(self):
                return []

        self.assertIsInstance(ts.PlannedTask("t", "d"), TaskLike)
        self.assertIsInstance(Task(), TaskLike)
        self.assertNotIsInstance(object(), TaskLike)
        self.assertIsInstance(Registry(), ToolSchemaSource)
        self.assertNotIsInstance(object(), ToolSchemaSource)

        class Client:
            async def chat_completion(self, **kw):
                return ""

        self.assertIsInstance(Client(), ChatClient)
        self.assertIs(ts.TaskLike, TaskLike)
        self.assertIs(ts.ToolSchemaSource, ToolSchemaSource)

    def test_failure_kind_is_go_s_list(self):
        # FailureKind lists selector.failureKinds (selector/errors.go).
        src = Path(__file__).resolve().parents[2] / "selector" / "errors.go"
        m = re.search(r"var failureKinds = \[\]FailureKind\{([^}]*)\}", src.read_text())
        self.assertIsNotNone(m)
        consts = dict(re.findall(r"(Kind\w+) FailureKind = \"(\w+)\"", src.read_text()))
        go = [consts[name.strip()] for name in m.group(1).split(",") if name.strip()]
        self.assertEqual(list(get_args(ts.FailureKind)), go)

    def test_setting_literals_are_go_s_choices(self):
        # Mode, Provider and Reasoning list the choices of Go's configuration
        # schema, in its order, and are what ToolSelectionConfig is annotated with.
        by_name = {f["name"]: f for f in ts.config.schema()["fields"]}
        hints = get_type_hints(ts.ToolSelectionConfig)
        for alias, name in ((ts.Mode, "mode"), (ts.Provider, "provider"), (ts.Reasoning, "reasoning")):
            with self.subTest(setting=name):
                self.assertEqual(list(get_args(alias)), by_name[name]["choices"])
                self.assertEqual(hints[name], alias)
        self.assertEqual([f["name"] for f in by_name.values() if f.get("choices")], ["mode", "provider", "reasoning"])

    def test_selection_failure_kinds_include_go_s(self):
        # Every kind Go's selector gives a selection with no calls is one SelectionFailureKind names.
        src = (Path(__file__).resolve().parents[2] / "selector" / "errors.go").read_text()
        go = set(re.findall(r"\w+ EmptyKind = \"(\w+)\"", src))
        self.assertTrue(go)
        self.assertLessEqual(go | {"fail_closed"}, set(get_args(ts.SelectionFailureKind)))
        self.assertEqual(get_type_hints(ts.SelectionFailure)["kind"], ts.SelectionFailureKind)

    def test_drop_rules_are_go_s(self):
        # DropRule lists the registry.Rule values Go's selector gives a
        # not_offered drop: the caller's eligibility and not_in_offer.
        root = Path(__file__).resolve().parents[2]
        rules = dict(re.findall(r"Rule(\w+) +Rule = \"(\w+)\"", (root / "registry" / "rule.go").read_text()))
        self.assertEqual(list(get_args(ts.DropRule)),
                         [rules["Denied"], rules["Unsafe"], rules["Role"], rules["Capability"], rules["NotInOffer"]])
        self.assertEqual(get_type_hints(ts.DroppedCall)["rule"], Union[ts.DropRule, Literal[""]])
        self.assertIs(get_type_hints(ts.SelectionResult)["feedback_query"], str)

    def test_tool_rules_are_go_s_lists(self):
        # ToolRules names the JSON keys of Go's registry.ToolRules, and every
        # front door that takes rules= is annotated with it.
        src = (Path(__file__).resolve().parents[2] / "registry" / "toolrules.go").read_text()
        body = re.search(r"type ToolRules struct \{(.*?)\n\}", src, re.S).group(1)
        self.assertEqual(sorted(ts.ToolRules.__annotations__), sorted(re.findall(r'json:"(\w+),omitempty"', body)))
        self.assertEqual(ts.ToolRules.__total__, False)
        for fn in (ts.ToolRegistry.run, ts.ToolRegistry.arun, ts.ToolRegistry.get, ts.ToolRegistry.for_caller,
                   ts.ToolRegistry.rank, ts.ToolRegistry.arank,
                   ts.ToolSelector.__init__):
            with self.subTest(fn=fn.__qualname__):
                self.assertIn(ts.ToolRules, get_args(get_type_hints(fn)["rules"]))

    def test_class_based_clients_and_tools_fit_the_protocols(self):
        class Client:
            def chat_completion(self, messages, model, temperature=0.0, **kw):
                return ""

        class Tool:
            metadata = {"name": "t"}

            async def execute(self, **kw):
                return None

        self.assertIsInstance(Client(), ChatClient)
        self.assertIsInstance(Tool(), ts.BaseToolLike)
        self.assertNotIsInstance(object(), ts.BaseToolLike)

    def test_documented_usage_passes_mypy_strict(self):
        # tests/typing_usage.py uses every documented call; make vet checks it
        # too. A misuse in the same run must be an error, so the check can fail.
        if shutil.which("mypy") is None:
            self.skipTest("mypy is not installed (apt-get install -y mypy; make test installs it when run as root)")
        here = Path(__file__).resolve().parent
        with tempfile.TemporaryDirectory() as tmp:
            bad = Path(tmp) / "misuse.py"
            bad.write_text("import toolselect as ts\n"
                           "r = ts.ToolRegistry()\n"
                           "r.register({'name': 'x'})\n"
                           "ts.ToolSelectionConfig(mode='tools')\n"
                           "ts.ToolSelectionConfig(max_call=3, fail_closd=False)\n"
                           "ts.ToolSelector(client=None, top_kk=3)\n"
                           "r.rank('task', kk=3)\n"
                           "rules: ts.ToolRules = {'alow': ['x']}\n")
            proc = subprocess.run(["mypy", "--strict", "--python-version", "3.9", "--follow-imports=silent",
                                   "--no-error-summary", "--cache-dir", str(Path(tmp) / "cache"),
                                   str(here / "typing_usage.py"), str(bad)],
                                  cwd=here.parent, capture_output=True, text=True, timeout=600)
        errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
        self.assertEqual([e for e in errors if "typing_usage.py" in e], [], proc.stdout)
        self.assertEqual([e.split(":")[1] for e in errors if "misuse.py" in e], ["3", "4", "5", "5", "6", "7", "8"], proc.stdout)


if __name__ == "__main__":
    unittest.main()
