"""llm-common's tools as its releases define them (llm_common/agents/tools):
dataclasses, not pydantic models. ``ToolMetadata.parameters`` is a list of
``ToolParameter``, and the JSON Schema the model sees comes from
``ToolMetadata.to_schema()`` (properties with type and description, and the
required names; a parameter's default is not in it). ``BaseTool`` is an ABC
with an abstract ``metadata`` property and ``async execute(**kwargs)``. The
registry's ``execute(tool_name, **kwargs)`` never raises: an unknown tool or
an exception becomes ``ToolResult(success=False, error=...)``.

Written here from those shapes, for the tests: same names, fields, defaults,
signatures and return values."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class ToolParameter:
    name: str
    type: str
    description: str
    required: bool = True
    default: Any = None


@dataclass
class ToolMetadata:
    name: str
    description: str
    parameters: List[ToolParameter] = field(default_factory=list)

    def to_schema(self) -> Dict[str, Any]:
        properties = {p.name: {"type": p.type, "description": p.description} for p in self.parameters}
        return {"type": "object", "properties": properties,
                "required": [p.name for p in self.parameters if p.required]}


@dataclass
class ToolResult:
    success: bool
    data: Any = None
    source_urls: List[str] = field(default_factory=list)
    error: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        return {"success": self.success, "data": self.data, "source_urls": self.source_urls, "error": self.error}


class BaseTool(ABC):
    @property
    @abstractmethod
    def metadata(self) -> ToolMetadata: ...

    @abstractmethod
    async def execute(self, **kwargs: Any) -> ToolResult: ...


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: Dict[str, BaseTool] = {}

    def register(self, tool: BaseTool) -> None:
        self._tools[tool.metadata.name] = tool

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> Optional[BaseTool]:
        return self._tools.get(name)

    def list_tools(self) -> List[Dict[str, str]]:
        return [{"name": t.metadata.name, "description": t.metadata.description} for t in self._tools.values()]

    def get_tools_schema(self) -> str:
        entries = [{"name": t.metadata.name, "description": t.metadata.description,
                    "parameters": t.metadata.to_schema()} for t in self._tools.values()]
        return json.dumps(entries, indent=2)

    async def execute(self, tool_name: str, **kwargs: Any) -> ToolResult:
        tool = self._tools.get(tool_name)
        if tool is None:
            return ToolResult(success=False, error=f"Tool '{tool_name}' not found")
        try:
            return await tool.execute(**kwargs)
        except Exception as e:  # noqa: BLE001 - as llm-common's registry does
            return ToolResult(success=False, error=str(e))
