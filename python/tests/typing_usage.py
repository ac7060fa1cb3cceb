"""A program that uses every documented call of the package, for `mypy --strict`.

`make vet` type-checks it (and tests/test_typing.py does when mypy is
installed): what docs/python.md shows a user writing must type-check as
written, without casts or ignores. It is never run; the calls it makes are
run by the other tests.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, TypedDict

import toolselect
import toolselect.llm_common
from toolselect import (ArgumentError, Attempt, ChatClient, DroppedCall, DropRule, FailureKind, InvalidArgumentsError,
                        Mode, NotRecordedError, PlannedTask, PolicyError, Provider, Reasoning, RegistrationError,
                        SelectionFailureKind, SelectionResult, SubTask, ToolCall, ToolRegistry, ToolResult,
                        ToolSelectionConfig, ToolSelector, Validation)


# -- a class-based client (llm-common's shape: named keywords, async) -------------------

class Reply:
    def __init__(self, content: str) -> None:
        self.content = content


class MyClient:
    async def chat_completion(self, messages: List[Any], model: str, temperature: float = 0.0,
                              response_format: Optional[Dict[str, Any]] = None, timeout: Optional[float] = None,
                              **kwargs: Any) -> Reply:
        return Reply('{"calls": []}')


class PlainClient:
    def chat_completion(self, **kwargs: Any) -> str:
        return '{"calls": []}'


# -- an llm-common BaseTool --------------------------------------------------------------

@dataclasses.dataclass
class Metadata:
    name: str
    description: str
    parameters: Dict[str, Any]


class WeatherTool:
    @property
    def metadata(self) -> Metadata:
        return Metadata("weather_tool", "Weather", {"type": "object", "properties": {"city": {"type": "string"}}})

    async def execute(self, **kwargs: Any) -> ToolResult:
        return ToolResult(success=True, data=kwargs)


# -- tools from code ----------------------------------------------------------------------

class Unit(enum.Enum):
    C = "c"
    F = "f"


class Filter(TypedDict, total=False):
    tag: str


def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
    """Current weather for a city.

    Args:
        city: The city name.
        unit: Temperature unit.
    """
    return f"sunny in {city}"


def registry_calls(path: Path) -> ToolRegistry:
    registry = ToolRegistry(limits={"max_schema_bytes": 1 << 20}, audit=lambda record: None)
    registry.register("get_weather", get_weather)
    registry.register("add", lambda a, b: a + b, description="Add two integers",
                      parameters={"type": "object", "properties": {"a": {"type": "integer"}}},
                      safe=True, tags=["math"], roles=["user"], capabilities=["readOnly"], metadata={"v": 1},
                      strict=False)

    @registry.register("convert", description="Convert a temperature")
    def convert(value: float, to: Unit = Unit.C, where: Optional[Filter] = None) -> float:
        return value

    @registry.register
    def forecast(city: str, days: int = 3) -> List[str]:
        return [city] * days

    @registry.register("noschema", allow_no_schema=True, no_schema_mode="read-only")
    async def noschema(**kwargs: Any) -> str:
        return "ok"

    days: List[str] = forecast("Paris")
    celsius: float = convert(1.0)
    tool: WeatherTool = registry.register(WeatherTool(), safe=True)
    registry.register_tool(WeatherTool(), roles=["admin"])
    n: int = registry.register_tools([{"name": "t", "description": "d", "parameters": {"type": "object"}}])
    n += registry.load_catalog(path)
    n += registry.load_catalog('[{"name": "u", "description": "d", "parameters": {"type": "object"}}]')
    registry.bind("t", lambda: None)
    schema: str = registry.get_tools_schema()
    for fmt in toolselect.FORMATS:
        registry.view(fmt)
    registry.openai_tools(), registry.anthropic_tools(), registry.mcp_tools()
    names: List[str] = registry.names()
    present: bool = "add" in registry and len(registry) > 0
    v: Validation = registry.validate("add", {"a": 1})
    if not v:
        for violation in v.violations:
            print(violation.pointer, violation.rule, violation.message)
    try:
        print(registry.run("add", {"a": 1, "b": 2}, allow_unsafe=False, roles=["user"], capabilities=[]))
        print(registry.run(ToolCall("add", {"a": 1, "b": 2}), approve=lambda request: True))
        rules: toolselect.ToolRules = {"deny": ["fs__*"], "ask": ["mail__send"]}
        print(registry.run("add", {"a": 1, "b": 2}, rules=rules))
        print(registry.run("add", {"a": 1, "b": 2}, rules={"allow": ["add"]}))
        plain: Dict[str, List[str]] = {"deny": ["admin_*"]}
        print(registry.run("add", {"a": 1, "b": 2}, rules=plain))
    except PolicyError as e:
        print(e.rule, e.tool, e.record)
    except InvalidArgumentsError as e:
        print(e.tool, e.violations)
    except RegistrationError as e:
        print(e.refused)
    print(tool, days, celsius, n, schema, names, present, registry.list_tools(), registry.audit_records)
    return registry


async def async_registry_calls(registry: ToolRegistry) -> None:
    print(await registry.arun("get_weather", {"city": "Paris"}, approve=lambda request: True))
    print(await registry.arun("get_weather", {"city": "Paris"}, rules=toolselect.ToolRules(ask=["get_*"]),
                              approve=lambda request: True))
    result = await registry.execute("get_weather", {"city": "Paris"})
    result = await registry.execute("get_weather", city="Paris")
    print(result)
    got = registry.get("get_weather", allow_unsafe=False, roles=["user"])
    if got is not None:
        print(got.metadata.name, got.metadata.to_schema(), await got.execute(city="Paris"))
    caller = registry.for_caller(allow_unsafe=True, roles=["admin"], capabilities=["readOnly"],
                                 rules={"deny": ["admin_*"]})
    registry.get("get_weather", rules={"allow": ["get_weather"]})
    print(await caller.execute("get_weather", {"city": "Paris"}), caller.get("x"), caller.list_tools())


# -- configuration and selection ---------------------------------------------------------

def config_calls() -> ToolSelectionConfig:
    mode: Mode = "native"
    provider: Provider = "openai"
    reasoning: Reasoning = "low"
    config = ToolSelectionConfig(model="gpt-4o-mini", fallback_model=None, max_calls=3, timeout_s=30,
                                 temperature=0.0, fail_closed=True, mode=mode, provider=provider,
                                 reasoning=reasoning, feedback=Path("feedback.jsonl"), top_k=5)
    config = ToolSelectionConfig.from_env(max_calls=2)
    config = ToolSelectionConfig.from_env({"LLM_COMMON_TOOL_SELECTION_MODE": "json"})
    config = ToolSelectionConfig.model_validate({"max_calls": 3})
    config = config.model_copy(update={"temperature": 0.2})
    dumped: Dict[str, Any] = config.model_dump(exclude_none=True)
    text: str = config.model_dump_json(indent=2)
    config.feedback = "feedback.jsonl"
    chosen: Mode = config.mode
    print(dumped, text, chosen, config.provider, config.reasoning)
    return config


async def selection_calls(registry: ToolRegistry) -> None:
    client: ChatClient = MyClient()
    plain: ChatClient = PlainClient()
    selector = ToolSelector(client=client, config=config_calls(), roles=["user"], allow_unsafe=False,
                            capabilities=["readOnly"], top_k=5, rules={"deny": ["admin_*"]})
    ToolSelector(client=plain).close()
    ToolSelector(client=None, config=ToolSelectionConfig(feedback=Path("fb.jsonl"), base_url="http://127.0.0.1:9/v1")).close()
    task = PlannedTask(id="t1", description="Weather in Paris?", sub_tasks=[SubTask(id="s1", description="look")])
    calls: List[ToolCall] = await selector.select_tool_calls(task, registry)
    calls = await selector.select_tool_calls(task=task, tool_registry=registry, query="weather", context={})
    for call in calls:
        print(call.tool, call.args, call.reasoning, await registry.arun(call))
    result: SelectionResult = await selector.select_tool_calls_detailed(task=task, tool_registry=registry)
    attempt: Attempt
    for attempt in result.attempts:
        kind: FailureKind | Literal[""] = attempt.kind
        print(attempt.model, attempt.ok, kind, attempt.message, attempt.latency_s, attempt.searches)
    if result.failure is not None:
        failure: SelectionFailureKind = result.failure.kind
        if failure == "no_eligible_tools":
            print(result.failure.message)
    print(result.ok, result.offered, result.dropped, result.client_exceptions)
    dropped: DroppedCall
    for dropped in result.dropped:
        rule: DropRule | Literal[""] = dropped.rule
        print(dropped.tool, dropped.reason, rule)
    try:
        counts: Dict[str, int] = selector.add_feedback("weather in Paris", ["get_weather"])
        counts = selector.add_feedback("weather in Paris", ["get_weather"], remove=True)
        print(counts)
        query: str = result.feedback_query
        withdrawn: int = selector.withdraw(result)
        withdrawn = selector.withdraw(result, ["get_weather"]) + selector.withdraw(query, ["get_weather"])
        print(withdrawn)
    except NotRecordedError as e:
        print(e.kind, e.message)
    except ArgumentError as e:
        print(e.code, e.kind, e.message, e.detail)
    selector.close()


def module_calls() -> None:
    print(toolselect.version(), toolselect.library_path(), toolselect.stats(), toolselect.__version__)
    replaced: List[str] = toolselect.llm_common.install()
    print(replaced, toolselect.llm_common.installed())
    toolselect.llm_common.uninstall()


def main() -> None:
    with registry_calls(Path("tools.jsonl")) as registry:
        asyncio.run(async_registry_calls(registry))
        asyncio.run(selection_calls(registry))
    module_calls()
