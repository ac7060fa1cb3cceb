"""toolselect as a drop-in for llm-common, tried the way its repositories use
it: the stand-in package under tests/standin is written like llm-common
(attribute-only LLMMessage, a client reading attributes, BaseTool registry,
an executor importing ToolSelector at module level and building one per task
without closing it), and is driven unchanged."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import logging
import os
import subprocess
import sys
import unittest
import warnings
from pathlib import Path
from typing import Any, List, Optional

import toolselect as ts
import toolselect.llm_common as tslc
from toolselect import _native_cache as ts_cache

STANDIN = str(Path(__file__).resolve().parent / "standin")
if STANDIN not in sys.path:
    sys.path.insert(0, STANDIN)

from llm_common.agents import executor as lc_executor  # noqa: E402  (imported before install, as in an app)
from llm_common.agents import models as lc_models  # noqa: E402
from llm_common.agents import runtime as lc_runtime  # noqa: E402
from llm_common.agents import tool_selector as lc_selector  # noqa: E402
from llm_common.agents import tools as lc_tools  # noqa: E402  (llm-common's released tool classes)
from llm_common.core.client import LLMClient, ScriptedClient  # noqa: E402
from llm_common.tools.base import BaseTool, ToolMetadata, ToolRegistry, ToolResult  # noqa: E402

ORIGINAL_SELECTOR = lc_selector.ToolSelector
ORIGINAL_CONFIG = lc_selector.ToolSelectionConfig


class Weather(BaseTool):
    calls: List[str] = []

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata(name="get_weather", description="Current weather for a city",
                            parameters={"type": "object", "properties": {"city": {"type": "string"}},
                                        "required": ["city"]})

    async def execute(self, **kwargs: Any) -> ToolResult:
        Weather.calls.append(kwargs["city"])
        return ToolResult(success=True, data=f"sunny in {kwargs['city']}")


class Search(BaseTool):
    def __init__(self, name: str = "search") -> None:
        self.name = name

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata(name=self.name, description="Search the web for " + self.name,
                            parameters={"type": "object", "properties": {"q": {"type": "string"}},
                                        "required": ["q"]})

    async def execute(self, **kwargs: Any) -> ToolResult:
        return ToolResult(success=True, data=kwargs["q"])


class Forecast(lc_tools.BaseTool):
    """A tool as llm-common's releases write one: ToolParameter list, to_schema()."""

    runs: List[dict] = []

    @property
    def metadata(self) -> lc_tools.ToolMetadata:
        return lc_tools.ToolMetadata(
            name="get_forecast", description="Weather forecast for a city",
            parameters=[lc_tools.ToolParameter("city", "string", "City name"),
                        lc_tools.ToolParameter("days", "integer", "How many days", required=False, default=1)])

    async def execute(self, **kwargs: Any) -> lc_tools.ToolResult:
        Forecast.runs.append(kwargs)
        return lc_tools.ToolResult(success=True, data=f"{kwargs.get('days', 1)} days of sun in {kwargs['city']}",
                                   source_urls=["https://forecast.example/" + kwargs["city"]])


class Flaky(lc_tools.BaseTool):
    @property
    def metadata(self) -> lc_tools.ToolMetadata:
        return lc_tools.ToolMetadata(name="flaky", description="Fails every time",
                                     parameters=[lc_tools.ToolParameter("q", "string", "Anything")])

    async def execute(self, **kwargs: Any) -> lc_tools.ToolResult:
        raise RuntimeError("upstream down")


def lc_registry(*tools: BaseTool, as_list: bool = False) -> ToolRegistry:
    reg = ToolRegistry(as_list=as_list)
    for t in tools or (Weather(), Search()):
        reg.register(t)
    return reg


def reply(*calls: Any) -> str:
    return json.dumps({"calls": [{"tool": t, "args": a, "reasoning": "r"} for t, a in calls]})


def lc_task(desc: str = "Umbrella in Lyon?") -> Any:
    return lc_models.PlannedTask(id="t1", description=desc, sub_tasks=[lc_models.SubTask(id="s1", description="weather")])


class Installed(unittest.TestCase):
    """Each test runs with toolselect installed into the stand-in llm-common."""

    def setUp(self) -> None:
        self.replaced = tslc.install()
        self.addCleanup(tslc.uninstall)
        self.env = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("LLM_COMMON_TOOL_SELECTION_")}
        self.addCleanup(os.environ.update, self.env)


class InstallTest(Installed):
    def test_install_patches_every_binding_and_uninstall_restores(self) -> None:
        self.assertIn("llm_common.agents.executor.ToolSelector", self.replaced)
        self.assertIn("llm_common.agents.runtime.Selector", self.replaced)
        self.assertIn("llm_common.agents.runtime.ToolSelectionConfig", self.replaced)
        self.assertIs(lc_selector.ToolSelector, ts.ToolSelector)
        self.assertIs(lc_executor.ToolSelector, ts.ToolSelector)
        self.assertIs(lc_runtime.Selector, ts.ToolSelector)
        self.assertIs(lc_selector.ToolSelectionConfig, ts.ToolSelectionConfig)
        self.assertTrue(tslc.installed())
        self.assertEqual(tslc.install(), [])  # idempotent
        tslc.uninstall()
        self.assertFalse(tslc.installed())
        for mod, attr, want in ((lc_selector, "ToolSelector", ORIGINAL_SELECTOR),
                                (lc_executor, "ToolSelector", ORIGINAL_SELECTOR),
                                (lc_runtime, "Selector", ORIGINAL_SELECTOR),
                                (lc_runtime, "ToolSelectionConfig", ORIGINAL_CONFIG),
                                (lc_selector, "ToolSelectionConfig", ORIGINAL_CONFIG)):
            self.assertIs(getattr(mod, attr), want, f"{mod.__name__}.{attr}")

    def test_executor_selects_and_runs_through_toolselect(self) -> None:
        Weather.calls.clear()
        client = ScriptedClient(reply(("get_weather", {"city": "Lyon"})))
        ex = lc_executor.AgenticExecutor(client, lc_registry())
        results = asyncio.run(ex.execute_task(lc_task()))
        self.assertEqual([r.data for r in results], ["sunny in Lyon"])
        self.assertEqual(Weather.calls, ["Lyon"])
        # The prompt is toolselect's (it names the calls contract and the schema), read by attributes.
        sent = client.sent[0]
        self.assertEqual([m["role"] for m in sent["messages"]], ["system", "user"])
        self.assertIn("get_weather", sent["messages"][0]["content"])
        self.assertEqual(sent["temperature"], 0.0)

    def test_invalid_call_is_refused_not_run(self) -> None:
        """What llm-common's own selector would hand to the executor (a tool
        that is not registered, arguments that break the schema) never
        reaches it through toolselect."""
        Weather.calls.clear()
        for bad in (reply(("delete_everything", {})), reply(("get_weather", {"city": 7}))):
            ex = lc_executor.AgenticExecutor(ScriptedClient(bad), lc_registry())
            self.assertEqual(asyncio.run(ex.execute_task(lc_task())), [])
        self.assertEqual(Weather.calls, [])

    def test_runtime_builds_with_llm_common_values(self) -> None:
        sel = lc_runtime.build_selector(ScriptedClient(reply()), max_calls="3", timeout_s=20.0, fail_closed="true")
        self.assertIsInstance(sel, ts.ToolSelector)
        self.assertEqual((sel.config.max_calls, sel.config.timeout_s, sel.config.fail_closed), (3, 20, True))

    def test_registry_schema_as_list(self) -> None:
        ex = lc_executor.AgenticExecutor(ScriptedClient(reply(("search", {"q": "news"}))),
                                         lc_registry(as_list=True))
        self.assertEqual([r.data for r in asyncio.run(ex.execute_task(lc_task("news?")))], ["news"])

    def test_llm_common_config_object_is_read(self) -> None:
        cfg = ORIGINAL_CONFIG(model="m1", max_calls=2, timeout_s=10, fail_closed=True, temperature=0.1)
        sel = ts.ToolSelector(ScriptedClient(reply()), cfg)
        self.assertEqual((sel.config.model, sel.config.max_calls, sel.config.temperature), ("m1", 2, 0.1))
        self.assertIsInstance(sel.config, ts.ToolSelectionConfig)
        with self.assertRaisesRegex(ValueError, "max_calls"):
            ts.ToolSelector(ScriptedClient(reply()), ORIGINAL_CONFIG(max_calls=0))


class HalfInstallTest(unittest.TestCase):
    """install() checks every name before it records or replaces any: a
    version lacking one is refused whole, and the next install() (once the
    name is there) replaces both, not only the one recorded before the
    failure."""

    def setUp(self) -> None:
        tslc.uninstall()
        self.addCleanup(tslc.uninstall)

    def assert_untouched(self) -> None:
        self.assertFalse(tslc.installed())
        self.assertEqual(tslc._originals, {})
        self.assertIs(lc_selector.ToolSelector, ORIGINAL_SELECTOR)
        self.assertIs(lc_executor.ToolSelector, ORIGINAL_SELECTOR)
        self.assertIs(lc_runtime.Selector, ORIGINAL_SELECTOR)
        self.assertIs(lc_runtime.ToolSelectionConfig, ORIGINAL_CONFIG)

    def test_a_missing_second_name_replaces_nothing(self) -> None:
        del lc_selector.ToolSelectionConfig  # the first name (ToolSelector) is there
        try:
            with self.assertRaisesRegex(ImportError, "no ToolSelectionConfig.*nothing was replaced"):
                tslc.install()
            self.assert_untouched()
        finally:
            lc_selector.ToolSelectionConfig = ORIGINAL_CONFIG
        replaced = tslc.install()
        self.assertIn("llm_common.agents.tool_selector.ToolSelector", replaced)
        self.assertIn("llm_common.agents.tool_selector.ToolSelectionConfig", replaced)
        self.assertIn("llm_common.agents.runtime.ToolSelectionConfig", replaced)
        self.assertIs(lc_selector.ToolSelectionConfig, ts.ToolSelectionConfig)
        self.assertIs(lc_executor.ToolSelector, ts.ToolSelector)
        tslc.uninstall()
        self.assert_untouched()

    def test_both_missing_are_named(self) -> None:
        del lc_selector.ToolSelector, lc_selector.ToolSelectionConfig
        try:
            with self.assertRaisesRegex(ImportError, "no ToolSelector and no ToolSelectionConfig"):
                tslc.install()
        finally:
            lc_selector.ToolSelector, lc_selector.ToolSelectionConfig = ORIGINAL_SELECTOR, ORIGINAL_CONFIG
        self.assert_untouched()

    def test_a_module_refusing_the_assignment_undoes_the_call(self) -> None:
        import types

        class Frozen(types.ModuleType):
            def __setattr__(self, name: str, value: Any) -> None:
                if value is ts.ToolSelector:
                    raise AttributeError(f"{self.__name__} is read-only")
                super().__setattr__(name, value)

        frozen = Frozen("llm_common.zz_frozen")
        frozen.ToolSelector = ORIGINAL_SELECTOR
        sys.modules[frozen.__name__] = frozen
        self.addCleanup(sys.modules.pop, frozen.__name__, None)
        with self.assertRaisesRegex(AttributeError, "read-only"):
            tslc.install()
        self.assert_untouched()
        del sys.modules[frozen.__name__]
        self.assertIn("llm_common.agents.executor.ToolSelector", tslc.install())


@dataclasses.dataclass(frozen=True)
class ReleasedConfig:
    """llm-common's ToolSelectionConfig in the releases where it is a frozen
    dataclass (no model_dump), field for field."""

    model: str = "glm-4.5-air"
    fallback_model: Optional[str] = None
    max_calls: int = 5
    timeout_s: int = 30
    temperature: float = 0.0
    fail_closed: bool = True

    @staticmethod
    def from_env() -> "ReleasedConfig":
        return ReleasedConfig(model=os.getenv("LLM_COMMON_TOOL_SELECTION_MODEL", "glm-4.5-air"))


class ForeignConfigTest(unittest.TestCase):
    def test_frozen_dataclass_config(self) -> None:
        cfg = ReleasedConfig(model="m2", fallback_model="fb", max_calls=3, timeout_s=12, temperature=0.25,
                             fail_closed=False)
        self.assertFalse(hasattr(cfg, "model_dump"))
        sel = ts.ToolSelector(ScriptedClient(reply(("get_weather", {"city": "Lyon"}))), cfg)
        self.assertIsInstance(sel.config, ts.ToolSelectionConfig)
        c = sel.config
        self.assertEqual((c.model, c.fallback_model, c.max_calls, c.timeout_s, c.temperature, c.fail_closed),
                         ("m2", "fb", 3, 12, 0.25, False))
        calls = asyncio.run(sel.select_tool_calls(lc_task(), lc_registry()))
        self.assertEqual([c.tool for c in calls], ["get_weather"])
        self.assertEqual(sel.config.to_json()["max_calls"], 3)
        with self.assertRaisesRegex(ValueError, "max_calls"):
            ts.ToolSelector(ScriptedClient(reply()), ReleasedConfig(max_calls=0))
        self.assertIs(ts.ToolSelector(ScriptedClient(reply()), ReleasedConfig()).config.fail_closed, True)

    def test_any_object_with_the_settings(self) -> None:
        import types
        sel = ts.ToolSelector(ScriptedClient(reply()), types.SimpleNamespace(max_calls="4", mode="native",
                                                                             unrelated=object()))
        self.assertEqual((sel.config.max_calls, sel.config.mode, sel.config.model), (4, "native", "glm-4.5-air"))
        for bad in (object(), ReleasedConfig, 3):
            with self.subTest(bad=bad), self.assertRaisesRegex(TypeError, "config must be"):
                ts.ToolSelector(ScriptedClient(reply()), bad)


class ImportTest(unittest.TestCase):
    def test_nothing_imported_until_install(self) -> None:
        code = ("import sys, toolselect, toolselect.llm_common as m\n"
                "assert not [k for k in sys.modules if k.split('.')[0] == 'llm_common'], 'imported early'\n"
                "sys.path.insert(0, sys.argv[1])\n"
                "print(sorted(m.install()))\n")
        env = dict(os.environ, PYTHONPATH=str(Path(ts.__file__).resolve().parent.parent))
        out = subprocess.run([sys.executable, "-c", code, STANDIN], capture_output=True, text=True, env=env,
                             timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        # Only the defining module was imported, so only its two names were replaced.
        self.assertEqual(out.stdout.strip(), "['llm_common.agents.tool_selector.ToolSelectionConfig', "
                                             "'llm_common.agents.tool_selector.ToolSelector']")

    def test_missing_llm_common_is_an_import_error(self) -> None:
        code = "import toolselect.llm_common as m\ntry:\n    m.install()\nexcept ImportError as e:\n    print('ok', e)\n"
        env = dict(os.environ, PYTHONPATH=str(Path(ts.__file__).resolve().parent.parent))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
        self.assertTrue(out.stdout.startswith("ok"), out.stdout + out.stderr)


class MessagesTest(unittest.TestCase):
    def test_attribute_and_mapping_access(self) -> None:
        seen = []

        class Both:
            async def chat_completion(self, *, messages: Any, **kw: Any) -> str:
                for m in messages:
                    seen.append((m.role, m["role"], m.content == m["content"], m.name, dict(m)["role"]))
                json.dumps(messages)  # still plain JSON for clients that post them as they are
                return reply()

        sel = ts.ToolSelector(Both(), ts.ToolSelectionConfig())
        asyncio.run(sel.select_tool_calls(lc_task(), lc_registry()))
        self.assertEqual(seen, [("system", "system", True, None, "system"), ("user", "user", True, None, "user")])

    def test_message_factory_kept(self) -> None:
        from llm_common.core.models import LLMMessage
        got = []

        class Strict:
            async def chat_completion(self, *, messages: Any, **kw: Any) -> str:
                got.extend(type(m) for m in messages)
                return reply()

        sel = ts.ToolSelector(Strict(), ts.ToolSelectionConfig(), message_factory=LLMMessage)
        asyncio.run(sel.select_tool_calls(lc_task(), lc_registry()))
        self.assertEqual(got, [LLMMessage, LLMMessage])

    def test_a_raising_client_is_named(self) -> None:
        class Broken(LLMClient):
            async def _send(self, payload: Any, **params: Any) -> Any:
                return payload[0].role  # a dict has no attribute role: AttributeError

        sel = ts.ToolSelector(Broken(), ts.ToolSelectionConfig(fallback_model="fb"))
        with self.assertLogs("toolselect", level="WARNING") as logs:
            res = asyncio.run(sel.select_tool_calls_detailed(lc_task(), lc_registry()))
        self.assertEqual(res.calls, [])
        self.assertEqual(res.failure.kind, "fail_closed")
        self.assertEqual([a.kind for a in res.attempts], ["transport", "transport"])
        self.assertTrue(all(a.message.startswith("AttributeError: ") for a in res.attempts), res.attempts)
        self.assertEqual([type(e) for e in res.client_exceptions], [AttributeError, AttributeError])
        raised = [r for r in logs.output if "raised AttributeError" in r]
        self.assertEqual(len(raised), 2, logs.output)


class RaisingClientLoggerTest(unittest.TestCase):
    """With logger=, a raising client is named on the caller's logger and on
    the toolselect logger (where operators look for it); a child of toolselect gets
    it once, by propagation."""

    class Broken:
        async def chat_completion(self, **kw: Any) -> Any:
            raise ConnectionResetError("peer went away")

    def run_with(self, logger: logging.Logger) -> Any:
        sel = ts.ToolSelector(self.Broken(), ts.ToolSelectionConfig(), logger=logger)
        return asyncio.run(sel.select_tool_calls_detailed(lc_task(), lc_registry()))

    def test_caller_logger_and_toolselect_logger(self) -> None:
        mine = logging.getLogger("myapp.selection")
        with self.assertLogs("toolselect", "WARNING") as ts_logs, self.assertLogs(mine, "WARNING") as my_logs:
            res = self.run_with(mine)
        self.assertEqual(res.failure.kind, "fail_closed")
        for logs in (ts_logs, my_logs):
            raised = [r for r in logs.records if "raised ConnectionResetError" in r.getMessage()]
            self.assertEqual(len(raised), 1, logs.output)
            self.assertEqual(raised[0].levelno, logging.WARNING)
        # The selection's own outcome stays on the caller's logger.
        self.assertTrue(any("returning no calls" in r for r in my_logs.output), my_logs.output)
        self.assertFalse(any("returning no calls" in r for r in ts_logs.output), ts_logs.output)

    def test_child_of_toolselect_is_not_told_twice(self) -> None:
        child = logging.getLogger("toolselect.myapp")
        with self.assertLogs("toolselect", "WARNING") as logs:
            self.run_with(child)
        raised = [r for r in logs.records if "raised ConnectionResetError" in r.getMessage()]
        self.assertEqual([r.name for r in raised], ["toolselect.myapp"])


class ShapesTest(unittest.TestCase):
    def test_model_dump_uses_llm_commons_field_names(self) -> None:
        pairs = (
            (ts.ToolCall("get_weather", {"city": "Lyon"}, "r"),
             lc_models.ToolCall(tool="get_weather", args={"city": "Lyon"}, reasoning="r")),
            (ts.SubTask("s1", "weather"), lc_models.SubTask(id="s1", description="weather")),
            (ts.PlannedTask("t1", "Umbrella in Lyon?", [ts.SubTask("s1", "weather")]), lc_task()),
        )
        for ours, theirs in pairs:
            with self.subTest(type(ours).__name__):
                self.assertEqual(ours.model_dump(), theirs.model_dump())
                self.assertEqual(ours.model_dump_json(), theirs.model_dump_json())  # the same text: compact
        cfg = ts.ToolSelectionConfig().model_dump()
        theirs = ORIGINAL_CONFIG().model_dump()
        self.assertEqual({k: cfg[k] for k in theirs}, theirs)
        self.assertEqual(ts.ToolSelectionConfig(**cfg), ts.ToolSelectionConfig())
        self.assertEqual(ts.ToolCall("a", {}).model_dump(exclude={"reasoning"}), {"tool": "a", "args": {}})

    def test_config_coerces_like_pydantic_lax_mode(self) -> None:
        c = ts.ToolSelectionConfig(max_calls="5", timeout_s=30.0, temperature="0.2", fail_closed="false",
                                   mode="NATIVE", max_response_bytes="2048")
        self.assertEqual((c.max_calls, c.timeout_s, c.temperature, c.fail_closed, c.mode, c.max_response_bytes),
                         (5, 30, 0.2, False, "native", 2048))
        for v, want in (("true", True), ("off", False), (1, True), (0, False), ("YES", True)):
            self.assertIs(ts.ToolSelectionConfig(fail_closed=v).fail_closed, want, v)
        c.max_calls = "7"  # assignment is checked too
        self.assertEqual(c.max_calls, 7)

    def test_config_refuses_out_of_range_and_fail_open_by_accident(self) -> None:
        for field, bad in (("max_calls", "21"), ("max_calls", 30.5), ("max_calls", True), ("timeout_s", "0"),
                           ("temperature", "1.5"), ("temperature", float("inf")), ("fail_closed", None),
                           ("fail_closed", "maybe"), ("fail_closed", 2), ("fail_closed", ""), ("mode", "tools"),
                           ("model", " "), ("base_url", "ftp://x"), ("mode", None), ("mode", ""),
                           ("max_calls", None), ("temperature", None)):
            with self.subTest(field=field, bad=bad), self.assertRaisesRegex(ValueError, field):
                ts.ToolSelectionConfig(**{field: bad})
        with self.assertWarns(UserWarning) as cm:  # extra fields of a mapping, as pydantic allows
            c = ts.ToolSelectionConfig.model_validate({"fail_closd": False, "enabled": True})
        self.assertIn("'enabled', 'fail_closd'", str(cm.warning))
        self.assertIs(c.fail_closed, True)  # an ignored field never makes it fail open
        with self.assertRaisesRegex(TypeError, "fail_closd"):  # a keyword in the caller's code is refused
            ts.ToolSelectionConfig(fail_closd=False)
        c = ts.ToolSelectionConfig()
        with self.assertRaisesRegex(ValueError, "fail_closed"):
            c.fail_closed = None
        self.assertIs(c.fail_closed, True)

    def test_rules_come_from_the_library(self) -> None:
        """Every field of the Go schema is an attribute, a keyword, a model_dump
        key and (unless an endpoint secret) a from_env variable."""
        fields = ts.config.schema()["fields"]
        dumped = ts.ToolSelectionConfig().model_dump()
        self.assertEqual(list(dumped), [f["name"] for f in fields])
        for f in fields:
            with self.subTest(f["name"]):
                self.assertEqual(dumped[f["name"]], f["default"])
                if f["name"] in ts.config.CALL_TIME_FIELDS or f["type"] != "int":
                    continue
                env = {f["env"][0]: str(int(f["max"]))}
                self.assertEqual(getattr(ts.ToolSelectionConfig.from_env(env), f["name"]), int(f["max"]))
                with self.assertRaisesRegex(ValueError, f["env"][0]):
                    ts.ToolSelectionConfig.from_env({f["env"][0]: str(int(f["max"]) + 1)})


class RegistryTest(unittest.TestCase):
    def test_base_tools_register_and_run(self) -> None:
        reg = ts.ToolRegistry()
        self.addCleanup(reg.close)
        Weather.calls.clear()
        reg.register(Weather())
        reg.register_tool(Search())
        self.assertEqual(reg.names(), ["get_weather", "search"])
        out = asyncio.run(reg.arun(ts.ToolCall("get_weather", {"city": "Oslo"})))
        self.assertEqual(out.data, "sunny in Oslo")
        with self.assertRaises(ts.InvalidArgumentsError):
            asyncio.run(reg.arun(ts.ToolCall("get_weather", {"city": 3})))
        self.assertEqual(Weather.calls, ["Oslo"])

    def test_execute_taking_one_dict(self) -> None:
        class DictTool:
            metadata = {"name": "echo", "description": "Echo", "parameters": {"type": "object"}}

            async def execute(self, params: dict) -> Any:
                return params

        reg = ts.ToolRegistry()
        self.addCleanup(reg.close)
        reg.register(DictTool())
        self.assertEqual(asyncio.run(reg.arun("echo", {"a": 1})), {"a": 1})


class ReleasedToolShapeTest(unittest.TestCase):
    """llm-common's released ToolMetadata: parameters is a list of
    ToolParameter and the schema is to_schema(); the dict-shaped metadata
    (parameters is the schema) keeps working beside it."""

    def setUp(self) -> None:
        self.reg = ts.ToolRegistry()
        self.addCleanup(self.reg.close)
        Forecast.runs.clear()

    def test_schema_is_to_schema(self) -> None:
        self.reg.register(Forecast())
        (entry,) = json.loads(self.reg.get_tools_schema())
        self.assertEqual(entry["parameters"], Forecast().metadata.to_schema())
        self.assertEqual(entry["parameters"]["required"], ["city"])
        self.assertTrue(self.reg.validate("get_forecast", {"city": "Oslo"}))
        self.assertFalse(self.reg.validate("get_forecast", {"days": 2}))  # city is required
        self.assertFalse(self.reg.validate("get_forecast", {"city": "Oslo", "days": "two"}))
        out = asyncio.run(self.reg.arun(ts.ToolCall("get_forecast", {"city": "Oslo", "days": 2})))
        self.assertEqual((out.success, out.data), (True, "2 days of sun in Oslo"))
        self.assertEqual(Forecast.runs, [{"city": "Oslo", "days": 2}])

    def test_both_shapes_in_one_registry(self) -> None:
        self.reg.register(Weather())  # parameters is the JSON Schema
        self.reg.register_tool(Forecast())  # parameters is a ToolParameter list
        self.assertEqual(self.reg.names(), ["get_weather", "get_forecast"])
        self.assertEqual(asyncio.run(self.reg.arun("get_weather", {"city": "Rome"})).data, "sunny in Rome")
        self.assertEqual(asyncio.run(self.reg.arun("get_forecast", {"city": "Rome"})).data, "1 days of sun in Rome")

    def test_parameter_lists_without_to_schema(self) -> None:
        class ByMapping:
            metadata = {"name": "lookup", "description": "Look a word up",
                        "parameters": [{"name": "word", "type": "string", "description": "The word"},
                                       lc_tools.ToolParameter("lang", "string", "Language", required=False)]}

            async def execute(self, **kw: Any) -> Any:
                return kw

        self.reg.register(ByMapping())
        (entry,) = json.loads(self.reg.get_tools_schema())
        self.assertEqual(entry["parameters"], {"type": "object", "required": ["word"], "properties": {
            "word": {"type": "string", "description": "The word"},
            "lang": {"type": "string", "description": "Language"}}})

        class Nameless:
            metadata = {"name": "bad", "description": "", "parameters": [{"type": "string"}]}

            async def execute(self, **kw: Any) -> Any:
                return kw

        with self.assertRaisesRegex(TypeError, r"'bad'.*parameters\[0\]"):
            self.reg.register(Nameless())

    def test_selection_over_the_released_registry(self) -> None:
        lc_reg = lc_tools.ToolRegistry()
        lc_reg.register(Forecast())
        sel = ts.ToolSelector(ScriptedClient(reply(("get_forecast", {"city": "Oslo", "days": 3}))),
                              ts.ToolSelectionConfig())
        calls = asyncio.run(sel.select_tool_calls(lc_task(), lc_reg))
        self.assertEqual([(c.tool, c.args) for c in calls], [("get_forecast", {"city": "Oslo", "days": 3})])
        bad = ts.ToolSelector(ScriptedClient(reply(("get_forecast", {"days": 3}))), ts.ToolSelectionConfig())
        self.assertEqual(asyncio.run(bad.select_tool_calls(lc_task(), lc_reg)), [])  # city missing: refused


class ExecutorSideTest(Installed):
    """llm-common's executors driving a toolselect.ToolRegistry of BaseTools,
    end to end: selection through install(), then the calls run through the
    registry's policy path with an audit record each."""

    def setUp(self) -> None:
        super().setUp()
        self.records: List[dict] = []
        self.reg = ts.ToolRegistry(audit=self.records.append)
        self.addCleanup(self.reg.close)
        for tool in (Weather(), Forecast(), Flaky()):
            self.reg.register(tool)
        Weather.calls.clear()
        Forecast.runs.clear()

    def test_get_pattern(self) -> None:
        """The stand-in executor: tool = registry.get(name); await tool.execute(**args)."""
        client = ScriptedClient(reply(("get_forecast", {"city": "Oslo", "days": 2}), ("get_weather", {"city": "Oslo"})))
        ex = lc_executor.AgenticExecutor(client, self.reg)
        results = asyncio.run(ex.execute_task(lc_task("Umbrella in Oslo this week?")))
        self.assertEqual([r.data for r in results], ["2 days of sun in Oslo", "sunny in Oslo"])
        self.assertEqual([(r["tool"], r["outcome"]) for r in self.records],
                         [("get_forecast", "ok"), ("get_weather", "ok")])

    def test_released_executor_pattern(self) -> None:
        """llm-common's AgenticExecutor._execute_tool: await
        registry.execute(call.tool, call.args), gathered."""
        client = ScriptedClient(reply(("get_forecast", {"city": "Oslo"}), ("flaky", {"q": "x"})))
        ex = lc_executor.AgenticExecutor(client, self.reg)
        out = asyncio.run(ex.execute_task_gathered(lc_task("Forecast for Oslo")))
        self.assertEqual([o["tool"] for o in out], ["get_forecast", "flaky"])
        self.assertEqual(out[0]["args"], {"city": "Oslo"})
        ok, failed = out[0]["output"], out[1]["output"]
        self.assertIsInstance(ok, lc_tools.ToolResult)  # the tool's own result, as it returned it
        self.assertEqual((ok.success, ok.data, ok.source_urls), (True, "1 days of sun in Oslo",
                                                                 ["https://forecast.example/Oslo"]))
        self.assertEqual((failed.success, failed.error), (False, "upstream down"))
        self.assertEqual([(r["tool"], r["outcome"]) for r in self.records],
                         [("get_forecast", "ok"), ("flaky", "tool_error")])

    def test_released_pattern_is_refused_by_policy(self) -> None:
        """A call the executor got from elsewhere (not from the selector, which
        never offers these) is refused by the policy, run and audited."""
        ran: List[str] = []
        self.reg.register("wipe_disk", lambda **kw: ran.append("wipe") or "wiped", description="Erase a disk",
                          parameters={"type": "object"}, safe=False)
        ex = lc_executor.AgenticExecutor(ScriptedClient(reply()), self.reg)
        out = asyncio.run(ex._execute_tool(ts.ToolCall("wipe_disk", {}), 1, "q1"))
        self.assertFalse(out["output"].success)
        self.assertIn("unsafe", out["output"].error)
        self.assertEqual((ran, self.records[-1]["outcome"]), ([], "refused"))
        ex.registry = self.reg.for_caller(allow_unsafe=True)
        out = asyncio.run(ex._execute_tool(ts.ToolCall("wipe_disk", {}), 1, "q1"))
        self.assertEqual((out["output"].success, out["output"].data, ran), (True, "wiped", ["wipe"]))
        self.assertEqual(self.records[-1]["outcome"], "ok")

    def test_both_argument_spellings(self) -> None:
        """llm-common's executor passes the arguments as one dict, its
        registry takes keywords: toolselect's execute takes both."""
        by_dict = asyncio.run(self.reg.execute("get_forecast", {"city": "Lyon", "days": 4}))
        by_keywords = asyncio.run(self.reg.execute("get_forecast", city="Lyon", days=4))
        self.assertEqual(by_dict, by_keywords)
        self.assertEqual(by_dict.data, "4 days of sun in Lyon")
        missing = asyncio.run(self.reg.execute("nope", {}))
        self.assertEqual((missing.success, missing.error), (False, "Tool 'nope' not found"))
        # llm-common's own registry with its own executor: the dict does not fit **kwargs.
        lc_reg = lc_tools.ToolRegistry()
        lc_reg.register(Forecast())
        ex = lc_executor.AgenticExecutor(ScriptedClient(reply()), lc_reg)
        out = asyncio.run(ex._execute_tool(ts.ToolCall("get_forecast", {"city": "Lyon"}), 1, "q1"))
        self.assertIn("positional", out["error"])


def _rss_kib() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _handles() -> dict:
    return {k: v for k, v in ts.stats()["handles"].items() if v}


class StressTest(Installed):
    def test_concurrent_first_use_with_eviction_and_gc(self) -> None:
        """Hundreds of selections at once on registries no selector has
        compiled yet, more texts than the cache holds (so entries are evicted
        while calls use them), a selector per task never closed, gc between
        rounds: no exception, every answer right."""
        texts = 40  # the cache keeps 16
        regs = [lc_registry(Weather(), Search(f"search_{i}")) for i in range(texts)]

        async def one(i: int) -> List[Any]:
            client = ScriptedClient(reply((f"search_{i % texts}", {"q": str(i)})))
            sel = ts.ToolSelector(client)  # never closed, as llm-common's executor does
            return await sel.select_tool_calls(lc_task(), regs[i % texts])

        async def round_(n: int) -> List[Any]:
            return await asyncio.gather(*(one(i) for i in range(n)), return_exceptions=True)

        errors: List[BaseException] = []
        for r in range(4):
            ts_cache._schemas.clear()  # every text is new again: first use, concurrently
            results = asyncio.run(round_(300))
            errors += [x for x in results if isinstance(x, BaseException)]
            for i, calls in enumerate(results):
                if not isinstance(calls, BaseException):
                    self.assertEqual([(c.tool, c.args) for c in calls], [(f"search_{i % texts}", {"q": str(i)})])
            gc.collect()
        self.assertEqual(errors, [])
        gc.collect()
        self.assertLessEqual(_handles().get("registry", 0), ts_cache._SCHEMA_CACHE_SIZE)
        self.assertNotIn("selector", _handles())

    def test_one_compile_per_text_under_concurrent_first_use(self) -> None:
        compiled = []
        real = ts_cache._compile

        def counting(text: str) -> Any:
            compiled.append(text)
            return real(text)

        ts_cache._compile = counting
        self.addCleanup(setattr, ts_cache, "_compile", real)
        reg = lc_registry(Weather(), Search("only_once"))

        async def main() -> List[Any]:
            sels = [ts.ToolSelector(ScriptedClient(reply(("only_once", {"q": "x"})))) for _ in range(200)]
            return await asyncio.gather(*(s.select_tool_calls(lc_task(), reg) for s in sels))

        results = asyncio.run(main())
        self.assertEqual(len(compiled), 1)
        self.assertTrue(all(len(r) == 1 for r in results))

    def test_close_during_use_waits_for_the_call(self) -> None:
        reg = ts.ToolRegistry()
        reg.register(Weather())

        class Slow:
            async def chat_completion(self, **kw: Any) -> str:
                await asyncio.sleep(0.05)
                return reply(("get_weather", {"city": "Rome"}))

        async def main() -> Any:
            sel = ts.ToolSelector(Slow(), ts.ToolSelectionConfig())
            with reg.use():  # a call in flight
                reg.close()
                self.assertTrue(reg.closed)
                self.assertIn("registry", _handles())  # still open for the call
            self.assertRaises(ts.HandleError, lambda: reg.handle)
            return sel

        before = _handles().get("registry", 0)
        asyncio.run(main())
        self.assertEqual(_handles().get("registry", 0), before - 1)

    def test_ten_thousand_unclosed_selectors(self) -> None:
        """llm-common's executor builds a ToolSelector per task and never
        closes it: 10,000 such tasks give no warning and no growth in
        native handles or RSS."""
        n = int(os.environ.get("TOOLSELECT_UNCLOSED_N", "10000"))
        reg = lc_registry()
        client = ScriptedClient(reply(("get_weather", {"city": "Lyon"})))
        ex = lc_executor.AgenticExecutor(client, reg)
        task = lc_task()

        async def run(k: int) -> None:
            for _ in range(k):
                calls = await ex._resolve_tools(task)
                assert len(calls) == 1
                client.sent.clear()

        asyncio.run(run(500))  # warm-up: pools, caches, allocator
        gc.collect()
        handles0, rss0 = _handles(), _rss_kib()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            asyncio.run(run(n))
            gc.collect()
        growth = (_rss_kib() - rss0) / 1024
        print(f"\n  {n} unclosed selectors: RSS {rss0 / 1024:.1f} MiB -> {growth:+.2f} MiB, handles {_handles()}",
              end=" ", file=sys.stderr)
        self.assertEqual([str(x.message) for x in w], [])
        self.assertEqual(_handles(), handles0)
        self.assertLess(growth, 8.0)


if __name__ == "__main__":
    logging.basicConfig()
    unittest.main()
