"""toolselect's llm-common shapes held to pydantic itself, when pydantic is
importable: llm-common's types are pydantic models in its releases (its
``ToolSelectionConfig`` is one in some, a frozen dataclass in others), so what
pydantic writes and accepts is what callers' code expects."""

from __future__ import annotations

import json
import unittest
from typing import Any, Dict, List, Optional

import toolselect as ts

try:
    import pydantic
    from pydantic import BaseModel, Field
except ImportError:  # pragma: no cover - the stdlib-only package does not need it
    pydantic = None  # type: ignore[assignment]

needs_pydantic = unittest.skipIf(pydantic is None, "pydantic is not installed")

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


if __name__ == "__main__":
    unittest.main()
