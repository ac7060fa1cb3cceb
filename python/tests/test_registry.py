import gc
import json
import unittest
import warnings

import toolselect as ts

from .helpers import ADD_SCHEMA, make_registry


class RegistryTest(unittest.TestCase):
    def setUp(self):
        self.reg = make_registry()
        self.addCleanup(self.reg.close)

    def test_schema_is_json_text_with_verbatim_parameters(self):
        schema = json.loads(self.reg.get_tools_schema())
        self.assertEqual([t["name"] for t in schema], ["add", "get_weather"])
        self.assertEqual(schema[0]["parameters"], ADD_SCHEMA)
        self.assertEqual(set(schema[0]), {"name", "description", "parameters"})

    def test_schema_text_kept_in_order(self):
        # Views embed the schema compacted, keys in the order given.
        text = '{"type":"object",  "properties":{"z":{"type":"string"},"a":{"type":"string"}}}'
        self.reg.register("raw", lambda z, a: z, description="raw", parameters=text)
        self.assertIn(text.replace("  ", ""), self.reg.get_tools_schema())

    def test_provider_views(self):
        self.assertEqual(self.reg.openai_tools()[0]["function"]["name"], "add")
        self.assertIn("input_schema", self.reg.anthropic_tools()[0])
        self.assertIn("inputSchema", self.reg.mcp_tools()[0])
        for f in ts.FORMATS:
            self.assertEqual(len(self.reg.view(f)), 2, f)
        with self.assertRaises(ts.ArgumentError):
            self.reg.view("nope")

    def test_provider_name_mapping_resolves(self):
        self.reg.register("weird name.v2", lambda: 1, description="d", parameters={"type": "object"})
        mapped = [t["function"]["name"] for t in self.reg.openai_tools()][-1]
        self.assertNotEqual(mapped, "weird name.v2")
        self.assertEqual(self.reg.validate(mapped, {}).tool, "weird name.v2")

    def test_validate(self):
        self.assertTrue(self.reg.validate("add", {"a": 1, "b": 2}))
        v = self.reg.validate("add", {"a": "x"})
        self.assertFalse(v)
        self.assertEqual({(x.pointer, x.rule) for x in v.violations}, {("/a", "type"), ("", "required")})
        self.assertFalse(self.reg.validate("add", '{"a":'))  # model output that is not JSON
        with self.assertRaises(ts.UnknownToolError):
            self.reg.validate("nope", {})

    def test_run(self):
        self.assertEqual(self.reg.run(ts.ToolCall("add", {"a": 2, "b": 3})), 5)
        self.assertEqual(self.reg.run("get_weather", {"city": "Paris"}), "sunny in Paris")
        with self.assertRaises(ts.InvalidArgumentsError) as cm:
            self.reg.run(ts.ToolCall("add", {"a": 2}))
        self.assertEqual(cm.exception.violations[0].rule, "required")
        with self.assertRaises(ts.UnknownToolError):
            self.reg.run("nope", {})

    def test_arun_awaits_async_tools(self):
        import asyncio

        async def slow(n: int) -> int:
            return n * 2

        self.reg.register("double", slow, description="double",
                          parameters={"type": "object", "properties": {"n": {"type": "integer"}}})
        self.assertEqual(asyncio.run(self.reg.arun("double", {"n": 4})), 8)

    def test_registration_refusals_name_the_tool(self):
        with self.assertRaises(ts.RegistrationError) as cm:
            self.reg.register("add", lambda: 0, description="dup", parameters=ADD_SCHEMA)
        self.assertIn('"add"', str(cm.exception))
        with self.assertRaises(ts.RegistrationError) as cm:
            self.reg.register("noschema", lambda z: 0, description="x")  # nothing says what z is
        self.assertIn("schema", str(cm.exception))
        with self.assertRaises(ts.RegistrationError):
            self.reg.register("remote", lambda: 0, description="x",
                              parameters={"$ref": "https://example.com/schema.json"})
        with self.assertRaises(ValueError):
            self.reg.register("bad", lambda: 0, description="x", parameters="{not json")

    def test_decorator_uses_docstring(self):
        @self.reg.register("greet", parameters={"type": "object"})
        def greet() -> str:
            """Say hello."""
            return "hi"

        self.assertEqual(greet(), "hi")
        self.assertEqual(json.loads(self.reg.get_tools_schema())[-1]["description"], "Say hello.")

    def test_safe_tags_roles_reach_the_canonical_view(self):
        self.reg.register("rm", lambda: 0, description="delete", parameters={"type": "object"}, safe=False,
                          tags=("fs",), roles=("admin",))
        rm = self.reg.view("canonical")[-1]
        self.assertEqual((rm["safe"], rm["tags"], rm["roles"]), (False, ["fs"], ["admin"]))

    def test_load_catalog_text_and_bind(self):
        with ts.ToolRegistry() as reg:
            n = reg.load_catalog(json.dumps([{"type": "function", "function": {
                "name": "f", "description": "d", "parameters": {"type": "object"}}}]))
            self.assertEqual(n, 1)
            reg.bind("f", lambda: "ran")
            self.assertEqual(reg.run("f", {}), "ran")
            self.assertIn("f", reg)
            self.assertNotIn("g", reg)

    def test_load_catalog_file(self):
        # A path is read by the library itself; errors name the file and the
        # line, and the OSErrors of a missing file stay what they were.
        import pathlib
        import tempfile
        line = '{"name":"%s","description":"d","parameters":{"type":"object"}}\n'
        with tempfile.TemporaryDirectory() as d:
            good = pathlib.Path(d, "tools.jsonl")
            good.write_text(line % "t1" + line % "t2")
            bad = pathlib.Path(d, "bad.jsonl")
            bad.write_text(line % "b1" + '{"name":"b2","parameters":{"type":"object"},}\n')
            for source in (good, str(good)):
                with ts.ToolRegistry() as reg:
                    self.assertEqual(reg.load_catalog(source), 2)
                    self.assertEqual(reg.names(), ["t1", "t2"])
            with ts.ToolRegistry() as reg:
                with self.assertRaises(ts.ToolSelectError) as cm:
                    reg.load_catalog(bad)
                self.assertIn("bad.jsonl", str(cm.exception))
                self.assertIn("line 2", str(cm.exception))
                self.assertEqual(len(reg), 0)
                with self.assertRaises(FileNotFoundError):
                    reg.load_catalog(pathlib.Path(d, "missing.jsonl"))
                with self.assertRaises(IsADirectoryError):
                    reg.load_catalog(d)

    def test_close_is_idempotent_and_context_manager(self):
        reg = make_registry()
        reg.close()
        reg.close()
        with self.assertRaises(ts.HandleError):
            reg.get_tools_schema()
        with make_registry() as reg2:
            self.assertEqual(len(reg2), 2)
        self.assertTrue(reg2.closed)

    def test_collected_open_is_released_quietly(self):
        # Registries other tests left to the collector (reference cycles)
        # are released first: only this test's registry may move the count.
        gc.collect()
        before = ts.stats()["handles"].get("registry", 0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            reg = make_registry()
            self.assertEqual(ts.stats()["handles"].get("registry", 0), before + 1)
            del reg
            gc.collect()
        self.assertEqual([str(x.message) for x in w], [])
        self.assertEqual(ts.stats()["handles"].get("registry", 0), before)


if __name__ == "__main__":
    unittest.main()
