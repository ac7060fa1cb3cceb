"""A misspelt tool name is answered with the nearest registered names."""

import unittest

import toolselect as ts


class SuggestTest(unittest.TestCase):
    def setUp(self):
        self.reg = ts.ToolRegistry()
        self.addCleanup(self.reg.close)

        @self.reg.register("create_event", description="Create a calendar event",
                           parameters={"type": "object", "properties": {}})
        def create_event() -> str:
            return "ok"

        @self.reg.register("wipe_calendar", description="Delete every event", safe=False,
                           parameters={"type": "object", "properties": {}})
        def wipe_calendar() -> str:
            return "gone"

    def test_validate_names_the_closest(self):
        with self.assertRaisesRegex(ts.UnknownToolError, r'unknown tool "create_evnt" \(did you mean "create_event"\?\)'):
            self.reg.validate("create_evnt", {})

    def test_run_names_the_closest_the_caller_may_run(self):
        with self.assertRaisesRegex(ts.UnknownToolError, 'did you mean "create_event"'):
            self.reg.run("create_evnt", {})
        with self.assertRaises(ts.UnknownToolError) as cm:
            self.reg.run("wipe_calendr", {})
        self.assertNotIn("wipe_calendar", str(cm.exception))
        with self.assertRaisesRegex(ts.UnknownToolError, 'did you mean "wipe_calendar"'):
            self.reg.run("wipe_calendr", {}, allow_unsafe=True)


if __name__ == "__main__":
    unittest.main()
