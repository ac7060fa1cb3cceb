"""The public API's annotations: what type checkers and IDEs are told."""
import re
import unittest
from pathlib import Path
from typing import Optional, Union, get_args, get_type_hints

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


if __name__ == "__main__":
    unittest.main()
