"""llm-common's registry surface over a :class:`~toolselect.ToolRegistry`.

In: an llm-common ``BaseTool`` read as a registration (its ``metadata`` and
``execute``). Out: what llm-common's executor calls on a registry
(``get``, ``execute``, ``list_tools``, a caller's view), each run going
through :meth:`ToolRegistry.arun` under a policy.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

from ._run import _policy_json
from .errors import UnknownToolError

if TYPE_CHECKING:
    from ._registry import ToolRegistry


def _is_base_tool(obj: Any) -> bool:
    return hasattr(obj, "metadata") and callable(getattr(obj, "execute", None))


def _field_of(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _schema_of_metadata(md: Any, name: str) -> Any:
    """The arguments' JSON Schema of an llm-common tool's metadata (see register_tool)."""
    to_schema = getattr(md, "to_schema", None)
    if callable(to_schema) and not isinstance(md, Mapping):
        return to_schema()
    params = _field_of(md, "parameters")
    if params is None:
        params = _field_of(md, "input_schema")
    if params is not None and hasattr(params, "model_json_schema"):
        return params.model_json_schema()  # a pydantic model class
    if isinstance(params, (list, tuple)):
        return _schema_of_parameters(params, name)
    return params


def _schema_of_parameters(params: Sequence[Any], tool: str) -> Dict[str, Any]:
    """A list of llm-common ``ToolParameter`` (or mappings of its fields) as
    the JSON Schema llm-common's ``ToolMetadata.to_schema()`` makes of it."""
    properties: Dict[str, Any] = {}
    required: List[str] = []
    for i, p in enumerate(params):
        pname, ptype = _field_of(p, "name"), _field_of(p, "type")
        if not isinstance(pname, str) or not pname or not isinstance(ptype, str):
            raise TypeError(f"tool {tool!r}: metadata.parameters[{i}] has no name and type (an llm-common "
                            "ToolParameter has name, type, description and required)")
        properties[pname] = {"type": ptype, "description": _field_of(p, "description") or ""}
        req = _field_of(p, "required")
        if req is None or req:
            required.append(pname)
    return {"type": "object", "properties": properties, "required": required}


def _executor_of(execute: Callable[..., Any]) -> Callable[..., Any]:
    """execute as a keyword callable: execute(**args), or execute(args) for a
    method that takes the arguments as one dict."""
    try:
        params = list(inspect.signature(execute).parameters.values())
    except (TypeError, ValueError):
        return execute
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return execute
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) == 1 and len(params) == 1:
        one = execute

        def call_with_dict(**kw: Any) -> Any:
            return one(kw)
        call_with_dict.__doc__ = getattr(execute, "__doc__", None)
        return call_with_dict
    return execute


async def _execute(reg: ToolRegistry, tool_name: str, args: Optional[Mapping[str, Any]], kwargs: Dict[str, Any],
                   policy: Dict[str, Any]) -> Any:
    """ToolRegistry.execute: arun, with every failure as a failed ToolResult."""
    from .types import ToolResult
    if args is not None and kwargs:
        raise TypeError("execute() takes the arguments as one mapping or as keywords, not both")
    if args is not None and not isinstance(args, Mapping):
        raise TypeError(f"execute() arguments must be a mapping, not {type(args).__name__}")
    try:
        out = await reg.arun(tool_name, dict(args) if args is not None else kwargs, **policy)
    except UnknownToolError as e:
        # llm-common's own words for a name it does not know.
        return ToolResult(success=False, error=f"Tool '{tool_name}' not found" if e.kind == "not_found" else str(e))
    except Exception as e:  # noqa: BLE001 - llm-common's registry reports every failure as a result
        return ToolResult(success=False, error=str(e))
    if isinstance(out, ToolResult) or all(hasattr(out, a) for a in ("success", "data", "error")):
        return out
    return ToolResult(success=True, data=out)


@dataclass(frozen=True)
class ToolDefinition:
    """A registered tool's definition, as :meth:`RegisteredTool.metadata`:
    ``parameters`` is its JSON Schema, which ``to_schema()`` returns too (the
    method llm-common's registry reads)."""

    name: str
    description: str
    parameters: Dict[str, Any]

    def to_schema(self) -> Dict[str, Any]:
        return self.parameters


class RegisteredTool:
    """A tool of a :class:`ToolRegistry` with llm-common's ``BaseTool``
    surface, from :meth:`ToolRegistry.get`: ``metadata`` and
    ``async execute(**kwargs)``, which runs it through
    :meth:`ToolRegistry.arun` under the policy it was got with."""

    def __init__(self, registry: ToolRegistry, name: str, policy: Dict[str, Any]) -> None:
        self.registry = registry
        self.name = name
        self._policy = policy

    @property
    def metadata(self) -> ToolDefinition:
        for t in json.loads(self.registry.get_tools_schema()):
            if t["name"] == self.name:
                return ToolDefinition(t["name"], t.get("description", ""), t.get("parameters") or {})
        raise UnknownToolError(f"tool {self.name!r} is no longer registered", code=3, kind="not_found")

    async def execute(self, **kwargs: Any) -> Any:
        """:meth:`ToolRegistry.arun` with these arguments; raises as it does."""
        return await self.registry.arun(self.name, kwargs, **self._policy)

    def __repr__(self) -> str:
        return f"RegisteredTool({self.name!r})"


class CallerRegistry:
    """A :class:`ToolRegistry` as one caller sees it (:meth:`ToolRegistry.for_caller`)."""

    def __init__(self, registry: ToolRegistry, policy: Dict[str, Any]) -> None:
        self.registry = registry
        self._policy = policy

    def get(self, name: str) -> Optional[RegisteredTool]:
        """:meth:`ToolRegistry.get` with this caller's policy."""
        return self.registry.get(name, **self._policy)

    async def execute(self, tool_name: str, args: Optional[Mapping[str, Any]] = None, /, **kwargs: Any) -> Any:
        """:meth:`ToolRegistry.execute` with this caller's policy."""
        return await _execute(self.registry, tool_name, args, kwargs, self._policy)

    def get_tools_schema(self) -> str:
        """:meth:`ToolRegistry.get_tools_schema` of the tools this caller may run."""
        may = self._may_run()
        return json.dumps([t for t in json.loads(self.registry.get_tools_schema()) if t["name"] in may],
                          separators=(",", ":"), ensure_ascii=False)

    def list_tools(self) -> List[Dict[str, str]]:
        """:meth:`ToolRegistry.list_tools` of the tools this caller may run."""
        may = self._may_run()
        return [t for t in self.registry.list_tools() if t["name"] in may]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._may_run([name])

    def _may_run(self, names: Optional[Iterable[str]] = None) -> "set[str]":
        """The tools (of names, or of the registry) this caller's run would
        not refuse by policy: the Go executor's own verdict for each
        (rules, unsafe, roles, capabilities, no-schema modes, an approver), asked
        with no arguments and recorded nowhere, since nothing runs."""
        policy = _policy_json(self._policy, self._policy["approve"] is not None, hints=False)
        out = set()
        for name in (self.registry.names() if names is None else names):
            v = self.registry._call("toolselect_registry_authorize",
                                    json.dumps({"tool": name, "args": {}}).encode(), policy)
            if v["allowed"] or v.get("rule") == "invalid_args":
                out.add(v["tool"])
        return out

    def _offer(self, request: Dict[str, Any]) -> str:
        """What a selector given this view may offer: the canonical
        definitions of the tools this caller may run (safe, roles and
        capabilities kept, so the selector's own settings still narrow it),
        returned as catalog text; a request without roles of its own gets
        this caller's, as Go's chat.Resolve completes a request."""
        if not request.get("roles") and self._policy["roles"]:
            request["roles"] = list(self._policy["roles"])
        may = self._may_run()
        return json.dumps([t for t in self.registry.view("canonical") if t["name"] in may])
