"""llm-common's runtime: binds both names, one under another name."""

from __future__ import annotations

from typing import Any

from llm_common.agents.tool_selector import ToolSelectionConfig
from llm_common.agents.tool_selector import ToolSelector as Selector


def build_selector(client: Any, **config: Any) -> Any:
    return Selector(client, ToolSelectionConfig(**config))
