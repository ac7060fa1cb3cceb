"""register() errors name its Python keywords, not the JSON fields."""
import unittest

import toolselect
from toolselect.errors import RegistrationError


class ErrorNamesTest(unittest.TestCase):
    def setUp(self):
        self.reg = toolselect.ToolRegistry()
        self.addCleanup(self.reg.close)

    def check(self, want, **kw):
        with self.assertRaises(RegistrationError) as cm:
            self.reg.register("x", lambda: 1, **kw)
        e = cm.exception
        for text in (str(e), e.refused[0]["reason"], e.refused[0]["message"]):
            self.assertIn(want, text)
            self.assertNotIn("allowNoSchema", text)
            self.assertNotIn("noSchemaMode", text)
        self.assertEqual(e.refused[0]["tool"], "x")

    def test_missing_schema_names_the_keywords(self):
        self.check("set allow_no_schema with a no_schema_mode")

    def test_allow_without_mode(self):
        self.check("allow_no_schema is set without a no_schema_mode", allow_no_schema=True)

    def test_bad_mode(self):
        self.check('no_schema_mode "bogus" is not one of', allow_no_schema=True, no_schema_mode="bogus")


if __name__ == "__main__":
    unittest.main()
