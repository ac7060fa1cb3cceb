"""llm-common's executor: imports ToolSelector at module level and builds
one per task, never closing it.

It runs the calls both ways llm-common's executors do: ``execute_task``
fetches each tool with ``registry.get(name)`` and awaits
``tool.execute(**args)``; ``execute_task_gathered`` is the released
``AgenticExecutor``'s pattern, ``asyncio.gather`` over ``_execute_tool``,
which awaits ``registry.execute(call.tool, call.args)`` (the arguments as one
positional dict) and turns any exception into ``{"tool", "error"}``."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

from llm_common.agents.tool_selector import ToolSelector


class AgenticExecutor:
    def __init__(self, client: Any, tool_registry: Any) -> None:
        self.client = client
        self.tool_registry = tool_registry
        self.registry = tool_registry  # the released executor's name for it

    async def _resolve_tools(self, task: Any) -> List[Any]:
        selector = ToolSelector(self.client)
        return await selector.select_tool_calls(task, self.tool_registry)

    async def execute_task(self, task: Any) -> List[Any]:
        results = []
        for call in await self._resolve_tools(task):
            tool = self.tool_registry.get(call.tool)
            results.append(await tool.execute(**call.args))
        return results

    async def _execute_tool(self, call: Any, task_id: int, query_id: str) -> Dict[str, Any]:
        try:
            result = await self.registry.execute(call.tool, call.args)
            return {"tool": call.tool, "args": call.args, "output": result}
        except Exception as e:  # noqa: BLE001 - as the released executor does
            return {"tool": call.tool, "error": str(e)}

    async def execute_task_gathered(self, task: Any, query_id: str = "q1") -> List[Any]:
        calls = await self._resolve_tools(task)
        return list(await asyncio.gather(*[self._execute_tool(c, task.id, query_id) for c in calls],
                                         return_exceptions=True))
