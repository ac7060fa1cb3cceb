"""A LLM_COMMON_TOOL_SELECTION_* variable that names no setting is a warning
naming the closest setting, in the Go library's words."""

import unittest
import warnings

import toolselect as ts


class UnknownEnvTest(unittest.TestCase):
    def test_misspelt_variable_warns_with_the_closest(self):
        env = {"LLM_COMMON_TOOL_SELECTION_MAX_CALS": "3", "LLM_COMMON_TOOL_SELECTION_MAX_CALLS": "4",
               "LLM_COMMON_TOOL_SELECTION_API_KY": "sk-secret", "PATH": "/bin"}
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            cfg = ts.ToolSelectionConfig.from_env(env)
        self.assertEqual(cfg.max_calls, 4)
        texts = [str(w.message) for w in got]
        self.assertEqual(texts, [
            "toolselect: LLM_COMMON_TOOL_SELECTION_API_KY names no setting and is ignored "
            "(did you mean LLM_COMMON_TOOL_SELECTION_API_KEY?)",
            "toolselect: LLM_COMMON_TOOL_SELECTION_MAX_CALS names no setting and is ignored "
            "(did you mean LLM_COMMON_TOOL_SELECTION_MAX_CALLS?)",
        ])
        self.assertTrue(all(w.category is UserWarning for w in got))
        self.assertTrue(all(w.filename == __file__ for w in got), [w.filename for w in got])
        self.assertNotIn("sk-secret", " ".join(texts))

    def test_known_or_empty_variables_are_quiet(self):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ts.ToolSelectionConfig.from_env({"LLM_COMMON_TOOL_SELECTION_MAX_CALLS": "4",
                                             "LLM_COMMON_TOOL_SELECTION_NOPE": ""})


if __name__ == "__main__":
    unittest.main()
