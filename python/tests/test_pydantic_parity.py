"""toolselect's llm-common shapes held to pydantic itself, when pydantic is
importable: llm-common's types are pydantic models in its releases (its
``ToolSelectionConfig`` is one in some, a frozen dataclass in others), so what
pydantic writes and accepts is what callers' code expects."""

from __future__ import annotations

import decimal
import enum
import fractions
import json
import random
import re
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional

import toolselect as ts

try:
    import pydantic
    from pydantic import BaseModel, Field
    if int(pydantic.VERSION.split(".")[0]) < 2:  # pragma: no cover - llm-common's models are pydantic 2's
        pydantic = None  # type: ignore[assignment]
except ImportError:  # pragma: no cover - the stdlib-only package does not need it
    pydantic = None  # type: ignore[assignment]

needs_pydantic = unittest.skipIf(pydantic is None, "pydantic 2 is not installed (python3 -m pip install 'pydantic>=2'; make test installs it into a cache folder when PyPI is reachable)")

if pydantic is not None:
    # llm-common's own models (llm_common/agents/schemas.py and the pydantic
    # ToolSelectionConfig of llm_common/agents/tool_selector.py), field for field.
    class PSubTask(BaseModel):
        id: int
        description: str

    class PPlannedTask(BaseModel):
        id: int
        description: str
        sub_tasks: List[PSubTask] = Field(default_factory=list)

    class PToolCall(BaseModel):
        tool: str
        args: Dict[str, Any]
        reasoning: str

    class PConfig(BaseModel):
        model: str = Field(default="glm-4.5-air")
        fallback_model: Optional[str] = Field(default=None)
        max_calls: int = Field(default=5, ge=1, le=20)
        timeout_s: int = Field(default=30, ge=1, le=120)
        temperature: float = Field(default=0.0, ge=0.0, le=1.0)
        fail_closed: bool = Field(default=True)

LLM_COMMON_CONFIG_FIELDS = ("model", "fallback_model", "max_calls", "timeout_s", "temperature", "fail_closed")


@needs_pydantic
class ModelDumpJsonTest(unittest.TestCase):
    """model_dump_json() is the text pydantic writes: compact separators,
    non-ASCII as it is, and json.dumps's layout when indented."""

    def pairs(self) -> List[Any]:
        args = {"city": "Zürich", "when": ["today", 2, 0.5, None, True], "nested": {"k": "ü"}}
        return [
            (ts.ToolCall("get_weather", args, "it asks ☔"), PToolCall(tool="get_weather", args=args,
                                                                       reasoning="it asks ☔")),
            (ts.SubTask(1, "weather"), PSubTask(id=1, description="weather")),
            (ts.PlannedTask(1, "Umbrella in Zürich?", [ts.SubTask(1, "weather"), ts.SubTask(2, "rain")]),
             PPlannedTask(id=1, description="Umbrella in Zürich?",
                          sub_tasks=[PSubTask(id=1, description="weather"), PSubTask(id=2, description="rain")])),
            (ts.PlannedTask(1, "none"), PPlannedTask(id=1, description="none")),
        ]

    def test_types_write_what_pydantic_writes(self) -> None:
        for ours, theirs in self.pairs():
            with self.subTest(type(ours).__name__):
                self.assertEqual(ours.model_dump_json(), theirs.model_dump_json())
                self.assertEqual(ours.model_dump_json(indent=2), theirs.model_dump_json(indent=2))
                self.assertEqual(ours.model_dump_json(exclude={"id"}), theirs.model_dump_json(exclude={"id"}))
        self.assertNotIn(", ", ts.ToolCall("a", {"x": 1, "y": [1, 2]}).model_dump_json())

    def test_config_writes_what_pydantic_writes(self) -> None:
        inc = set(LLM_COMMON_CONFIG_FIELDS)
        for kw in ({}, {"model": "m-ü", "fallback_model": "f", "max_calls": 3, "temperature": 0.5,
                        "fail_closed": False}):
            with self.subTest(kw=kw):
                ours, theirs = ts.ToolSelectionConfig(**kw), PConfig(**kw)
                self.assertEqual(ours.model_dump_json(include=inc), theirs.model_dump_json())
                self.assertEqual(ours.model_dump_json(include=inc, indent=2), theirs.model_dump_json(indent=2))
        whole = ts.ToolSelectionConfig().model_dump_json()
        self.assertEqual(json.loads(whole), ts.ToolSelectionConfig().model_dump(mode="json"))
        self.assertNotIn(", ", whole)
        self.assertNotIn('": ', whole)


class ModelDumpJsonWithoutPydanticTest(unittest.TestCase):
    """The same layout, written out, for machines without pydantic."""

    def test_compact_and_unescaped(self) -> None:
        self.assertEqual(ts.ToolCall("a", {"x": 1, "y": ["é", None]}, "r").model_dump_json(),
                         '{"tool":"a","args":{"x":1,"y":["é",null]},"reasoning":"r"}')
        self.assertEqual(ts.SubTask("s1", "d").model_dump_json(indent=1), '{\n "id": "s1",\n "description": "d"\n}')
        self.assertTrue(ts.ToolSelectionConfig().model_dump_json().startswith('{"model":"glm-4.5-air","fallback_model":null,'))


D, F = decimal.Decimal, fractions.Fraction


class _IntChoice(enum.IntEnum):
    ONE = 1
    FIVE = 5


class _TextChoice(str, enum.Enum):
    FIVE = "5"
    TRUE = "true"
    MODEL = "m"


class _Index:
    def __index__(self) -> int:
        return 5


class _Float:
    def __float__(self) -> float:
        return 0.5


#: Values given as keywords, each read by toolselect as pydantic's lax mode
#: reads it (checked against pydantic below when it is installed).
LAX_VALUES: List[Any] = [
    0, 1, 2, 5, -1, 21, 5.0, 5.5, 0.0, 1.0, 0.5, -0.0, float("inf"), float("nan"), 1e300, 2 ** 70, True, False, None,
    D("5"), D("5.0"), D("5.5"), D("NaN"), D("0.5"), D("1"), D("0"), D("Infinity"), F(5, 1), F(1, 2), F(1, 1), F(0, 1),
    _IntChoice.ONE, _IntChoice.FIVE, _TextChoice.FIVE, _TextChoice.TRUE, _TextChoice.MODEL, _Index(), _Float(), 1 + 0j,
    [5], {"a": 5}, (5,), b"5", bytearray(b"5"), b"true", bytearray(b"true"), b"0.5", bytearray(b"0.5"), b"\xff",
    memoryview(b"5"), object(),
    # text
    "5", " 5 ", "\u30005\u2003", "\x855\xa0", "\x1c5", "5\u200b", "+5", "-0", "05", "0005", "5_0", "0_5", "0__5", "_5",
    "5_", "5__0", "1_0.0", "5.0", "5.00", "5.", "5.0_0", "1e1", "5e0", "0x5", "\u0665", "\uff15", "inf", "nan", "",
    " ", "0.5", " 0.5 ", ".5", "5e-1", "+.5", "0_5", "0.5_0", "0_.5", "0._5", "1_e-1", "1e_1", "0.5_", "_0.5", "0__5",
    " 0_5", "0x1p-1", "Infinity", "-inf", "NaN", "1e400", "1e-400", "true", " true ", "True", "TRUE", "t", "yes", "Y",
    "on", "1", "0", "off", "no", "n", "f", "false", "1.0", "01", "+1", "maybe", "tRuE", "m", " m ", "\u0130",
]

#: What toolselect refuses although pydantic accepts it, on purpose
#: (docs/python.md, "What deliberately differs").
DIFFERENCES = [
    ("max_calls", True), ("timeout_s", True),  # a boolean is not an integer (pydantic: True is 1)
    ("model", ""), ("model", " "), ("model", "   "),  # Go's schema requires a model name
]
#: What toolselect accepts although pydantic refuses it: a path for a text setting.
EXTENSIONS = [("model", Path("m")), ("fallback_model", Path("m"))]
# Not followed: pydantic-core 2 reads "0-1" as -1 (leading zeros dropped
# before the sign); toolselect refuses it as malformed. Every such value is
# negative, so out of range for llm-common's settings either way.


def _ours(field: str, v: Any) -> Any:
    try:
        return ("ok", getattr(ts.ToolSelectionConfig(**{field: v}), field))
    except ValueError:
        return ("refused",)


def _theirs(field: str, v: Any) -> Any:
    try:
        return ("ok", getattr(PConfig(**{field: v}), field))
    except pydantic.ValidationError:
        return ("refused",)


class LaxModeTest(unittest.TestCase):
    """Keyword values, without pydantic: the edge cases where pydantic's lax
    mode accepts or refuses what a plain reading would not."""

    def check(self, field: str, v: Any, want: Any) -> None:
        with self.subTest(field=field, value=v):
            if want is ValueError:
                with self.assertRaisesRegex(ValueError, field):
                    ts.ToolSelectionConfig(**{field: v})
            else:
                got = getattr(ts.ToolSelectionConfig(**{field: v}), field)
                self.assertEqual((got, type(got)), (want, type(want)))

    def test_integers(self) -> None:
        for v, want in (("5_0", 50), ("0_5", 5), ("1_0.0", 10), ("5.0", 5), (" 5 ", 5), ("\u30005", 5), (b"5", 5),
                        (5.0, 5), (D("5"), 5), (F(10, 2), 5), (_Index(), 5), ("1e1", ValueError), ("\u0665", ValueError),
                        ("\uff15", ValueError), ("\x1c5", ValueError), ("5.", ValueError), ("5.5", ValueError),
                        (bytearray(b"5"), ValueError), (True, ValueError), (5.5, ValueError), (float("inf"), ValueError),
                        (None, ValueError)):
            self.check("max_tokens", v, want)
        self.check("max_calls", "5_0", ValueError)  # 50: out of range

    def test_numbers(self) -> None:
        for v, want in ((True, 1.0), (False, 0.0), ("0.5_0", 0.5), ("1e-1", 0.1), (" .5 ", 0.5), (D("0.5"), 0.5),
                        (F(1, 4), 0.25), (1, 1.0), (b"0.5", 0.5), ("0_5", ValueError), ("0x1p-1", ValueError),
                        (bytearray(b"0.5"), ValueError), ("nan", ValueError), ("\u0665", ValueError)):
            self.check("temperature", v, want)

    def test_booleans(self) -> None:
        for v, want in (("TRUE", True), ("tRuE", True), ("off", False), (b"off", False), (1, True), (1.0, True),
                        (0.0, False), (D(0), False), (" true ", ValueError), ("\ttrue", ValueError),
                        (bytearray(b"true"), ValueError), ("1.0", ValueError), (2, ValueError), (0.5, ValueError),
                        ("", ValueError), (None, ValueError)):
            self.check("fail_closed", v, want)

    def test_text(self) -> None:
        for field, v, want in (("model", " x ", " x "), ("model", b"m", "m"), ("model", bytearray(b"m"), "m"),
                               ("model", _TextChoice.MODEL, "m"), ("fallback_model", "", ""),
                               ("fallback_model", " fb ", " fb "), ("fallback_model", None, None),
                               ("model", 5, ValueError), ("model", "", ValueError), ("model", "  ", ValueError),
                               ("model", b"\xff", ValueError), ("mode", " NATIVE ", "native")):
            self.check(field, v, want)
        self.assertIs(type(ts.ToolSelectionConfig(model=_TextChoice.MODEL).model), str)


@needs_pydantic
class LaxModeAgainstPydanticTest(unittest.TestCase):
    """Keyword values of llm-common's six settings, read as its pydantic
    model reads them: the same acceptance, value and type."""

    def test_table(self) -> None:
        skip = {(f, repr(v)) for f, v in DIFFERENCES + EXTENSIONS}
        for field in LLM_COMMON_CONFIG_FIELDS:
            for v in LAX_VALUES:
                if (field, repr(v)) in skip:
                    continue
                with self.subTest(field=field, value=v):
                    ours, theirs = _ours(field, v), _theirs(field, v)
                    if field in ("model", "fallback_model") and isinstance(v, _IntChoice):
                        continue  # pydantic reads an IntEnum as its number's text; not followed
                    self.assertEqual(ours, theirs)
                    if ours[0] == "ok":
                        self.assertIs(type(ours[1]), type(theirs[1]))

    def test_random_text(self) -> None:
        rnd = random.Random(16)
        alpha = list("0123456789") * 3 + list("_._.+-eE ") + ["\u3000", "\x1c", "inf", "nan", "x", "\u0665", "\x85"]
        words = ["true", "TRUE", "t", "yes", "y", "on", "1", "0", "off", "no", "N", "f", "False", " ", "\u3000", "x"]
        for _ in range(3000):
            field = rnd.choice(["max_calls", "timeout_s", "temperature", "fail_closed"])
            pool = words if field == "fail_closed" else alpha
            v = "".join(rnd.choice(pool) for _ in range(rnd.randint(0, 6)))
            if field in ("max_calls", "timeout_s") and re.search(r"[0-9_]-", v):
                continue  # pydantic-core's "0-1" (see above)
            for given in (v, v.encode()):
                self.assertEqual(_ours(field, given), _theirs(field, given), f"{field}={given!r}")

    def test_differences_are_still_differences(self) -> None:
        for field, v in DIFFERENCES:
            with self.subTest(field=field, value=v):
                self.assertEqual(_ours(field, v), ("refused",))
                self.assertEqual(_theirs(field, v)[0], "ok", "pydantic now refuses it too: drop it from the list")
        for field, v in EXTENSIONS:
            self.assertEqual((_ours(field, v)[0], _theirs(field, v)[0]), ("ok", "refused"))


ENV_CASES = Path(__file__).resolve().parents[2] / "selector" / "testdata" / "env_cases.json"


@unittest.skipUnless(ENV_CASES.exists(), "selector/testdata/env_cases.json is not beside this checkout")
class EnvAsGoReadsItTest(unittest.TestCase):
    """from_env is held to the table Go's ConfigFromEnvMap is held to
    (selector/env_cases_test.go): Go's trimming, strconv's syntax, the
    boolean spellings of Go's schema."""

    def test_go_table(self) -> None:
        cases = json.loads(ENV_CASES.read_text(encoding="utf-8"))["cases"]
        self.assertGreater(len(cases), 100)
        for c in cases:
            with self.subTest(var=c["var"], value=c["value"]):
                if "error" in c:
                    with self.assertRaises(ValueError) as cm:
                        ts.ToolSelectionConfig.from_env({c["var"]: c["value"]})
                    self.assertIn(c["var"], str(cm.exception))
                    self.assertIn(f"is {c['error']}", str(cm.exception))
                else:
                    got = getattr(ts.ToolSelectionConfig.from_env({c["var"]: c["value"]}), c["field"])
                    self.assertEqual(got, c["want"])

    def test_beyond_32_bits(self) -> None:
        # Go calls these malformed (an int is read in 32 bits), toolselect
        # out of range; both refuse them.
        for v in ("2147483648", "9223372036854775807", "9223372036854775808", "-9223372036854775809"):
            with self.subTest(v=v), self.assertRaisesRegex(ValueError, "MAX_CALLS"):
                ts.ToolSelectionConfig.from_env({"LLM_COMMON_TOOL_SELECTION_MAX_CALLS": v})

    def test_empty_after_go_trimming_is_unset(self) -> None:
        c = ts.ToolSelectionConfig.from_env({"LLM_COMMON_TOOL_SELECTION_MAX_CALLS": " \u3000\x85",
                                             "LLM_COMMON_TOOL_SELECTION_MODEL": "\t"})
        self.assertEqual((c.max_calls, c.model), (5, "glm-4.5-air"))
        with self.assertRaisesRegex(ValueError, "MAX_CALLS"):  # U+001C is not white space to Go
            ts.ToolSelectionConfig.from_env({"LLM_COMMON_TOOL_SELECTION_MAX_CALLS": "\x1c"})


if __name__ == "__main__":
    unittest.main()
