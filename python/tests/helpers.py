"""Shared fixtures for the toolselect tests."""

from __future__ import annotations

import asyncio
import json
from typing import Any, List

import toolselect as ts

ADD_SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
              "required": ["a", "b"], "additionalProperties": False}
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "minLength": 1}},
                  "required": ["city"]}


def make_registry() -> ts.ToolRegistry:
    reg = ts.ToolRegistry()

    @reg.register("add", description="Add two integers", parameters=ADD_SCHEMA)
    def add(a: int, b: int) -> int:
        return a + b

    @reg.register("get_weather", description="Current weather for a city", parameters=WEATHER_SCHEMA)
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    return reg


def task() -> ts.PlannedTask:
    return ts.PlannedTask(id="t1", description="Add 1 and 2, then check the weather in Paris",
                          sub_tasks=[ts.SubTask("s1", "add the numbers"), ts.SubTask("s2", "weather")])


def calls_json(*calls: Any) -> str:
    return json.dumps({"calls": [{"tool": t, "args": a, "reasoning": "because"} for t, a in calls]})


class Reply:
    """A result object with .content, like most client libraries return."""

    def __init__(self, content: str) -> None:
        self.content = content


class FakeClient:
    """An async chat client that replays scripted replies; an Exception in the
    script is raised instead of returned."""

    def __init__(self, *replies: Any, delay: float = 0.0) -> None:
        self.replies: List[Any] = list(replies)
        self.delay = delay
        self.requests: List[dict] = []

    async def chat_completion(self, *, messages: Any, model: str, temperature: float, response_format: Any,
                              timeout: float, **extra: Any) -> Any:
        self.requests.append({"messages": messages, "model": model, "temperature": temperature,
                              "response_format": response_format, "timeout": timeout, **extra})
        if self.delay:
            await asyncio.sleep(self.delay)
        r = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(r, BaseException):
            raise r
        return r

    @property
    def models(self) -> List[str]:
        return [r["model"] for r in self.requests]


class SyncClient(FakeClient):
    """The same with a plain (blocking) chat_completion."""

    def chat_completion(self, **kw: Any) -> Any:  # type: ignore[override]
        return asyncio.run(FakeClient.chat_completion(self, **kw))


def run(coro: Any) -> Any:
    return asyncio.run(coro)
