"""llm-common's task and call types."""

from __future__ import annotations

from typing import Any, Dict, List

from ..core.models import _Model


class SubTask(_Model):
    _fields = ("id", "description")


class PlannedTask(_Model):
    _fields = ("id", "description", "sub_tasks")
    sub_tasks: List[SubTask] = []


class ToolCall(_Model):
    _fields = ("tool", "args", "reasoning")
    args: Dict[str, Any] = {}
    reasoning = ""
