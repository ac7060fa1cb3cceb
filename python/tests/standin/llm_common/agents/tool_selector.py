"""llm-common's own selector: the module toolselect.llm_common patches."""

from __future__ import annotations

import json
import logging
from typing import Any, List, Optional

from ..core.models import LLMMessage, _Model
from .models import ToolCall

log = logging.getLogger(__name__)


class ToolSelectionConfig(_Model):
    """A pydantic model in some llm-common releases (Field(ge=1, le=20) and
    so on), a frozen dataclass without model_dump in others (see
    ReleasedConfig in tests/test_llm_common.py). This one has the pydantic
    surface."""

    _fields = ("model", "fallback_model", "max_calls", "timeout_s", "fail_closed", "temperature")
    model = "glm-4.5-air"
    fallback_model = None
    max_calls = 5
    timeout_s = 30
    fail_closed = True
    temperature = 0.0


class ToolSelector:
    def __init__(self, client: Any, config: Optional[ToolSelectionConfig] = None) -> None:
        self.client = client
        self.config = config or ToolSelectionConfig()

    async def select_tool_calls(self, task: Any, tool_registry: Any, **kwargs: Any) -> List[ToolCall]:
        tools = tool_registry.get_tools_schema()
        messages = [LLMMessage(role="system", content=f"Tools: {tools}. Answer {{\"calls\": [...]}}."),
                    LLMMessage(role="user", content=task.description)]
        try:
            resp = await self.client.chat_completion(messages=messages, model=self.config.model,
                                                     temperature=self.config.temperature,
                                                     response_format={"type": "json_object"},
                                                     timeout=self.config.timeout_s)
            calls = json.loads(resp.content)["calls"]
        except Exception as e:  # noqa: BLE001
            log.warning("tool selection failed: %s", e)
            return []
        return [ToolCall(tool=c["tool"], args=c.get("args") or {}, reasoning=c.get("reasoning", ""))
                for c in calls[: self.config.max_calls]]
