import inspect
import json
import os
import unittest
from typing import Literal, Optional, Union, get_type_hints
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


def _python_type(f, parameter=False):
    """The annotation a schema field is written with: a setting with choices
    is their Literal; a path setting's parameter also takes a path object."""
    t = {"string": str, "int": int, "float": float, "bool": bool}[f["type"]]
    if f.get("choices"):
        t = Literal[tuple(f["choices"])]
    if parameter and f["name"] in PATH_SETTINGS:
        t = Union[str, os.PathLike[str]]
    return Optional[t] if f.get("nullable") else t


#: The settings that name a file (or a URL), whose parameter takes a path object too.
PATH_SETTINGS = ("feedback",)


def _other_value(f):
    """A valid value of field ``f`` that is not its default."""
    d = f["default"]
    if f["type"] == "bool":
        return not d
    if f["type"] == "int":
        return d + 1 if f["max"] is None or d + 1 <= f["max"] else d - 1
    if f["type"] == "float":
        return (f["min"] + f["max"]) / 2 if d != (f["min"] + f["max"]) / 2 else f["min"]
    if f.get("choices"):
        return next(c for c in f["choices"] if c != d)
    if f.get("format") == "http_url":
        return "http://localhost:1/v1"
    return "other-value"


class AnnotationsTest(unittest.TestCase):
    def test_annotations_are_the_go_schema(self):
        # Type checkers and IDEs read the class annotations; the values come
        # from Go's schema. The two must list the same settings, in order.
        fields = [f["name"] for f in ts.config.schema()["fields"]]
        self.assertEqual(list(ts.ToolSelectionConfig.__annotations__), fields)
        hints = get_type_hints(ts.ToolSelectionConfig)
        for f in ts.config.schema()["fields"]:
            self.assertEqual(hints[f["name"]], _python_type(f), f["name"])

    def test_signature_is_the_go_schema(self):
        # IDEs and type checkers show __init__'s signature: every Go setting,
        # in the schema's order, with its type and Go's default, and nothing
        # else: no **extra, so mypy --strict reports a misspelt keyword.
        fields = ts.config.schema()["fields"]
        params = list(inspect.signature(ts.ToolSelectionConfig).parameters.values())
        self.assertNotIn(inspect.Parameter.VAR_KEYWORD, [p.kind for p in params])
        named = params
        self.assertEqual([p.name for p in named], [f["name"] for f in fields])
        hints = get_type_hints(ts.ToolSelectionConfig.__init__)
        for p, f in zip(named, fields):
            with self.subTest(field=f["name"]):
                self.assertEqual(p.kind, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                self.assertEqual(hints[p.name], _python_type(f, parameter=True))
                self.assertEqual(p.default, f["default"])
                self.assertIs(type(p.default), type(_python_type_default(f)))

    def test_written_signature_is_the_go_schema(self):
        # The defaults written in config.py (what IDEs and type checkers read,
        # kept as ToolSelectionConfig.__init__'s signature) agree with Go's.
        fields = ts.config.schema()["fields"]
        params = list(inspect.signature(ts.ToolSelectionConfig.__init__).parameters.values())
        self.assertEqual(params[0].name, "self")
        self.assertEqual([p.name for p in params[1:]], [f["name"] for f in fields])
        for p, f in zip(params[1:], fields):
            with self.subTest(field=f["name"]):
                self.assertEqual(p.default, f["default"])
                self.assertIs(type(p.default), type(_python_type_default(f)))

    def test_runtime_defaults_come_from_the_go_schema(self):
        # A call uses the schema's defaults, not the ones written in config.py:
        # a schema whose defaults differ (as after a change in Go) is followed.
        import copy
        real = ts.config.schema()
        changed = copy.deepcopy(real)
        for f in changed["fields"]:
            f["default"] = {"model": "go-model", "max_calls": 7, "temperature": 0.5, "fail_closed": True,
                            "mode": "native"}.get(f["name"], f["default"])
        self.addCleanup(setattr, ts.config, "_schema", real)
        ts.config._schema = changed
        c = ts.ToolSelectionConfig()
        self.assertEqual((c.model, c.max_calls, c.temperature, c.mode), ("go-model", 7, 0.5, "native"))
        self.assertEqual(ts.ToolSelectionConfig(max_calls=5).max_calls, 5)  # given, even when equal to the text's
        self.assertEqual(ts.ToolSelectionConfig("m").max_calls, 7)
        self.assertEqual(ts.ToolSelectionConfig(model="m").model_dump(exclude_defaults=True), {"model": "m"})
        sig = inspect.signature(ts.ToolSelectionConfig)
        self.assertEqual((sig.parameters["model"].default, sig.parameters["max_calls"].default), ("go-model", 7))
        # The written defaults are untouched: they are for IDEs, not for calls.
        self.assertEqual(inspect.signature(ts.ToolSelectionConfig.__init__).parameters["max_calls"].default, 5)

    def test_every_parameter_reaches_its_field(self):
        # By keyword and by position (schema order), each value lands in its
        # own field and in what Go is given.
        fields = ts.config.schema()["fields"]
        for i, f in enumerate(fields):
            v = _other_value(f)
            with self.subTest(field=f["name"]):
                by_kw = ts.ToolSelectionConfig(**{f["name"]: v})
                by_pos = ts.ToolSelectionConfig(*[g["default"] for g in fields[:i]], v)
                for c in (by_kw, by_pos):
                    self.assertEqual(getattr(c, f["name"]), v)
                    self.assertEqual(c.to_json()[f["name"]], v)
                    others = {g["name"]: g["default"] for g in fields if g is not f}
                    self.assertEqual({k: x for k, x in c.to_json().items() if k != f["name"]}, others)

    def test_positional_and_keyword_errors(self):
        n = len(ts.config.schema()["fields"])
        with self.assertRaises(TypeError):
            ts.ToolSelectionConfig(*(["m"] + [None] * n))
        with self.assertRaises(TypeError):
            ts.ToolSelectionConfig("m", model="n")
        with self.assertRaisesRegex(ValueError, "max_calls"):
            ts.ToolSelectionConfig("m", None, 0)

    def test_a_misspelt_keyword_raises(self):
        # A keyword in the caller's own code: refused as Python refuses any
        # unknown keyword, with the setting it most likely meant.
        for build in (lambda: ts.ToolSelectionConfig(max_calls=3, max_cals=4),
                      lambda: ts.ToolSelectionConfig().model_copy(update={"max_cals": 4}),
                      lambda: ts.ToolSelectionConfig.from_env({}, max_cals=4)):
            with self.assertRaises(TypeError) as cm:
                build()
            self.assertIn("unexpected keyword argument 'max_cals' (did you mean 'max_calls'?)", str(cm.exception))
        with self.assertRaisesRegex(TypeError, r"arguments 'enabled', 'fail_closd' \(did you mean 'fail_closed'\?\)"):
            ts.ToolSelectionConfig(fail_closd=False, enabled=True)

    def test_another_config_s_fields_are_dropped_with_a_visible_warning(self):
        # model_validate reads a mapping that may come from another library's
        # config (llm-common's): its extra fields are dropped, with a warning
        # Python shows by default (not a log record a NullHandler swallows).
        with self.assertWarns(UserWarning) as cm:
            c = ts.ToolSelectionConfig.model_validate({"max_calls": 3, "enabled": True, "fail_closd": False})
        self.assertEqual((c.max_calls, c.fail_closed), (3, True))
        self.assertIn("ignoring 'enabled', 'fail_closd' (did you mean 'fail_closed'?)", str(cm.warning))
        self.assertEqual(cm.filename, __file__)  # it points at the caller's line


def _python_type_default(f):
    """The default as the signature writes it (a float field's 0 is 0.0)."""
    if f["default"] is None:
        return None
    return {"string": str, "int": int, "float": float, "bool": bool}[f["type"]](f["default"])


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

    def test_config_model_dump_refuses_unknown_options(self):
        c = ts.ToolSelectionConfig(max_calls=3)
        for kw in ({"by_alias": True}, {"round_trip": True}, {"exclude_unset": True}):
            with self.subTest(kw=kw), self.assertRaises(TypeError) as cm:
                c.model_dump(**kw)
            self.assertIn(next(iter(kw)), str(cm.exception))
        with self.assertRaises(TypeError):
            c.model_dump_json(by_alias=True)
        self.assertEqual(c.model_dump(include={"max_calls"}), {"max_calls": 3})
        self.assertEqual(c.model_dump(exclude_defaults=True), {"max_calls": 3})
        self.assertEqual(json.loads(c.model_dump_json(include={"max_calls"})), {"max_calls": 3})

    def test_message_model_dump_refuses_unknown_options(self):
        m = ts.Message(role="user", content="hi", name=None)
        with self.assertRaises(TypeError) as cm:
            m.model_dump(by_alias=True)
        self.assertIn("by_alias", str(cm.exception))
        self.assertEqual(m.model_dump(), {"role": "user", "content": "hi", "name": None})
        self.assertEqual(m.model_dump(exclude_none=True, exclude={"content"}), {"role": "user"})
        self.assertEqual(m.model_dump(mode="json", include={"role"}), {"role": "user"})

    def test_model_copy_deep(self):
        call = ts.ToolCall("add", {"a": [1]})
        shallow, deep = call.model_copy(), call.model_copy(deep=True)
        self.assertIs(shallow.args, call.args)
        self.assertEqual(deep, call)
        self.assertIsNot(deep.args, call.args)
        self.assertIsNot(deep.args["a"], call.args["a"])
        self.assertEqual(call.model_copy(update={"tool": "sub"}, deep=True).tool, "sub")
