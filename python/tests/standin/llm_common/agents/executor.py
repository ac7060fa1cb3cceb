"""llm-common's executor: imports ToolSelector at module level and builds
one per task, never closing it."""

from __future__ import annotations

from typing import Any, List

from llm_common.agents.tool_selector import ToolSelector


class AgenticExecutor:
    def __init__(self, client: Any, tool_registry: Any) -> None:
        self.client = client
        self.tool_registry = tool_registry

    async def _resolve_tools(self, task: Any) -> List[Any]:
        selector = ToolSelector(self.client)
        return await selector.select_tool_calls(task, self.tool_registry)

    async def execute_task(self, task: Any) -> List[Any]:
        results = []
        for call in await self._resolve_tools(task):
            tool = self.tool_registry.get(call.tool)
            results.append(await tool.execute(**call.args))
        return results
