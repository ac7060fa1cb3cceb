"""Tools whose metadata carries the JSON Schema itself (``parameters`` a
dict, read by ``model_dump()``), as tools written against a pydantic-style
metadata do: BaseTool (metadata + async execute) and a registry with
``get(name)``. llm-common's own classes, whose ``parameters`` is a list of
``ToolParameter`` turned into a schema by ``to_schema()``, are in
``llm_common.agents.tools``."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from ..core.models import _Model


class ToolMetadata(_Model):
    _fields = ("name", "description", "parameters")
    parameters: Dict[str, Any] = {}


class ToolResult(_Model):
    _fields = ("success", "data", "error")
    error = None


class BaseTool:
    @property
    def metadata(self) -> ToolMetadata:
        raise NotImplementedError

    async def execute(self, **kwargs: Any) -> ToolResult:
        raise NotImplementedError


class ToolRegistry:
    def __init__(self, as_list: bool = False) -> None:
        self._tools: Dict[str, BaseTool] = {}
        self.as_list = as_list

    def register(self, tool: BaseTool) -> None:
        self._tools[tool.metadata.name] = tool

    def get(self, name: str) -> Optional[BaseTool]:
        return self._tools.get(name)

    def get_tools_schema(self) -> Any:
        schema: List[Dict[str, Any]] = [t.metadata.model_dump() for t in self._tools.values()]
        return schema if self.as_list else json.dumps(schema)
