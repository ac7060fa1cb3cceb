"""ToolRegistry: the Go registry with Python callables attached."""

from __future__ import annotations

import collections
import datetime
import inspect
import json
import os
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, TypeVar, Union, overload

from . import _lib
from ._handle import Handle
from ._schema import Unsupported, function_schema
from .errors import InvalidArgumentsError, PolicyError, RegistrationError, UnknownToolError
from .types import BaseToolLike, ToolCall

F = TypeVar("F", bound=Callable[..., Any])
T_Tool = TypeVar("T_Tool", bound=BaseToolLike)

#: Provider formats accepted by :meth:`ToolRegistry.view`.
FORMATS = ("canonical", "schema", "openai", "openai-responses", "anthropic", "ollama", "mcp")


@dataclass(frozen=True)
class Violation:
    """One broken rule: the JSON pointer of the value, the schema keyword, and why."""

    pointer: str
    rule: str
    message: str


@dataclass(frozen=True)
class Validation:
    """The verdict on one argument document. Truthy when valid."""

    tool: str
    valid: bool
    violations: List[Violation] = field(default_factory=list)
    validated: bool = True
    message: str = ""

    def __bool__(self) -> bool:
        return self.valid


class ToolRegistry(Handle):
    """A registry of tools backed by the Go registry.

    Schemas are checked and compiled once, at registration; argument checks
    reuse the compiled validator. Register Python callables with
    :meth:`register` (directly or as a decorator) or load a catalog file with
    :meth:`load_catalog`; :meth:`get_tools_schema` returns the JSON text
    Python agent code expects, and :meth:`view` the provider formats.
    """

    _close_fn = "toolselect_registry_close"
    _kind = "registry"

    def __init__(self, *, limits: Optional[Mapping[str, int]] = None,
                 audit: Optional[Callable[[Dict[str, Any]], Any]] = None) -> None:
        opts = json.dumps({"limits": _limits(limits)}) if limits else None
        h = _lib.call("toolselect_registry_new", _lib.cstr(opts))["handle"]
        super().__init__(h)
        self._fns: Dict[str, Callable[..., Any]] = {}
        #: Called with each run's audit record (the Go executor's Record as a dict).
        self.audit = audit
        #: The last 1,024 audit records, oldest first.
        self.audit_records: "collections.deque[Dict[str, Any]]" = collections.deque(maxlen=1024)

    def _call(self, name: str, *args: Any, text: bool = False) -> Any:
        """Call an export on this registry, holding it open for the call."""
        with self.use() as h:
            return (_lib.call_text if text else _lib.call)(name, h, *args)

    # -- registration -------------------------------------------------------

    @overload
    def register(self, name: str, fn: F, *, description: Optional[str] = ..., parameters: Any = ...,
                 safe: bool = ..., tags: Iterable[str] = ..., roles: Iterable[str] = ...,
                 capabilities: Iterable[str] = ..., metadata: Optional[Mapping[str, Any]] = ...,
                 strict: bool = ..., allow_no_schema: bool = ..., no_schema_mode: Optional[str] = ...) -> F: ...

    @overload
    def register(self, name: str, fn: None = ..., *, description: Optional[str] = ..., parameters: Any = ...,
                 safe: bool = ..., tags: Iterable[str] = ..., roles: Iterable[str] = ...,
                 capabilities: Iterable[str] = ..., metadata: Optional[Mapping[str, Any]] = ...,
                 strict: bool = ..., allow_no_schema: bool = ...,
                 no_schema_mode: Optional[str] = ...) -> Callable[[F], F]: ...

    @overload
    def register(self, name: T_Tool, fn: None = ..., *, safe: bool = ..., tags: Iterable[str] = ...,
                 roles: Iterable[str] = ..., capabilities: Iterable[str] = ..., strict: bool = ...,
                 allow_no_schema: bool = ..., no_schema_mode: Optional[str] = ...) -> T_Tool: ...

    @overload
    def register(self, name: F, fn: None = ..., *, description: Optional[str] = ..., parameters: Any = ...,
                 safe: bool = ..., tags: Iterable[str] = ..., roles: Iterable[str] = ...,
                 capabilities: Iterable[str] = ..., metadata: Optional[Mapping[str, Any]] = ...,
                 strict: bool = ..., allow_no_schema: bool = ..., no_schema_mode: Optional[str] = ...) -> F: ...

    def register(self, name: Any, fn: Optional[Callable[..., Any]] = None, *, description: Optional[str] = None,
                 parameters: Any = None, safe: bool = True, tags: Iterable[str] = (), roles: Iterable[str] = (),
                 capabilities: Iterable[str] = (), metadata: Optional[Mapping[str, Any]] = None,
                 strict: bool = False, allow_no_schema: bool = False,
                 no_schema_mode: Optional[str] = None) -> Any:
        """Register a tool and the callable that runs it.

        ``parameters`` is the JSON Schema of the arguments (a dict, or JSON
        text kept byte for byte). Without it the schema is inferred from
        ``fn``'s signature and docstring (see :mod:`toolselect._schema`):
        each annotated parameter becomes a property, one with a default is
        optional, and the docstring's ``Args:`` (Google), ``Parameters``
        (NumPy) or ``:param:`` (reST) entries describe them; an annotation
        with no JSON Schema raises :class:`~toolselect.errors.RegistrationError`
        naming the parameter. ``description`` defaults to the docstring (its
        text before the sections when the schema is inferred). Without
        ``fn`` this returns a decorator; ``@registry.register`` alone
        registers the function under its own name::

            @registry.register("get_weather")
            def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
                \"\"\"Current weather for a city.

                Args:
                    city: The city name.
                    unit: Temperature unit.
                \"\"\"

        Raises :class:`~toolselect.errors.RegistrationError` naming the tool
        and the problem (duplicate name, missing or invalid schema, ...), and
        :class:`TypeError` for an argument of the wrong kind, naming the
        method that takes it (``register_tools`` for definition dicts).

        ``name`` may instead be an llm-common ``BaseTool`` (an object with
        ``metadata`` and an ``async execute``): see :meth:`register_tool`.
        """
        if not isinstance(name, str):
            if _is_base_tool(name):
                if fn is not None or description is not None or parameters is not None or metadata is not None:
                    raise TypeError("register(tool) takes the tool's description and parameters from "
                                    "tool.metadata, and runs tool.execute(): give it no fn, description, "
                                    "parameters or metadata")
                return self.register_tool(name, safe=safe, tags=tags, roles=roles, capabilities=capabilities,
                                          strict=strict, allow_no_schema=allow_no_schema,
                                          no_schema_mode=no_schema_mode)
            _check_register_name(name, fn)
            fn, name = name, name.__name__  # @registry.register: the function's own name
        _check_register_fn(name, fn)
        options = dict(description=description, parameters=parameters, safe=safe, tags=tags, roles=roles,
                       capabilities=capabilities, metadata=metadata, strict=strict,
                       allow_no_schema=allow_no_schema, no_schema_mode=no_schema_mode)

        def apply(f: Any) -> Any:
            _check_register_fn(name, f)
            self._register_one(name, f, infer=True, **options)
            return f

        if fn is None:
            return apply
        return apply(fn)

    def _register_one(self, name: str, f: Callable[..., Any], *, infer: bool, description: Optional[str],
                      parameters: Any, safe: bool, tags: Iterable[str], roles: Iterable[str],
                      capabilities: Iterable[str], metadata: Optional[Mapping[str, Any]], strict: bool,
                      allow_no_schema: bool, no_schema_mode: Optional[str]) -> None:
        """Register one tool run by ``f``; with ``infer``, a schema not given
        (and not waived with ``allow_no_schema``) is inferred from ``f``."""
        desc = description
        run = f
        if infer and parameters is None and not allow_no_schema:
            try:
                parameters, doc, converting = function_schema(f)
            except Unsupported as e:
                why = (f"the parameters schema cannot be inferred from {_callable_name(f)}: {e} (give "
                       "parameters=..., or set allow_no_schema with a no_schema_mode)")
                msg = f"tool {_quote(name)}: {why}"
                raise RegistrationError(msg, code=4, kind="rejected",
                                        detail={"refused": [{"tool": name, "index": -1, "reason": why,
                                                             "message": msg}]}) from None
            if desc is None:
                desc = doc
            run = converting or f
        if desc is None:
            desc = inspect.getdoc(f) or ""
        tool: Dict[str, Any] = {"type": "function", "name": name, "description": desc or "", "safe": bool(safe)}
        if parameters is not None:
            tool["parameters"] = _RawJSON(parameters)
        if strict:
            tool["strict"] = True
        if allow_no_schema:
            tool["allowNoSchema"] = True
        if no_schema_mode:
            tool["noSchemaMode"] = no_schema_mode
        for key, seq in (("tags", tags), ("roles", roles), ("capabilities", capabilities)):
            if isinstance(seq, str):
                raise TypeError(f"{key} must be a sequence of strings, not a string")
            items = list(seq)
            if items:
                tool[key] = items
        if metadata:
            tool["metadata"] = dict(metadata)
        try:
            self._call("toolselect_registry_register", _lib.cstr(_dump_tool(tool)))
        except RegistrationError as e:
            raise _with_python_names(e) from None
        self._fns[name] = run

    def register_tool(self, tool: Any, **options: Any) -> Any:
        """Register an llm-common ``BaseTool``: its ``metadata`` (an object or
        mapping with ``name``, ``description`` and the arguments' schema)
        becomes the definition, and its ``execute`` the callable that
        :meth:`arun` awaits with the validated arguments (as keywords, or as
        one dict when ``execute`` takes a single positional parameter).
        ``options`` are :meth:`register`'s keywords. Returns the tool.

        The schema is what llm-common's own registry tells the model:
        ``metadata.to_schema()`` when the metadata has one (llm-common's
        ``ToolMetadata``, whose ``parameters`` is a list of ``ToolParameter``);
        else ``parameters`` as a JSON Schema (a dict, JSON text or a pydantic
        model class), or as a list of ``ToolParameter``-shaped items (objects
        or mappings with ``name``, ``type``, ``description`` and
        ``required``, default true), read as ``to_schema()`` reads them;
        else ``input_schema``."""
        md = getattr(tool, "metadata", None)
        if callable(md) and not isinstance(md, Mapping):
            md = md()
        if md is None:
            raise TypeError(f"{type(tool).__name__} has no metadata (an llm-common BaseTool has name, "
                            "description and parameters there)")
        name = _field_of(md, "name")
        if not isinstance(name, str) or not name:
            raise TypeError(f"{type(tool).__name__}.metadata has no name")
        params = _schema_of_metadata(md, name)
        execute = getattr(tool, "execute", None)
        if not callable(execute):
            raise TypeError(f"{type(tool).__name__} has no execute()")
        opts: Dict[str, Any] = dict(description=_field_of(md, "description") or "", parameters=params, safe=True,
                                    tags=(), roles=(), capabilities=(), metadata=None, strict=False,
                                    allow_no_schema=False, no_schema_mode=None)
        unknown = sorted(set(options) - set(opts))
        if unknown:
            raise TypeError(f"register_tool() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}")
        opts.update(options)
        # The schema is the tool's own: a BaseTool's execute(**kwargs) says nothing of its arguments.
        self._register_one(name, _executor_of(execute), infer=False, **opts)
        return tool

    def register_tools(self, tools: Union[str, Sequence[Mapping[str, Any]]]) -> int:
        """Register canonical tool definitions (a list of dicts or JSON text), all or none."""
        text = tools if isinstance(tools, str) else json.dumps(list(tools))
        return int(self._call("toolselect_registry_register", _lib.cstr(text))["registered"])

    def load_catalog(self, source: Union[str, bytes, "os.PathLike[str]"]) -> int:
        """Register every tool of a catalog, all or none. ``source`` is a path
        or the catalog text itself (canonical JSON array or JSON Lines, an
        OpenAI or Anthropic tools array, or an MCP tools/list result)."""
        if isinstance(source, os.PathLike) or (isinstance(source, str) and not source.lstrip().startswith(("[", "{"))):
            # The library reads the file itself: the text never passes through
            # Python, and errors name the file and line.
            # Opening it here first keeps the OSError a caller may catch
            # (FileNotFoundError, IsADirectoryError, PermissionError).
            open(source, "rb").close()
            path = os.fsencode(source)
            return int(self._call("toolselect_registry_load_catalog_file", path)["registered"])
        data = source.encode("utf-8") if isinstance(source, str) else source
        return int(self._call("toolselect_registry_load_catalog", data)["registered"])

    def bind(self, name: str, fn: Callable[..., Any]) -> None:
        """Attach a callable to a tool already registered (e.g. loaded from a catalog)."""
        self.validate(name, {})  # raises UnknownToolError for an unknown name
        self._fns[name] = fn

    # -- reading ------------------------------------------------------------

    def get_tools_schema(self) -> str:
        """The tools as JSON text: ``[{"name","description","parameters"}]``."""
        return self._call("toolselect_registry_schema", text=True)

    def view(self, format: str = "canonical") -> List[Dict[str, Any]]:
        """Every tool in a provider format: one of :data:`FORMATS`. Names a
        provider forbids are mapped reversibly (a call coming back under the
        mapped name still resolves)."""
        return self._call("toolselect_registry_view", _lib.cstr(format))

    def openai_tools(self) -> List[Dict[str, Any]]:
        """Chat Completions ``tools`` entries."""
        return self.view("openai")

    def anthropic_tools(self) -> List[Dict[str, Any]]:
        """Anthropic Messages API tools."""
        return self.view("anthropic")

    def mcp_tools(self) -> List[Dict[str, Any]]:
        """MCP ``Tool`` objects."""
        return self.view("mcp")

    def names(self) -> List[str]:
        return [t["name"] for t in json.loads(self.get_tools_schema())]

    def __len__(self) -> int:
        return len(self.names())

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self.validate(name, {})
        except UnknownToolError:
            return False
        return True

    # -- llm-common's registry surface: get(), execute(), list_tools() ------------

    def get(self, name: str, *, allow_unsafe: bool = False, roles: Iterable[str] = (),
            capabilities: Iterable[str] = (),
            approve: Optional[Callable[[Dict[str, Any]], Any]] = None) -> "Optional[RegisteredTool]":
        """llm-common's ``ToolRegistry.get``: the tool named ``name``, or
        ``None`` when there is none. What it returns has llm-common's
        ``BaseTool`` surface (``metadata``, ``async execute(**kwargs)``), and
        its ``execute`` runs the tool through :meth:`arun`, under the policy
        given here (the same keywords, and the same defaults: unsafe tools,
        tools with roles and approval tools are refused) and with an audit
        record for every run. A refusal raises as :meth:`arun` does."""
        if name not in self:
            return None
        return RegisteredTool(self, name, _policy(allow_unsafe, roles, capabilities, approve))

    async def execute(self, tool_name: str, args: Optional[Mapping[str, Any]] = None, /,
                      **kwargs: Any) -> Any:
        """llm-common's ``ToolRegistry.execute``: run ``tool_name`` and return
        its result without raising. The arguments are one mapping, as
        llm-common's executor passes them (``execute(call.tool, call.args)``),
        or keywords, as its registry takes them (``execute(name, **args)``).

        The run is :meth:`arun`'s, under the default policy (unsafe tools,
        tools with roles and approval tools are refused; use
        :meth:`for_caller` to run as a caller with more rights), and leaves
        its audit record. What the tool returns is returned as it is when it
        is a ``ToolResult`` (llm-common's, or one with ``success``, ``data``
        and ``error``), else as ``ToolResult(success=True, data=result)``. An
        unknown tool, a refusal, invalid arguments or an exception from the
        tool give ``ToolResult(success=False, error=...)``, as llm-common's
        registry reports a failure."""
        return await _execute(self, tool_name, args, kwargs, {})

    def list_tools(self) -> List[Dict[str, str]]:
        """llm-common's ``ToolRegistry.list_tools``: ``[{"name", "description"}]``."""
        return [{"name": t["name"], "description": t.get("description", "")}
                for t in json.loads(self.get_tools_schema())]

    def for_caller(self, *, allow_unsafe: bool = False, roles: Iterable[str] = (), capabilities: Iterable[str] = (),
                   approve: Optional[Callable[[Dict[str, Any]], Any]] = None) -> "CallerRegistry":
        """This registry as one caller sees it: ``get``, ``execute``,
        ``list_tools`` and ``get_tools_schema`` whose runs go through
        :meth:`arun` with these policy keywords. Hand it to an executor that
        calls ``registry.execute(...)`` or ``registry.get(...)``, which have
        no room for them."""
        return CallerRegistry(self, _policy(allow_unsafe, roles, capabilities, approve))

    # -- validation and running ----------------------------------------------

    def validate(self, tool: str, args: Union[Mapping[str, Any], str, bytes, None]) -> Validation:
        """Check arguments (a dict, or JSON text as a model sent it) against
        the tool's schema. Returns a :class:`Validation` listing every
        violation; raises :class:`UnknownToolError` for an unknown tool."""
        if args is None:
            text: Any = b"{}"
        elif isinstance(args, (str, bytes)):
            text = _lib.cstr(args)
        else:
            text = json.dumps(args, separators=(",", ":")).encode()
        r = self._call("toolselect_registry_validate", _lib.cstr(tool), text)
        return Validation(
            tool=r["tool"], valid=r["valid"], validated=r.get("validated", True), message=r.get("message", ""),
            violations=[Violation(v["pointer"], v["rule"], v["message"]) for v in r.get("violations") or []],
        )

    def _authorize(self, call: Union[ToolCall, str], args: Optional[Mapping[str, Any]], allow_unsafe: bool,
                   roles: Iterable[str], capabilities: Iterable[str], approver: bool,
                   clock: "_Clock") -> "tuple[Dict[str, Any], Dict[str, Any]]":
        """Ask the Go executor's policy whether the call may run (resolve,
        unsafe, roles, capabilities, no-schema modes, approval, arguments).
        Returns the verdict and the fields of the audit record begun; raises
        on a refusal, after auditing it (the Go executor's own record)."""
        if isinstance(call, ToolCall):
            name, a, cid = call.tool, dict(call.args), getattr(call, "id", "") or ""
        else:
            name, a, cid = call, dict(args or {}), ""
        policy = {"allow_unsafe": bool(allow_unsafe), "roles": _names("roles", roles),
                  "capabilities": _names("capabilities", capabilities), "approver": bool(approver)}
        v = self._call("toolselect_registry_authorize",
                       json.dumps({"id": cid, "tool": name, "args": a}, separators=(",", ":")).encode(),
                       json.dumps(policy).encode())
        if not v["allowed"]:
            rec = v.get("audit")
            if rec:
                self._audit(rec)
            else:  # the library always sends one; a record all the same
                rec = self._end({"id": cid, "tool": v.get("tool", name), "args": a, "validated": False}, clock,
                                v.get("outcome") or "refused", v.get("message", ""))
            rule, msg = v.get("rule", ""), v.get("message", "")
            if rule == "invalid_args":
                raise InvalidArgumentsError(msg or f"invalid arguments for {name!r}", tool=v.get("tool", name),
                                            violations=[Violation(x["pointer"], x["rule"], x["message"])
                                                        for x in v.get("violations") or []])
            if rule == "unknown_tool":
                raise UnknownToolError(msg, code=3, kind="not_found")
            raise PolicyError(f"{v.get('tool', name)!r} refused by the run policy ({rule}): {msg}", rule=rule,
                              tool=v.get("tool", name), record=rec)
        fields = {"id": cid, "tool": v["tool"], "args": v.get("args"), "validated": v.get("validated", True),
                  "policy": v.get("policy", "")}
        return v, fields

    def _begin(self, call: Union[ToolCall, str], args: Optional[Mapping[str, Any]], allow_unsafe: bool,
               roles: Iterable[str], capabilities: Iterable[str], approve: Optional[Callable[..., Any]]
               ) -> "tuple[Callable[..., Any], Dict[str, Any], Dict[str, Any], Dict[str, Any], _Clock]":
        clock = _Clock()  # the call reached the policy: the record's start, as in Go
        v, fields = self._authorize(call, args, allow_unsafe, roles, capabilities, approve is not None, clock)
        fn = self._fns.get(v["tool"])
        if fn is None:
            # Go refuses a registered tool with no handler before its policy
            # (executor.ErrNoHandler): the record says so, in Go's words.
            tool = v["tool"]
            self._end({"id": fields["id"], "tool": tool, "args": fields["args"], "validated": False}, clock,
                      "refused", _call_error(tool, "refused", f"no handler bound to the tool {_quote(tool)}"))
            raise UnknownToolError(f"tool {tool!r} has no Python callable (register it with fn, or bind())")
        a = v.get("args")
        return fn, (dict(a) if isinstance(a, Mapping) else {}), v, fields, clock

    def _approver_failed(self, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock",
                         err: BaseException) -> BaseException:
        """Audit an approver that raised, as the Go executor does (refused,
        "the approver failed"; canceled while waiting, for a cancellation),
        and return what to raise."""
        tool = v["tool"]
        if not isinstance(err, Exception):  # cancelled, interrupted: raised as it is
            self._end(fields, clock, "canceled", _call_error(tool, "canceled", f"waiting for approval: {_describe(err)}"))
            return err
        why = f"approval denied: the approver failed: {_describe(err)}"
        rec = self._end(fields, clock, "refused", _call_error(tool, "refused", why))
        return PolicyError(why, rule="approval_denied", tool=tool, record=rec)

    def _approval(self, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock", answer: Any) -> None:
        """Read an approver's answer (a bool, a mapping or an object with
        ``approved``, ``by``, ``reason``); a denial is audited and raised."""
        approved, by, reason = answer, "", ""
        if isinstance(answer, Mapping):
            approved, by, reason = answer.get("approved"), answer.get("by", ""), answer.get("reason", "")
        elif hasattr(answer, "approved"):
            approved, by, reason = answer.approved, getattr(answer, "by", ""), getattr(answer, "reason", "")
        if not approved:
            denied = "denied" + (f" by {by}" if by else "") + (f": {reason}" if reason else "")
            rec = self._end(fields, clock, "refused", _call_error(v["tool"], "refused", f"approval denied: {denied}"))
            raise PolicyError("approval " + denied, rule="approval_denied", tool=v["tool"], record=rec)
        fields["approvedBy"] = str(by or "approver")

    def _end(self, fields: Dict[str, Any], clock: "_Clock", outcome: str, error: str = "") -> Dict[str, Any]:
        """Write the run's one audit record, shaped as the Go executor's
        Record is in JSON (same keys, in its order; empty id, policy,
        approvedBy and error left out), and return it."""
        rec: Dict[str, Any] = {}
        if fields.get("id"):
            rec["id"] = fields["id"]
        rec["tool"] = fields["tool"]
        rec["args"] = fields.get("args")
        rec["validated"] = bool(fields.get("validated"))
        for key in ("policy", "approvedBy"):
            if fields.get(key):
                rec[key] = fields[key]
        rec["start"] = _iso(clock.start)
        rec["durationMs"] = clock.ms()
        rec["outcome"] = outcome
        if error:
            rec["error"] = error
        self._audit(rec)
        return rec

    def _finish(self, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock",
                err: Optional[BaseException]) -> None:
        """Audit the end of the callable: ok, its exception (tool_error), or a
        cancellation (canceled)."""
        if err is None:
            self._end(fields, clock, "ok")
        elif isinstance(err, Exception):
            self._end(fields, clock, "tool_error", _describe(err))
        else:
            self._end(fields, clock, "canceled", _call_error(v["tool"], "canceled", _describe(err)))

    def _audited(self, aw: Any, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock") -> Any:
        """What run() returns for an async tool: a coroutine that awaits the
        tool's and writes the record when it ends; one never awaited is
        recorded as canceled when it is collected."""
        async def run_tool() -> Any:
            never.detach()
            try:
                out = await aw
            except BaseException as e:
                self._finish(v, fields, clock, e)
                raise
            self._finish(v, fields, clock, None)
            return out

        coro = run_tool()
        never = weakref.finalize(coro, self._never_awaited, aw, v, fields, clock)
        return coro

    def _never_awaited(self, aw: Any, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock") -> None:
        if inspect.iscoroutine(aw):
            aw.close()
        self._end(fields, clock, "canceled",
                  _call_error(v["tool"], "canceled", "the coroutine run() returned was never awaited"))

    def _audit(self, rec: Dict[str, Any]) -> None:
        self.audit_records.append(rec)
        if self.audit is not None:
            try:
                self.audit(rec)
            except Exception:  # noqa: BLE001 - an audit sink must not change the call's outcome
                pass

    def run(self, call: Union[ToolCall, str], args: Optional[Mapping[str, Any]] = None, *,
            allow_unsafe: bool = False, roles: Iterable[str] = (), capabilities: Iterable[str] = (),
            approve: Optional[Callable[[Dict[str, Any]], Any]] = None) -> Any:
        """Run a call's Python callable with the arguments as keywords, under
        the Go executor's policy: a tool marked unsafe needs ``allow_unsafe``,
        a tool with roles runs only for a caller holding one of ``roles``, a
        tool must declare every capability in ``capabilities``, the no-schema
        modes apply, and a human-approval tool runs only when ``approve``
        (called with ``{"id","tool","args"}``) says yes; an ``approve`` that
        raises, or returns an awaitable (use :meth:`arun`), denies. A refusal
        raises :class:`PolicyError` naming the rule; invalid arguments raise
        :class:`InvalidArgumentsError`; a tool with no callable bound raises
        :class:`UnknownToolError`; in every case the callable is not run.
        Every call leaves exactly one audit record, shaped like the Go
        executor's (:attr:`audit_records`, and the ``audit`` callable given to
        the registry): its ``start`` is when the call reached the policy.
        For an ``async def`` tool a coroutine is returned, and the record is
        written when it has been awaited (use :meth:`arun`)."""
        fn, a, v, fields, clock = self._begin(call, args, allow_unsafe, roles, capabilities, approve)
        if v.get("approval_required"):
            try:
                answer = approve({"id": fields["id"], "tool": v["tool"], "args": a})  # type: ignore[misc]
                if inspect.isawaitable(answer):
                    if inspect.iscoroutine(answer):
                        answer.close()
                    raise TypeError("approve returned an awaitable; run() cannot wait for it (use arun)")
            except BaseException as e:
                raise self._approver_failed(v, fields, clock, e) from e
            self._approval(v, fields, clock, answer)
        try:
            out = fn(**a)
        except BaseException as e:
            self._finish(v, fields, clock, e)
            raise
        if inspect.isawaitable(out):
            return self._audited(out, v, fields, clock)
        self._finish(v, fields, clock, None)
        return out

    async def arun(self, call: Union[ToolCall, str], args: Optional[Mapping[str, Any]] = None, *,
                   allow_unsafe: bool = False, roles: Iterable[str] = (), capabilities: Iterable[str] = (),
                   approve: Optional[Callable[[Dict[str, Any]], Any]] = None) -> Any:
        """:meth:`run`, awaiting the result when the tool is ``async`` (and
        the approver when it is)."""
        fn, a, v, fields, clock = self._begin(call, args, allow_unsafe, roles, capabilities, approve)
        if v.get("approval_required"):
            try:
                answer = approve({"id": fields["id"], "tool": v["tool"], "args": a})  # type: ignore[misc]
                if inspect.isawaitable(answer):
                    answer = await answer
            except BaseException as e:
                raise self._approver_failed(v, fields, clock, e) from e
            self._approval(v, fields, clock, answer)
        try:
            out = fn(**a)
            if inspect.isawaitable(out):
                out = await out
        except BaseException as e:
            self._finish(v, fields, clock, e)
            raise
        self._finish(v, fields, clock, None)
        return out


class _Clock:
    """When a run reached the policy: wall time for the record's start, a
    monotonic clock for its duration."""

    __slots__ = ("start", "t0")

    def __init__(self) -> None:
        self.start, self.t0 = time.time(), time.perf_counter()

    def ms(self) -> float:
        """Milliseconds since the start, to the microsecond (Go's durationMs)."""
        return round((time.perf_counter() - self.t0) * 1000, 3)


def _quote(name: str) -> str:
    """A tool name as Go's %q writes it (for the names a registry accepts)."""
    return json.dumps(name, ensure_ascii=False)


def _call_error(tool: str, outcome: str, why: str) -> str:
    """The Go executor's CallError text: call of tool "x" refused: why."""
    return f"call of tool {_quote(tool)} {outcome}: {why}"


def _describe(err: BaseException) -> str:
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _names(what: str, seq: Iterable[str]) -> List[str]:
    if isinstance(seq, (str, bytes)):
        raise TypeError(f"{what} must be a list of names, not one string")
    return [str(x) for x in seq]


def _iso(t: float) -> str:
    """t as Go writes a time.Time in JSON (RFC 3339, UTC, to the microsecond
    here, trailing zeros of the fraction left out)."""
    d = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    frac = f"{d.microsecond:06d}".rstrip("0")
    return d.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z"


def _check_register_name(name: Any, fn: Any) -> None:
    """register()'s first argument when it is not a name: a callable alone
    (the bare decorator) is accepted; anything else is a TypeError naming
    the method that takes it."""
    if isinstance(name, Mapping) or (isinstance(name, (list, tuple)) and all(isinstance(x, Mapping) for x in name)):
        raise TypeError("register() takes a tool's name and the callable that runs it; register tool definition "
                        "dicts with register_tools([...]) (and a catalog file with load_catalog(path))")
    if isinstance(name, (bytes, os.PathLike)):
        raise TypeError(f"register() takes a tool's name as a str, not {type(name).__name__}; "
                        "load a catalog file with load_catalog(path)")
    if callable(name) and fn is None and isinstance(getattr(name, "__name__", None), str):
        return
    raise TypeError(f"register() takes a tool's name as a str, not {type(name).__name__} (register(name, fn), "
                    "@register(name) or @register; register_tool(tool) for an llm-common BaseTool, "
                    "register_tools([...]) for definition dicts)")


def _check_register_fn(name: str, fn: Any) -> None:
    if fn is None or callable(fn):
        return
    if isinstance(fn, Mapping):
        raise TypeError(f"register({name!r}, fn): fn is the callable that runs the tool, not a "
                        f"{type(fn).__name__}; give the JSON Schema as parameters=..., or register definition "
                        "dicts with register_tools([...])")
    if isinstance(fn, str):
        raise TypeError(f"register({name!r}, fn): fn is the callable that runs the tool, not a str; give the "
                        "description as description=...")
    raise TypeError(f"register({name!r}, fn): fn must be callable, not {type(fn).__name__}")


def _callable_name(fn: Any) -> str:
    n = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    return f"{n}()" if isinstance(n, str) else repr(fn)


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


class _RawJSON:
    """A schema given as JSON text, embedded verbatim by _dump_tool."""

    def __init__(self, value: Any) -> None:
        if isinstance(value, (bytes, bytearray)):
            value = value.decode("utf-8")
        if isinstance(value, str):
            json.loads(value)  # raise ValueError early for text that is not JSON
            self.text = value
        else:
            self.text = json.dumps(value)


def _dump_tool(tool: Dict[str, Any]) -> str:
    raw = {k: v for k, v in tool.items() if isinstance(v, _RawJSON)}
    plain = {k: v for k, v in tool.items() if not isinstance(v, _RawJSON)}
    text = json.dumps(plain)
    for k, v in raw.items():
        text = text[:-1] + ("," if len(text) > 2 else "") + json.dumps(k) + ":" + v.text + "}"
    return text


def _limits(limits: Mapping[str, int]) -> Dict[str, int]:
    names = {"max_schema_bytes": "MaxSchemaBytes", "max_schema_depth": "MaxSchemaDepth", "max_enum": "MaxEnum",
             "max_args_bytes": "MaxArgsBytes", "max_args_depth": "MaxArgsDepth",
             "max_pattern_size": "MaxPatternSize", "max_pattern_work": "MaxPatternWork",
             "max_description_bytes": "MaxDescriptionBytes"}
    out = {}
    for k, v in limits.items():
        if k not in names:
            raise ValueError(f"unknown limit {k!r} (want one of {', '.join(names)})")
        out[names[k]] = int(v)
    return out


# The registry's messages name the canonical JSON fields; register() takes
# them as keyword arguments, so its errors use the keyword names.
_PYTHON_NAMES = (("allowNoSchema", "allow_no_schema"), ("noSchemaMode", "no_schema_mode"))


def _python_names(text: str) -> str:
    for go, py in _PYTHON_NAMES:
        text = text.replace(go, py)
    return text


def _with_python_names(e: RegistrationError) -> RegistrationError:
    detail = e.detail
    if isinstance(detail, dict) and isinstance(detail.get("refused"), list):
        detail = dict(detail)
        detail["refused"] = [
            {k: _python_names(v) if isinstance(v, str) and k != "tool" else v for k, v in r.items()}
            if isinstance(r, dict) else r
            for r in detail["refused"]
        ]
    return RegistrationError(_python_names(e.message), code=e.code, kind=e.kind, detail=detail)


# -- llm-common's registry surface (ToolRegistry.get, execute, for_caller) ------------

def _policy(allow_unsafe: bool, roles: Iterable[str], capabilities: Iterable[str],
            approve: Optional[Callable[[Dict[str, Any]], Any]]) -> Dict[str, Any]:
    """arun's policy keywords, checked now (a string is not a list of roles)."""
    return {"allow_unsafe": bool(allow_unsafe), "roles": _names("roles", roles),
            "capabilities": _names("capabilities", capabilities), "approve": approve}


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
        return self.registry.get_tools_schema()

    def list_tools(self) -> List[Dict[str, str]]:
        return self.registry.list_tools()

    def __contains__(self, name: object) -> bool:
        return name in self.registry
