"""register() errors name its Python keywords, not the JSON fields; every
error class is a name of the package itself."""
import re
import unittest
from pathlib import Path

import toolselect
from toolselect import errors
from toolselect.errors import RegistrationError

DOCS = Path(__file__).resolve().parents[2] / "docs" / "python.md"


class ErrorNamesTest(unittest.TestCase):
    def setUp(self):
        self.reg = toolselect.ToolRegistry()
        self.addCleanup(self.reg.close)

    def check(self, want, fn=lambda: 1, rule=None, **kw):
        with self.assertRaises(RegistrationError) as cm:
            self.reg.register("x", fn, **kw)
        e = cm.exception
        for text in (str(e), e.refused[0]["reason"], e.refused[0]["message"]):
            self.assertIn(want, text)
            self.assertNotIn("allowNoSchema", text)
            self.assertNotIn("noSchemaMode", text)
        self.assertEqual(e.refused[0]["tool"], "x")
        if rule is not None:  # worded from the library's rule, not from its text
            self.assertEqual(e.refused[0]["rule"], rule)

    def test_missing_schema_names_the_keywords(self):
        # No schema given, and none can be inferred: the parameter has no annotation.
        self.check("set allow_no_schema with a no_schema_mode", fn=lambda city: city)

    def test_allow_without_mode(self):
        self.check("allow_no_schema is set without a no_schema_mode", allow_no_schema=True, rule="no_schema_mode")

    def test_bad_mode(self):
        self.check('no_schema_mode "bogus" is not one of', allow_no_schema=True, no_schema_mode="bogus",
                   rule="no_schema_mode")

    def test_tool_without_schema_is_refused_in_keywords(self):
        # A tool object whose metadata gives no schema (none is inferred for
        # it): the library refuses it by its rule, worded in the keywords.
        class NoSchema:
            metadata = {"name": "x", "description": "X."}

            def execute(self, **kw):
                return kw

        with self.assertRaises(RegistrationError) as cm:
            self.reg.register_tool(NoSchema())
        e = cm.exception
        self.assertEqual(e.refused[0]["rule"], "no_schema")
        for text in (str(e), e.refused[0]["reason"], e.refused[0]["message"]):
            self.assertIn("set allow_no_schema with a no_schema_mode", text)
            self.assertNotIn("allowNoSchema", text)


class ErrorExportsTest(unittest.TestCase):
    """Each exception class of toolselect.errors is importable from the
    package, listed in its __all__ and named in docs/python.md's error list."""

    def classes(self):
        names = [n for n in errors.__all__ if n != "error_from_body"]
        self.assertIn("LibraryVersionError", names)
        return names

    def test_every_error_class_is_a_package_name(self):
        for name in self.classes():
            with self.subTest(name=name):
                self.assertIn(name, toolselect.__all__)
                self.assertIs(getattr(toolselect, name), getattr(errors, name))

    def test_library_version_error_is_a_library_not_found_error(self):
        from toolselect import LibraryNotFoundError, LibraryVersionError
        self.assertTrue(issubclass(LibraryVersionError, LibraryNotFoundError))
        self.assertTrue(issubclass(LibraryVersionError, ImportError))

    def test_docs_name_every_error_class(self):
        text = DOCS.read_text()
        section = re.search(r"### Errors\n(.*?)\n#", text, re.S).group(1)
        for name in self.classes():
            with self.subTest(name=name):
                self.assertIn(f"`{name}`", section)


if __name__ == "__main__":
    unittest.main()
