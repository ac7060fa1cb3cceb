"""Plain data types shared by the selector and the registry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class SubTask:
    """One step of a planned task."""

    id: str
    description: str


@dataclass
class PlannedTask:
    """A task to select tools for. Any object with ``description`` and
    ``sub_tasks`` (items with ``description``) is accepted in its place."""

    id: str
    description: str
    sub_tasks: List[SubTask] = field(default_factory=list)


@dataclass
class ToolCall:
    """One selected call: the tool's canonical name, its arguments (already
    validated against the tool's schema) and the model's reasoning."""

    tool: str
    args: Dict[str, Any]
    reasoning: str = ""

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "ToolCall":
        return cls(tool=d["tool"], args=dict(d.get("args") or {}), reasoning=d.get("reasoning") or "")


@dataclass
class Attempt:
    """One model attempt: which model, whether it succeeded, and if not the
    failure kind (e.g. ``transport``, ``timeout``, ``http_status``, ``parse``,
    ``validation``, ``empty``) and message."""

    model: str
    ok: bool
    kind: str = ""
    message: str = ""
    latency_s: float = 0.0
    #: The search rounds of this attempt: ``[{"query": ..., "offered": [...]}]``.
    searches: List[Dict[str, Any]] = field(default_factory=list)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class DroppedCall:
    """A call the model proposed that was rejected (fail-open mode), and why."""

    tool: str
    reason: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class SelectionFailure:
    """Why a selection produced no calls: ``kind`` is ``fail_closed`` when every
    attempt failed, ``no_eligible_tools`` when no tool passed the safety, role
    and capability filters and ``no_ranked_tools`` when the ranking found no
    tool and searching is off (no model was asked in either case), ``caller``
    for a failure on the Python side (e.g. a client that raised something
    unexpected), ``cancelled``, or ``internal``."""

    kind: str
    message: str
    attempts: List[Attempt] = field(default_factory=list)


@dataclass
class SelectionResult:
    """The detailed outcome of a selection."""

    calls: List[ToolCall]
    attempts: List[Attempt] = field(default_factory=list)
    dropped: List[DroppedCall] = field(default_factory=list)
    offered: List[str] = field(default_factory=list)
    failure: Optional[SelectionFailure] = None

    @property
    def ok(self) -> bool:
        return self.failure is None
