"""Plain data types shared by the selector and the registry.

The ones llm-common code handles (:class:`ToolCall`, :class:`PlannedTask`,
:class:`SubTask`) answer pydantic's ``model_dump()`` / ``model_dump_json()``
under llm-common's field names, so code written for its pydantic models
reads them unchanged.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

try:  # typing.Protocol is 3.8+; Literal and TypedDict too
    from typing import Literal, Protocol, TypedDict, runtime_checkable
except ImportError:  # pragma: no cover
    from typing_extensions import Literal, Protocol, TypedDict, runtime_checkable  # type: ignore


def dump(d: Dict[str, Any], mode: str = "python", include: Optional[Iterable[str]] = None,
         exclude: Optional[Iterable[str]] = None, exclude_none: bool = False,
         defaults: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """pydantic's model_dump options (include, exclude, exclude_none,
    exclude_defaults through ``defaults``, mode) over a plain dict."""
    if mode not in ("python", "json"):
        raise ValueError(f"mode must be 'python' or 'json', got {mode!r}")
    inc = set(include) if include is not None else None
    exc = set(exclude or ())
    out = {}
    for k, v in d.items():
        if (inc is not None and k not in inc) or k in exc or (exclude_none and v is None):
            continue
        if defaults is not None and k in defaults and defaults[k] == v:
            continue
        out[k] = v
    if mode == "json":
        out = json.loads(json.dumps(out))
    return out


def dump_json(d: Any, indent: Optional[int] = None) -> str:
    """JSON text as pydantic's ``model_dump_json`` writes it: compact
    (``{"a":1,"b":[1,2]}``) unless ``indent`` is given, and non-ASCII
    characters as they are, not escaped."""
    return json.dumps(d, indent=indent, separators=(",", ":") if indent is None else None, ensure_ascii=False)


class _Model:
    """pydantic's reading methods on a dataclass."""

    def model_dump(self, *, mode: str = "python", include: Optional[Iterable[str]] = None,
                   exclude: Optional[Iterable[str]] = None, exclude_none: bool = False,
                   exclude_defaults: bool = False, **unsupported: Any) -> Dict[str, Any]:
        """The fields as a dict (nested models as dicts), with pydantic's
        options ``mode``, ``include``, ``exclude``, ``exclude_none`` and
        ``exclude_defaults``; any other option is refused (TypeError), never
        silently ignored."""
        if unsupported:
            raise TypeError(f"{type(self).__name__}.model_dump does not support {', '.join(sorted(unsupported))} "
                            "(supported: mode, include, exclude, exclude_none, exclude_defaults)")
        defaults = None
        if exclude_defaults:
            defaults = {}
            for f in dataclasses.fields(self):  # type: ignore[arg-type]
                if f.default is not dataclasses.MISSING:
                    defaults[f.name] = f.default
                elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
                    defaults[f.name] = f.default_factory()  # type: ignore[misc]
        d = {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)  # type: ignore[arg-type]
             if f.repr}
        return dump(d, mode, include, exclude, exclude_none, defaults)

    def model_dump_json(self, *, indent: Optional[int] = None, **kw: Any) -> str:
        """:meth:`model_dump` as JSON text, written as pydantic writes it (see :func:`dump_json`)."""
        return dump_json(self.model_dump(mode="json", **kw), indent)

    def model_copy(self, *, update: Optional[Mapping[str, Any]] = None, deep: bool = False) -> Any:
        """A copy with ``update`` applied; ``deep`` copies the values too (pydantic's meaning)."""
        out = dataclasses.replace(self, **dict(update or {}))  # type: ignore[type-var]
        return copy.deepcopy(out) if deep else out

    @classmethod
    def model_validate(cls, obj: Any) -> Any:
        if isinstance(obj, cls):
            return obj
        if not isinstance(obj, Mapping):
            raise TypeError(f"{cls.__name__}.model_validate takes a mapping, not {type(obj).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(obj) - names)
        if unknown:
            raise ValueError(f"{cls.__name__}.model_validate: unknown field(s) {', '.join(unknown)} "
                             f"(fields: {', '.join(sorted(names))})")
        return cls(**dict(obj))


def _plain(v: Any) -> Any:
    if isinstance(v, _Model):
        return v.model_dump()
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


class Message(dict):  # type: ignore[type-arg]
    """A chat message handed to the caller's client: a dict (``m["role"]``,
    ``json.dumps(m)``, ``dict(m)``) that also reads as attributes
    (``m.role``, ``m.content``, ``m.name``), so clients written for plain
    dicts and clients written for llm-common's ``LLMMessage`` both work."""

    __slots__ = ()

    @property
    def role(self) -> str:
        return self.get("role", "")

    @property
    def content(self) -> str:
        return self.get("content", "")

    @property
    def name(self) -> Optional[str]:
        return self.get("name")

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def model_dump(self, *, mode: str = "python", include: Optional[Iterable[str]] = None,
                   exclude: Optional[Iterable[str]] = None, exclude_none: bool = False,
                   exclude_defaults: bool = False, **unsupported: Any) -> Dict[str, Any]:
        """The message as a plain dict, with pydantic's options ``mode``,
        ``include``, ``exclude``, ``exclude_none`` and ``exclude_defaults``
        (a message has no defaults); any other option is refused (TypeError),
        never silently ignored."""
        if unsupported:
            raise TypeError(f"Message.model_dump does not support {', '.join(sorted(unsupported))} "
                            "(supported: mode, include, exclude, exclude_none, exclude_defaults)")
        return dump(dict(self), mode, include, exclude, exclude_none)


@dataclass
class SubTask(_Model):
    """One step of a planned task."""

    id: str
    description: str


@dataclass
class PlannedTask(_Model):
    """A task to select tools for. Any object with ``description`` and
    ``sub_tasks`` (items with ``description``) is accepted in its place."""

    id: str
    description: str
    sub_tasks: List[SubTask] = field(default_factory=list)


@dataclass
class ToolCall(_Model):
    """One selected call: the tool's canonical name, its arguments (already
    validated against the tool's schema) and the model's reasoning."""

    tool: str
    args: Dict[str, Any]
    reasoning: str = ""

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "ToolCall":
        return cls(tool=d["tool"], args=dict(d.get("args") or {}), reasoning=d.get("reasoning") or "")


@dataclass
class ToolResult(_Model):
    """What :meth:`ToolRegistry.execute <toolselect.ToolRegistry.execute>`
    returns when the tool itself did not return one: llm-common's
    ``ToolResult`` fields (``success``, ``data``, ``source_urls``,
    ``error``). A refused or failed run is ``success=False`` with the reason
    in ``error``, as llm-common's registry reports it."""

    success: bool
    data: Any = None
    source_urls: List[str] = field(default_factory=list)
    error: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        """llm-common's spelling of :meth:`model_dump`."""
        return {"success": self.success, "data": self.data, "source_urls": list(self.source_urls),
                "error": self.error}


@dataclass
class Attempt:
    """One model attempt: which model, whether it succeeded, and if not the
    failure kind (e.g. ``transport``, ``timeout``, ``http_status``, ``parse``,
    ``validation``, ``empty``) and message."""

    model: str
    ok: bool
    kind: Union[FailureKind, Literal[""]] = ""
    message: str = ""
    latency_s: float = 0.0
    #: The search rounds of this attempt: ``[{"query": ..., "offered": [...]}]``.
    searches: List[Dict[str, Any]] = field(default_factory=list)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class DroppedCall:
    """A call the model proposed that was rejected (fail-open mode), and why.
    ``reason`` classifies it (``unknown_tool``, ``not_offered``,
    ``invalid_args``, ``max_calls``); for ``not_offered``, ``rule`` is the one
    reason the tool was not offered (:data:`DropRule`), else ``""``. For
    ``unknown_tool`` and ``not_offered``, ``did_you_mean`` lists up to three
    registered tools the name most likely meant, best first, among those the
    caller may run (never the refused tool itself); empty when none is near."""

    tool: str
    reason: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)
    rule: Union[DropRule, Literal[""]] = ""
    did_you_mean: List[str] = field(default_factory=list)


@dataclass
class RankedTool:
    """One tool as :meth:`ToolRegistry.rank <toolselect.ToolRegistry.rank>`
    ranked it: ``score`` from 0 to 1 and the ``reason`` (``"bm25 score
    0.313; matched work, calendar"``), ``source`` saying how it came
    (``score``, ``exact``, ``prerequisite``, ``always``, ``related``) and
    ``raw`` the library's pick (its provenance, with matched terms and
    score components when ranked with ``debug=True``)."""

    tool: str
    score: float
    reason: str
    source: str = "score"
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class HiddenTool:
    """A tool the caller's filters kept out of a ranking that would otherwise
    have been in it: ``rule`` says which filter (``unsafe``: pass
    ``allow_unsafe=True``; ``role``: one of the tool's ``roles``;
    ``capability``: leave out the ``capabilities`` asked for;
    ``denied_by_rule``: a deny pattern of ``rules=`` names it)."""

    tool: str
    score: float
    reason: str
    rule: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


class Ranking(List[RankedTool]):
    """The tools :meth:`ToolRegistry.rank <toolselect.ToolRegistry.rank>`
    ranked for a task, best first (a list of :class:`RankedTool`), and in
    :attr:`hidden` the tools the filters kept out, with why. An empty
    ranking says why in :attr:`hidden` or, when nothing was hidden, means
    no tool scored above ``min_score``."""

    def __init__(self, picks: Iterable[RankedTool] = (), hidden: Iterable[HiddenTool] = ()) -> None:
        super().__init__(picks)
        #: The tools the caller's filters hid, in the order an unfiltered ranking puts them.
        self.hidden: List[HiddenTool] = list(hidden)

    def __repr__(self) -> str:
        return f"Ranking({list.__repr__(self)}, hidden={self.hidden!r})"


@dataclass
class SelectionFailure:
    """Why a selection produced no calls: ``kind`` is ``fail_closed`` when every
    attempt failed, ``no_eligible_tools`` when no tool passed the safety, role
    and capability filters and ``no_ranked_tools`` when the ranking found no
    tool and searching is off (no model was asked in either case), ``caller``
    for a failure on the Python side (e.g. a client that raised something
    unexpected), ``cancelled``, or ``internal``."""

    kind: SelectionFailureKind
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
    #: What the caller's client raised, one per failed chat call, in order
    #: (each failed attempt's message names the exception type too).
    client_exceptions: List[BaseException] = field(default_factory=list, repr=False)
    #: The text this selection was recorded under as ranking feedback (the
    #: task description and each sub-task's, one a line), set whenever it
    #: returned calls: what :meth:`ToolSelector.withdraw
    #: <toolselect.ToolSelector.withdraw>` takes back. ``""`` without calls.
    feedback_query: str = ""

    @property
    def ok(self) -> bool:
        return self.failure is None


@runtime_checkable
class ChatClient(Protocol):
    """What ToolSelector needs of a caller's own client: a ``chat_completion``
    method, async or plain, called with keywords (``messages``, ``model``,
    ``response_format``, ``timeout``, and whichever of ``temperature``,
    ``tools``, ``max_tokens``, ``max_completion_tokens``,
    ``reasoning_effort`` and ``extra_body`` the provider dialect sends and the
    method takes), returning a string, an object with ``.content`` or a
    whole chat completion. Declared as a method taking any arguments, so a
    class whose ``chat_completion`` names its own keywords fits it."""

    def chat_completion(self, *args: Any, **kwargs: Any) -> Any: ...


@runtime_checkable
class BaseToolLike(Protocol):
    """An llm-common ``BaseTool`` as :meth:`ToolRegistry.register
    <toolselect.ToolRegistry.register>` takes it: ``metadata`` (``name``,
    ``description`` and the arguments' schema) and an ``execute`` method
    (async, called with the validated arguments)."""

    @property
    def metadata(self) -> Any: ...

    def execute(self, *args: Any, **kwargs: Any) -> Any: ...


@runtime_checkable
class TaskLike(Protocol):
    """What :meth:`ToolSelector.select_tool_calls` needs of a task: a string
    ``description``. ``id`` and ``sub_tasks`` (strings, mappings or objects
    with a ``description`` and maybe an ``id``) are read when the task has
    them. :class:`PlannedTask` and llm-common's ``PlannedTask`` both fit."""

    @property
    def description(self) -> str: ...


@runtime_checkable
class ToolSchemaSource(Protocol):
    """A caller's tool registry (llm-common's ``ToolRegistry``):
    ``get_tools_schema()`` returns the catalog as JSON text (str or bytes) or
    as a list of ``{"name", "description", "parameters"}`` dicts (or pydantic
    models). A :class:`~toolselect.ToolRegistry` is taken as it is."""

    def get_tools_schema(self) -> Any: ...


#: A file path: text or a path object (``pathlib.Path``).
StrPath = Union[str, "os.PathLike[str]"]

# The settings' choices (ToolSelectionConfig.mode, .provider, .reasoning),
# as Go's configuration schema lists them (toolselect.config.schema(), whose
# "choices" tests/test_typing.py holds these to).

#: How the selector asks the model for calls (``ToolSelectionConfig.mode``).
Mode = Literal["json", "native"]
#: The provider dialect (``ToolSelectionConfig.provider``; docs/providers.md).
Provider = Literal["auto", "generic", "openai", "deepseek", "zai", "qwen", "vllm", "ollama", "lmstudio", "llamacpp",
                   "openrouter", "mistral", "moonshot", "gemini", "azure", "anthropic"]
#: The reasoning level asked of the model (``ToolSelectionConfig.reasoning``).
Reasoning = Literal["off", "low", "medium", "high", "provider"]

#: Why a selection produced no calls (``SelectionFailure.kind``): Go's
#: ``fail_closed`` and its empty kinds, and the Python side's own.
SelectionFailureKind = Literal["fail_closed", "no_eligible_tools", "no_ranked_tools", "caller", "cancelled",
                               "internal"]

#: Why a tool the model named was not offered (``DroppedCall.rule`` of a
#: ``not_offered`` drop): the caller's eligibility rule (``denied_by_rule``,
#: ``unsafe``, ``role``, ``capability``), or ``not_in_offer`` for a tool the caller may use that the
#: offer, narrowed for the task, left out. Go's values (tests/test_typing.py).
DropRule = Literal["denied_by_rule", "unsafe", "role", "capability", "not_in_offer"]

class ToolRules(TypedDict, total=False):
    """Per-tool rules by name, the ``rules=`` of :meth:`ToolRegistry.run
    <toolselect.ToolRegistry.run>`, ``arun``, ``get``, ``for_caller`` and
    :class:`~toolselect.ToolSelector` (Go's ``registry.ToolRules``, as the
    MCP proxy's ``permissions`` take them). Each list holds patterns matched
    against the tool's name with Go's ``path.Match`` (``*`` any run of
    characters but ``/``, ``?`` one character, ``[...]`` a class, ``\\`` to
    quote); deny and ask patterns match whatever the case, allow patterns
    case for case. Deny is read first, then ask, then allow: the first list
    with a matching pattern decides, so no allow rule undoes a deny rule. A
    plain dict with these keys works the same; this type lets mypy catch a
    misspelt key."""

    #: Run without asking, even an unsafe tool (without ``allow_unsafe``);
    #: a tool registered with ``requires_approval=True`` is still asked about.
    allow: List[str]
    #: Ask ``approve`` about every call, even of a safe tool; refused
    #: (``approval_required``) without an approver.
    ask: List[str]
    #: Neither offered nor run (``denied_by_rule``), even a safe tool, even
    #: with ``allow_unsafe=True``.
    deny: List[str]


#: The failure kind of an attempt (``Attempt.kind``), as Go's selector names them.
FailureKind = Literal["transport", "timeout", "canceled", "http_status", "response_too_large", "empty_choices",
                      "parse", "validation", "search", "truncated", "config", "content_filter"]
