"""Schemas from code: register(name, fn) and the decorator infer the JSON
Schema of the arguments from the signature and the docstring."""

import asyncio
import dataclasses
import enum
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Set, Tuple, TypedDict, Union
from unittest import mock

try:
    from typing import Annotated
except ImportError:  # pragma: no cover - Python 3.8
    Annotated = None  # type: ignore

import toolselect as ts

from .test_http import CLEAN_ENV, OpenAIServer

GOLDEN = Path(__file__).resolve().parent / "testdata" / "get_weather.tool.json"


def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
    """Current weather for a city.

    Args:
        city: The city name, for example Paris.
        unit: Temperature unit: c for Celsius, f for Fahrenheit.
    """
    return f"14 degrees {unit.upper()} in {city}"


class Unit(enum.Enum):
    C = "c"
    F = "f"


@dataclasses.dataclass
class Point:
    """A point on the map.

    Attributes:
        x: Metres east.
        y: Metres north.
    """

    x: int
    y: int = 0


class Filter(TypedDict, total=False):
    tag: str
    limit: int


@dataclasses.dataclass
class Node:
    name: str
    children: List["Node"]


def parameters(fn: Any) -> Dict[str, Any]:
    reg = ts.ToolRegistry()
    try:
        reg.register(fn.__name__, fn)
        return json.loads(reg.get_tools_schema())[0]["parameters"]
    finally:
        reg.close()


class InferenceTest(unittest.TestCase):
    def setUp(self) -> None:
        self.reg = ts.ToolRegistry()
        self.addCleanup(self.reg.close)

    def test_golden_get_weather(self) -> None:
        self.reg.register("get_weather", get_weather)
        self.assertEqual(json.loads(self.reg.get_tools_schema()), [json.loads(GOLDEN.read_text())])

    def test_decorator_forms_infer_too(self) -> None:
        @self.reg.register("weather_by_name")
        def a(city: str, unit: Literal["c", "f"] = "c") -> str:
            return city

        @self.reg.register
        def weather_bare(city: str) -> str:
            return city

        self.assertEqual(a("x"), "x")  # the decorator returns the function itself
        tools = {t["name"]: t for t in json.loads(self.reg.get_tools_schema())}
        self.assertEqual(tools["weather_by_name"]["parameters"]["required"], ["city"])
        self.assertEqual(tools["weather_bare"]["parameters"]["properties"], {"city": {"type": "string"}})
        self.assertEqual(self.reg.run("weather_bare", {"city": "Oslo"}), "Oslo")

    def test_types(self) -> None:
        cases = [
            (str, {"type": "string"}), (int, {"type": "integer"}), (float, {"type": "number"}),
            (bool, {"type": "boolean"}), (type(None), {"type": "null"}), (Any, {}),
            (Optional[int], {"type": ["integer", "null"]}),
            (Union[int, str], {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
            (Optional[Union[int, str]], {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}),
            (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
            (Literal[1, 2], {"type": "integer", "enum": [1, 2]}),
            (Optional[Literal["a"]], {"type": ["string", "null"], "enum": ["a", None]}),
            (Unit, {"type": "string", "enum": ["c", "f"]}),
            (List[int], {"type": "array", "items": {"type": "integer"}}),
            (list, {"type": "array"}),
            (Set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
            (Tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
            (Tuple[int, str], {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                               "minItems": 2, "maxItems": 2}),
            (Dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
            (dict, {"type": "object"}),
            (Filter, {"type": "object", "properties": {"tag": {"type": "string"}, "limit": {"type": "integer"}},
                      "additionalProperties": False}),
            (Point, {"type": "object", "properties": {"x": {"type": "integer", "description": "Metres east."},
                                                      "y": {"type": "integer", "description": "Metres north.",
                                                            "default": 0}},
                     "required": ["x"], "additionalProperties": False}),
        ]
        if sys.version_info >= (3, 9):
            cases += [(list[str], {"type": "array", "items": {"type": "string"}}),
                      (dict[str, List[int]], {"type": "object",
                                              "additionalProperties": {"type": "array", "items": {"type": "integer"}}})]
        if Annotated is not None:
            cases.append((Annotated[int, "How many."], {"type": "integer", "description": "How many."}))
        for tp, want in cases:
            with self.subTest(tp=tp):
                def f(v):  # type: ignore[no-untyped-def]
                    return v
                f.__annotations__ = {"v": tp}
                self.assertEqual(parameters(f), {"type": "object", "properties": {"v": want}, "required": ["v"],
                                                 "additionalProperties": False})

    def test_defaults_are_optional_and_written(self) -> None:
        def f(a: int, b: int = 2, c: Optional[str] = None, d: Unit = Unit.F, e: Tuple[int, int] = (1, 2),
              g: object = object(), **more: Any) -> None: ...

        f.__annotations__["g"] = Any
        p = parameters(f)
        self.assertEqual(p["required"], ["a"])
        self.assertEqual(p["properties"]["b"], {"type": "integer", "default": 2})
        self.assertEqual(p["properties"]["c"], {"type": ["string", "null"], "default": None})
        self.assertEqual(p["properties"]["d"]["default"], "f")
        self.assertEqual(p["properties"]["e"]["default"], [1, 2])
        self.assertEqual(p["properties"]["g"], {})  # a default JSON cannot hold is left out, still optional
        self.assertNotIn("additionalProperties", p)  # **more takes any other keyword

    def test_docstring_styles(self) -> None:
        def google(a: int, b: str) -> None:
            """Do the thing.

            More about it.

            Args:
                a (int): The first,
                    on two lines.
                b: The second.

            Returns:
                Nothing.
            """

        def numpy(a: int, b: str) -> None:
            """Do the thing.

            Parameters
            ----------
            a : int
                The first,
                on two lines.
            b : str
                The second.

            Returns
            -------
            None
            """

        def rest(a: int, b: str) -> None:
            """Do the thing.

            :param a: The first,
                on two lines.
            :param str b: The second.
            :returns: nothing.
            """

        for fn in (google, numpy, rest):
            with self.subTest(style=fn.__name__):
                reg = ts.ToolRegistry()
                self.addCleanup(reg.close)
                reg.register("t", fn)
                tool = json.loads(reg.get_tools_schema())[0]
                self.assertEqual(tool["description"],
                                 "Do the thing.\n\nMore about it." if fn is google else "Do the thing.")
                self.assertEqual(tool["parameters"]["properties"],
                                 {"a": {"type": "integer", "description": "The first, on two lines."},
                                  "b": {"type": "string", "description": "The second."}})

    def test_explicit_description_and_schema_win(self) -> None:
        text = '{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"string"}}}'
        self.reg.register("given", get_weather, description="Mine.", parameters=text)
        tool = json.loads(self.reg.get_tools_schema())[0]
        self.assertEqual(tool["description"], "Mine.")
        self.assertIn('"parameters":' + text, self.reg.get_tools_schema())  # byte for byte, key order kept
        self.reg.register("docless", get_weather, parameters={"type": "object"})
        # With an explicit schema the whole docstring stays the description: its Args are not in the schema.
        self.assertIn("Args:", json.loads(self.reg.get_tools_schema())[1]["description"])

    def test_string_annotations_resolve(self) -> None:
        ns: Dict[str, Any] = {}
        exec("from __future__ import annotations\nfrom typing import Optional\n"
             "def f(a: Optional[int], b: 'list[str]' = []) -> None: ...", ns)
        self.assertEqual(parameters(ns["f"])["properties"],
                         {"a": {"type": ["integer", "null"]}, "b": {"type": "array", "items": {"type": "string"},
                                                                     "default": []}})

    def test_what_cannot_be_inferred_names_the_parameter(self) -> None:
        import datetime

        def no_annotation(city, days: int) -> None: ...  # type: ignore[no-untyped-def]
        class Marker:
            pass

        def a_marker(when: Annotated[int, Marker()]) -> None: ...
        def int_keys(counts: Dict[int, str]) -> None: ...
        def deep(points: List[Optional[Tuple[int, complex]]]) -> None: ...
        def recursive(tree: Node) -> None: ...
        def positional(a: int, /) -> None: ...
        def unresolved(a: "NoSuchType") -> None: ...  # type: ignore[name-defined]  # noqa: F821
        def set_of_objects(a: Literal[b"x"]) -> None: ...

        for fn, want in ((no_annotation, "parameter 'city' has no type annotation"),
                         (a_marker, "parameter 'when': Annotated metadata"),
                         (int_keys, "parameter 'counts'"),
                         (deep, "parameter 'points': complex has no JSON Schema"),
                         (recursive, "parameter 'tree': Node.children: Node contains itself"),
                         (positional, "parameter 'a' is positional-only"),
                         (unresolved, "parameter 'a': annotation 'NoSuchType' cannot be resolved"),
                         (set_of_objects, "parameter 'a'")):
            with self.subTest(fn=fn.__name__), self.assertRaises(ts.RegistrationError) as cm:
                self.reg.register(fn.__name__, fn)
            self.assertIn(want, str(cm.exception))
            self.assertIn(f'tool "{fn.__name__}"', str(cm.exception))
            self.assertEqual(cm.exception.refused[0]["tool"], fn.__name__)
            self.assertNotIn(fn.__name__, self.reg)  # nothing registered, never with an empty schema

    def test_arguments_arrive_as_the_annotated_types(self) -> None:
        got: List[Any] = []

        @self.reg.register("place")
        def place(unit: Unit, at: Point, tags: Set[str], pair: Tuple[int, str], near: Optional[List[Point]] = None,
                  f: Optional[Filter] = None) -> str:
            got.extend([unit, at, tags, pair, near, f])
            return "ok"

        args = {"unit": "f", "at": {"x": 1}, "tags": ["a", "a", "b"][1:], "pair": [1, "x"],
                "near": [{"x": 2, "y": 3}], "f": {"tag": "t"}}
        self.assertEqual(asyncio.run(self.reg.arun("place", args)), "ok")
        self.assertEqual(got, [Unit.F, Point(1, 0), {"a", "b"}, (1, "x"), [Point(2, 3)], {"tag": "t"}])
        self.assertFalse(self.reg.validate("place", {**args, "unit": "k"}))  # the enum is enforced

        @self.reg.register
        async def later(unit: Unit) -> Unit:  # an async tool is converted for and awaited alike
            return unit

        self.assertIs(asyncio.run(self.reg.arun("later", {"unit": "c"})), Unit.C)

    def test_pydantic_model_schema_is_its_own(self) -> None:
        try:
            import pydantic
        except ImportError:
            self.skipTest("pydantic is not installed (it is never required; python3 -m pip install 'pydantic>=2', "
                          "which make test does into a cache folder when PyPI is reachable)")
        if int(pydantic.VERSION.split(".")[0]) < 2:
            self.skipTest(f"pydantic {pydantic.VERSION} is installed; this test reads pydantic 2's model_json_schema")

        class Address(pydantic.BaseModel):
            street: str
            city: str = "Paris"

        class Order(pydantic.BaseModel):
            item: str
            ship_to: Address

        got: List[Any] = []

        def order(o: Order, note: str = "") -> str:
            got.append(o)
            return o.ship_to.city

        self.reg.register("order", order)
        p = json.loads(self.reg.get_tools_schema())[0]["parameters"]
        # The model's own schema, its generated titles dropped and its
        # objects closed as a dataclass's are.
        self.assertEqual(p["properties"]["o"], {
            "type": "object", "properties": {"item": {"type": "string"}, "ship_to": {"$ref": "#/$defs/Address"}},
            "required": ["item", "ship_to"], "additionalProperties": False})
        self.assertEqual(p["$defs"], {"Address": {  # lifted to the root, where the $refs point
            "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string", "default": "Paris"}},
            "required": ["street"], "additionalProperties": False}})
        self.assertEqual(asyncio.run(self.reg.arun("order", {"o": {"item": "x", "ship_to": {"street": "s"}}})),
                         "Paris")
        self.assertIsInstance(got[0], Order)
        self.assertFalse(self.reg.validate("order", {"o": {"item": "x", "ship_to": {}}}))

    def test_pydantic_is_never_imported(self) -> None:
        code = ("import sys, toolselect as ts\n"
                "from typing import Literal\n"
                "def f(a: int, b: Literal['x'] = 'x') -> int: return a\n"
                "r = ts.ToolRegistry(); r.register('f', f); print(r.run('f', {'a': 3}))\n"
                "assert 'pydantic' not in sys.modules, 'pydantic was imported'\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=Path(__file__).resolve().parents[1], timeout=120)
        self.assertEqual((out.returncode, out.stdout.strip()), (0, "3"), out.stderr)


class WrongArgumentsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.reg = ts.ToolRegistry()
        self.addCleanup(self.reg.close)

    def test_a_definition_dict_names_register_tools(self) -> None:
        definition = {"name": "t", "description": "d", "parameters": {"type": "object"}}
        for arg in (definition, [definition]):
            with self.subTest(arg=type(arg).__name__), self.assertRaises(TypeError) as cm:
                self.reg.register(arg)  # type: ignore[call-overload]
            self.assertIn("register_tools", str(cm.exception))
        self.assertEqual(len(self.reg), 0)
        self.assertEqual(self.reg.register_tools([definition]), 1)

    def test_wrong_types_name_the_right_method(self) -> None:
        for args, want in (((42,), "register() takes a tool's name as a str, not int"),
                           ((Path("tools.json"),), "load_catalog"),
                           (("t", {"type": "object"}), "parameters="),
                           (("t", "Weather for a city"), "description="),
                           (("t", 3), "fn must be callable, not int")):
            with self.subTest(args=args), self.assertRaises(TypeError) as cm:
                self.reg.register(*args)  # type: ignore[call-overload]
            self.assertIn(want, str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            self.reg.register("t")({"type": "object"})  # type: ignore[type-var]
        self.assertIn("parameters=", str(cm.exception))
        self.assertEqual(len(self.reg), 0)


class SelectAndRunTest(unittest.TestCase):
    """The inferred tool, offered to a model over the OpenAI wire format,
    selected, and run through arun."""

    def test_selected_and_run(self) -> None:
        reg = ts.ToolRegistry()
        self.addCleanup(reg.close)
        reg.register("get_weather", get_weather)
        srv = OpenAIServer((200, [("get_weather", {"city": "Paris", "unit": "f"})], 0))
        self.addCleanup(srv.close)
        with mock.patch.dict(os.environ, CLEAN_ENV):
            sel = ts.ToolSelector(client=None, config=ts.ToolSelectionConfig(model="m", base_url=srv.url,
                                                                             mode="native"))
            self.addCleanup(sel.close)

            async def main() -> List[Any]:
                task = ts.PlannedTask("t1", "Do I need a coat in Paris? In Fahrenheit, please.")
                calls = await sel.select_tool_calls(task, reg)
                return [await reg.arun(c) for c in calls]

            self.assertEqual(asyncio.run(main()), ["14 degrees F in Paris"])
        golden = json.loads(GOLDEN.read_text())
        offered = [t["function"] for t in srv.requests[0]["body"]["tools"]]
        self.assertEqual(offered, [{"name": "get_weather", "description": golden["description"],
                                    "parameters": golden["parameters"]}])


if __name__ == "__main__":
    unittest.main()
