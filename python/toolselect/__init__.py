"""toolselect: LLM tool selection with strict checks, backed by a Go library.

Quick start::

    from toolselect import ToolSelector, ToolSelectionConfig, ToolRegistry, PlannedTask

    registry = ToolRegistry()

    @registry.register("get_weather", description="Current weather for a city",
                       parameters={"type": "object", "properties": {"city": {"type": "string"}},
                                   "required": ["city"]})
    def get_weather(city: str) -> str: ...

    selector = ToolSelector(client=my_llm_client)          # or client=None for the built-in HTTP client
    calls = await selector.select_tool_calls(task=PlannedTask("t1", "Weather in Paris?"),
                                             tool_registry=registry)
    for call in calls:
        print(registry.run(call))

In a repository built on llm-common, ``toolselect.llm_common.install()``
makes llm-common's executor use this package (see docs/python.md,
"Migrating from llm-common").

The shared library is found through ``TOOLSELECT_LIBRARY``, else the copy
inside this package, and loaded on first use. Do not use the package in a
child created by ``os.fork()`` after it was loaded: use the ``spawn`` or
``forkserver`` multiprocessing start methods.
"""

import typing as _typing

from ._lib import library_path, stats, version
from .config import ToolSelectionConfig
from .errors import (
    ArgumentError,
    ForkedProcessError,
    HandleError,
    InternalError,
    InvalidArgumentsError,
    LibraryNotFoundError,
    LibraryVersionError,
    NotRecordedError,
    PointerError,
    PolicyError,
    RegistrationError,
    ToolSelectError,
    UnknownToolError,
)
from .registry import FORMATS, ToolRegistry, Validation, Violation
from .selector import ToolSelector
from .types import (Attempt, BaseToolLike, ChatClient, DroppedCall, DropRule, FailureKind, HiddenTool, Message, Mode,
                    PlannedTask, Provider, RankedTool, Ranking, Reasoning, SelectionFailure, SelectionFailureKind, SelectionResult, StrPath, SubTask,
                    TaskLike, ToolCall, ToolResult, ToolRules, ToolSchemaSource)

from ._version import __version__

if _typing.TYPE_CHECKING:
    from .errors import CancelledError
    from .evalselect import CandidateScore, EvalSelectReport, Latency, TaskResult, eval_select
else:
    # Loaded on first use: CancelledError, so that importing the package
    # does not import asyncio (see toolselect.errors), and the evaluation
    # API, which a selection never needs (its module and `random` were 4-5
    # ms of the import; docs/measurements.md). Hidden from type checkers,
    # which would otherwise take any toolselect.<name> as valid.
    _LAZY = {"CancelledError": "errors", "CandidateScore": "evalselect", "EvalSelectReport": "evalselect",
             "Latency": "evalselect", "TaskResult": "evalselect", "eval_select": "evalselect"}

    def __getattr__(name: str) -> _typing.Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib
        value = getattr(importlib.import_module(f".{module}", __name__), name)
        globals()[name] = value
        return value

__all__ = [
    "ArgumentError", "Attempt", "BaseToolLike", "CancelledError", "ChatClient", "FailureKind", "DroppedCall", "DropRule", "FORMATS", "ForkedProcessError", "HandleError", "HiddenTool",
    "InternalError", "InvalidArgumentsError", "LibraryNotFoundError", "LibraryVersionError", "Message", "Mode", "NotRecordedError", "PlannedTask", "PointerError", "PolicyError", "Provider", "RankedTool", "Ranking", "Reasoning",
    "RegistrationError", "SelectionFailure", "SelectionFailureKind", "SelectionResult", "StrPath", "SubTask", "TaskLike", "ToolCall", "ToolRegistry", "ToolResult", "ToolRules", "ToolSchemaSource",
    "ToolSelectError", "ToolSelectionConfig", "ToolSelector", "UnknownToolError", "Validation", "Violation",
    "CandidateScore", "EvalSelectReport", "Latency", "TaskResult", "eval_select",
    "library_path", "stats", "version", "__version__",
]


def __dir__() -> _typing.List[str]:
    return sorted(set(globals()) | set(__all__))
