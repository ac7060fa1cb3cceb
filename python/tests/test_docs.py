"""The >>> snippets of docs/python.md run as written and print what the page shows."""

import doctest
import re
import unittest
from pathlib import Path

import toolselect as ts

DOCS = Path(__file__).resolve().parents[2] / "docs" / "python.md"

# A fenced block whose first line is a >>> prompt.
_BLOCK = re.compile(r"^```(?:python|pycon)\n(>>> .*?)^```$", re.M | re.S)


def snippets(text: str):
    """(line number, code) of each block of >>> examples, in page order."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _BLOCK.finditer(text)]


class DocsTest(unittest.TestCase):
    def test_python_md_snippets_run(self) -> None:
        text = DOCS.read_text(encoding="utf-8")
        blocks = snippets(text)
        self.assertGreaterEqual(len(blocks), 4, "docs/python.md lost its >>> examples")
        # One namespace for the page: a later snippet uses what an earlier one made.
        globs: dict = {"__name__": "docs_python_md"}
        parser = doctest.DocTestParser()
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        for line, code in blocks:
            test = parser.get_doctest(code, globs, f"docs/python.md:{line}", str(DOCS), line - 1)
            out: list = []
            result = runner.run(test, out=out.append, clear_globs=False)
            globs.update(test.globs)
            with self.subTest(line=line):
                self.assertEqual(result.failed, 0, "".join(out))
        for value in globs.values():
            if isinstance(value, ts.ToolRegistry):
                value.close()

    def test_a_wrong_snippet_fails(self) -> None:
        # The check can fail: a snippet whose output differs is reported.
        code = snippets("```python\n>>> 1 + 1\n3\n```\n")[0][1]
        test = doctest.DocTestParser().get_doctest(code, {}, "wrong", "wrong", 0)
        result = doctest.DocTestRunner().run(test, out=lambda s: None)
        self.assertEqual(result.failed, 1)


if __name__ == "__main__":
    unittest.main()
