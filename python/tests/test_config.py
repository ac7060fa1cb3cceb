import os
import unittest
from unittest import mock

import toolselect as ts

P = "LLM_COMMON_TOOL_SELECTION_"


class ConfigTest(unittest.TestCase):
    def test_defaults(self):
        c = ts.ToolSelectionConfig()
        self.assertEqual((c.model, c.fallback_model, c.max_calls, c.timeout_s, c.temperature, c.fail_closed),
                         ("glm-4.5-air", None, 5, 30, 0.0, True))
        self.assertEqual((c.mode, c.max_response_bytes), ("json", 4 << 20))
        self.assertEqual((c.offer_tokens, c.top_k, c.max_searches), (10000, 10, 1))

    def test_ranges_name_the_field(self):
        for field, bad in (("max_calls", 0), ("max_calls", 21), ("timeout_s", 121), ("timeout_s", 0),
                           ("temperature", 1.5), ("temperature", -0.1), ("fail_closed", "maybe"),
                           ("fail_closed", None), ("fail_closed", 2), ("fail_closed", ""), ("max_calls", 2.5),
                           ("max_calls", "5.5"), ("max_calls", None), ("timeout_s", "30s"), ("temperature", "nan"),
                           ("max_calls", True), ("model", ""), ("mode", "tools"),
                           ("max_response_bytes", 1023), ("max_response_bytes", (1 << 30) + 1),
                           ("max_response_bytes", True), ("offer_tokens", 0), ("offer_tokens", 10_000_001),
                           ("top_k", 0), ("top_k", 1001), ("max_searches", -1), ("max_searches", 11),
                           ("max_searches", True)):
            with self.subTest(field=field, bad=bad):
                with self.assertRaisesRegex(ValueError, field):
                    ts.ToolSelectionConfig(**{field: bad})

    def test_from_env_reads_at_call_time(self):
        env = {P + "MODEL": "m", P + "FALLBACK_MODEL": "f", P + "MAX_CALLS": "7", P + "TIMEOUT_S": "9",
               P + "TEMPERATURE": "0.3", P + "FAIL_CLOSED": "off"}
        with mock.patch.dict(os.environ, env):
            c = ts.ToolSelectionConfig.from_env()
        self.assertEqual((c.model, c.fallback_model, c.max_calls, c.timeout_s, c.temperature, c.fail_closed),
                         ("m", "f", 7, 9, 0.3, False))
        with mock.patch.dict(os.environ, {P + "MAX_CALLS": "3"}):
            self.assertEqual(ts.ToolSelectionConfig.from_env().max_calls, 3)

    def test_from_env_mode_and_max_response_bytes(self):
        with mock.patch.dict(os.environ, {P + "MODE": " Native ", P + "MAX_RESPONSE_BYTES": "2048"}):
            c = ts.ToolSelectionConfig.from_env()
        self.assertEqual((c.mode, c.max_response_bytes), ("native", 2048))
        # Both reach the Go side in the config it validates.
        self.assertEqual((c.to_json()["mode"], c.to_json()["max_response_bytes"]), ("native", 2048))

    def test_from_env_offer_budget(self):
        with mock.patch.dict(os.environ, {P + "OFFER_TOKENS": "2000", P + "TOP_K": "5", P + "MAX_SEARCHES": "0"}):
            c = ts.ToolSelectionConfig.from_env()
        self.assertEqual((c.offer_tokens, c.top_k, c.max_searches), (2000, 5, 0))
        j = c.to_json()
        self.assertEqual((j["offer_tokens"], j["top_k"], j["max_searches"]), (2000, 5, 0))

    def test_from_env_bools(self):
        for v, want in (("1", True), ("YES", True), ("t", True), ("on", True), ("0", False), ("n", False),
                        ("False", False)):
            with mock.patch.dict(os.environ, {P + "FAIL_CLOSED": v}):
                self.assertIs(ts.ToolSelectionConfig.from_env().fail_closed, want, v)

    def test_from_env_errors_name_the_variable(self):
        for var, val in (("MAX_CALLS", "abc"), ("MAX_CALLS", "25"), ("TIMEOUT_S", "0"), ("TEMPERATURE", "2"),
                         ("TEMPERATURE", "warm"), ("FAIL_CLOSED", "maybe"), ("MODE", "tools"),
                         ("MAX_RESPONSE_BYTES", "1000"), ("MAX_RESPONSE_BYTES", "4MiB"), ("OFFER_TOKENS", "0"),
                         ("TOP_K", "1001"), ("TOP_K", "ten"), ("MAX_SEARCHES", "-1"), ("MAX_SEARCHES", "11")):
            with self.subTest(var=var, val=val), mock.patch.dict(os.environ, {P + var: val}):
                with self.assertRaisesRegex(ValueError, P + var):
                    ts.ToolSelectionConfig.from_env()

    def test_go_side_accepts_the_config(self):
        c = ts.ToolSelectionConfig(model="m", fallback_model="f", max_calls=20, timeout_s=120, temperature=1,
                                   fail_closed=False, base_url="http://localhost:1/v1", api_key="k",
                                   mode="native", max_response_bytes=1 << 30, offer_tokens=10_000_000,
                                   top_k=1000, max_searches=0)
        sel = ts.ToolSelector(client=None, config=c)
        self.addCleanup(sel.close)
        with sel._selector_use(c.base_url, c.api_key) as h:
            self.assertGreater(h, 0)

    def test_api_key_not_in_repr(self):
        self.assertNotIn("secret", repr(ts.ToolSelectionConfig(api_key="secret")))


if __name__ == "__main__":
    unittest.main()


class AnnotationsTest(unittest.TestCase):
    def test_annotations_are_the_go_schema(self):
        # Type checkers and IDEs read the class annotations; the values come
        # from Go's schema. The two must list the same settings, in order.
        fields = [f["name"] for f in ts.config.schema()["fields"]]
        self.assertEqual(list(ts.ToolSelectionConfig.__annotations__), fields)


class ModelMethodsTest(unittest.TestCase):
    def test_model_methods_refuse_what_they_do_not_support(self):
        call = ts.ToolCall("add", {"a": 1})
        with self.assertRaises(TypeError) as cm:
            call.model_dump(by_alias=True)
        self.assertIn("by_alias", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            ts.ToolCall.model_validate({"tool": "add", "args": {}, "argz": 1})
        self.assertIn("argz", str(cm.exception))
        self.assertEqual(ts.ToolCall.model_validate({"tool": "add", "args": {"a": 1}}), call)
