"""ToolRegistry: the Go registry with Python callables attached."""

from __future__ import annotations

import collections
import copy
import datetime
import inspect
import json
import os
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, NoReturn, Optional, Sequence, TypeVar, Union, overload

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

    def __str__(self) -> str:
        """As Go's Violation prints: at /pointer: message (rule)."""
        return f"at {self.pointer or '/'}: {self.message} ({self.rule})"


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
        safe, strict, allow_no_schema = _flag("safe", safe), _flag("strict", strict), \
            _flag("allow_no_schema", allow_no_schema)
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
        text: str = self._call("toolselect_registry_schema", text=True)
        return text

    def view(self, format: str = "canonical") -> List[Dict[str, Any]]:
        """Every tool in a provider format: one of :data:`FORMATS`. Names a
        provider forbids are mapped reversibly (a call coming back under the
        mapped name still resolves)."""
        tools: List[Dict[str, Any]] = self._call("toolselect_registry_view", _lib.cstr(format))
        return tools

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
            try:
                _loads_once(args)
            except _BadArguments as bad:  # the library names the tool, or raises UnknownToolError
                r = self._call("toolselect_registry_validate", _lib.cstr(tool), b"{}")
                return Validation(tool=r["tool"], valid=False, violations=[bad.violation], message=str(bad))
            except ValueError:
                pass  # not JSON: the library says where
        else:
            text = json.dumps(args, separators=(",", ":")).encode()
        r = self._call("toolselect_registry_validate", _lib.cstr(tool), text)
        return Validation(
            tool=r["tool"], valid=r["valid"], validated=r.get("validated", True), message=r.get("message", ""),
            violations=[Violation(v["pointer"], v["rule"], v["message"]) for v in r.get("violations") or []],
        )

    def _authorize(self, call: Union[ToolCall, str], args: "Optional[Arguments]", policy: Dict[str, Any],
                   clock: "_Clock") -> "tuple[Dict[str, Any], Dict[str, Any]]":
        """Ask the Go executor's policy whether the call may run (resolve,
        unsafe, roles, capabilities, no-schema modes, approval, arguments).
        Returns the verdict and the fields of the audit record begun; raises
        on a refusal, after auditing it (the Go executor's own record)."""
        if isinstance(call, ToolCall):
            name, args, cid = call.tool, call.args, getattr(call, "id", "") or ""
        else:
            name, cid = call, ""
        try:
            a = _arguments(args)
        except _BadArguments as bad:
            # Refused before the policy is asked: there is no one value to judge.
            text = bytes(args).decode("utf-8", "replace") if isinstance(args, (bytes, bytearray)) else args
            why = f"invalid arguments for tool {_quote(name)}: {bad.violation}"
            self._end({"id": cid, "tool": name, "args": text, "validated": False}, clock, "invalid",
                      _call_error(name, "invalid", why))
            raise InvalidArgumentsError(why, tool=name, violations=[bad.violation]) from None
        v = self._call("toolselect_registry_authorize",
                       json.dumps({"id": cid, "tool": name, "args": a}, separators=(",", ":")).encode(),
                       json.dumps({"allow_unsafe": policy["allow_unsafe"], "roles": policy["roles"],
                                   "capabilities": policy["capabilities"],
                                   "approver": policy["approve"] is not None,
                                   # The audit record says what to pass in Python's names too.
                                   "hints": _RULE_HINTS}).encode())
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
            raise PolicyError(_refusal_text(v.get("tool", name), rule, v.get("reason") or msg), rule=rule,
                              tool=v.get("tool", name), record=rec)
        fields = {"id": cid, "tool": v["tool"], "args": v.get("args"), "validated": v.get("validated", True),
                  "policy": v.get("policy", "")}
        return v, fields

    def _begin(self, call: Union[ToolCall, str], args: "Optional[Arguments]", policy: Dict[str, Any]
               ) -> "tuple[Callable[..., Any], Dict[str, Any], Dict[str, Any], Dict[str, Any], _Clock]":
        clock = _Clock()  # the call reached the policy: the record's start, as in Go
        v, fields = self._authorize(call, args, policy, clock)
        fn = self._fns.get(v["tool"])
        if fn is None:
            # Go refuses a registered tool with no handler before its policy
            # (executor.ErrNoHandler): the record says so, in Go's words.
            tool = v["tool"]
            self._end({"id": fields["id"], "tool": tool, "args": fields["args"], "validated": False}, clock,
                      "refused", _call_error(tool, "refused", f"no handler bound to the tool {_quote(tool)}"))
            raise UnknownToolError(f"tool {tool!r} has no Python callable (register it with fn, or bind())")
        # The record keeps the validated value the library returned; the
        # approver and the callable each get their own copy of it, so neither
        # can change what the other sees or what the record says ran.
        a = v.get("args")
        return fn, (copy.deepcopy(a) if isinstance(a, dict) else {}), v, fields, clock

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
        """Read an approver's answer. An approval is exactly ``True``, or a
        mapping or an object whose ``approved`` is exactly ``True`` (its
        ``by`` goes to the record); ``False``, or ``approved`` ``False``, is
        a denial (with ``by`` and ``reason``); anything else (``"false"``,
        ``1``, ``None``, an object without ``approved``, an awaitable) is
        not an approval: refused, naming what came back. A denial is
        audited and raised."""
        by: Any = ""
        reason: Any = ""
        try:
            if isinstance(answer, bool):
                approved: object = answer
            elif isinstance(answer, Mapping):
                approved, by, reason = answer.get("approved"), answer.get("by", ""), answer.get("reason", "")
            elif not inspect.isawaitable(answer) and hasattr(answer, "approved"):
                approved, by, reason = answer.approved, getattr(answer, "by", ""), getattr(answer, "reason", "")
            else:
                approved = _NOT_AN_APPROVAL
            by, reason = str(by or ""), str(reason or "")
        except Exception as e:  # noqa: BLE001 - an answer that cannot be read approves nothing
            self._deny(v, fields, clock, f"reading the approver's answer, {_shown(answer)}, failed: {_describe(e)}")
        if approved is _NOT_AN_APPROVAL:
            self._deny(v, fields, clock, f"the approver returned {_shown(answer)}, which is not an approval "
                                         f"({_APPROVAL})")
        if approved is True:
            fields["approvedBy"] = by or "approver"
            return
        if approved is not False:
            self._deny(v, fields, clock, f"the approver returned {_shown(answer)}, whose approved is "
                                         f"{_shown(approved)}, not True ({_APPROVAL})")
        denied = "denied" + (f" by {by}" if by else "") + (f": {reason}" if reason else "")
        rec = self._end(fields, clock, "refused", _call_error(v["tool"], "refused", f"approval denied: {denied}"))
        raise PolicyError("approval " + denied, rule="approval_denied", tool=v["tool"], record=rec)

    def _deny(self, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock", why: str) -> NoReturn:
        """Refuse a call whose approver gave no approval: audited, then raised."""
        rec = self._end(fields, clock, "refused", _call_error(v["tool"], "refused", f"approval denied: {why}"))
        raise PolicyError(f"approval denied: {why}", rule="approval_denied", tool=v["tool"], record=rec)

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

    def run(self, call: Union[ToolCall, str], args: "Optional[Arguments]" = None, *,
            allow_unsafe: bool = False, roles: Iterable[str] = (), capabilities: Iterable[str] = (),
            approve: Optional[Callable[[Dict[str, Any]], Any]] = None) -> Any:
        """Run a call's Python callable with the arguments as keywords, under
        the Go executor's policy: a tool marked unsafe needs ``allow_unsafe``
        (``True`` or ``False`` only: anything else is a ``TypeError``), a tool
        with roles runs only for a caller holding one of ``roles``, a tool
        must declare every capability in ``capabilities``, the no-schema
        modes apply, and a human-approval tool runs only when ``approve``
        (called with ``{"id","tool","args"}``, ``args`` a copy) answers
        ``True``, or a mapping or object whose ``approved`` is ``True``. Any
        other answer (``"no"``, ``1``, ``None``, an awaitable, which
        :meth:`arun` awaits once) is refused naming what came back; an
        ``approve`` that raises is a refusal too, with the exception as its
        ``__cause__``. ``args`` is a mapping or JSON text (as a model sent
        it), parsed once; a key given twice in one object is refused. The
        callable gets its own copy of the validated value, the one the
        record shows. A refusal raises :class:`PolicyError` naming the rule
        (and what to pass, in Python's names); invalid arguments raise
        :class:`InvalidArgumentsError`; a tool with no callable bound raises
        :class:`UnknownToolError`; in every case the callable is not run.
        Every call leaves exactly one audit record, shaped like the Go
        executor's (:attr:`audit_records`, and the ``audit`` callable given to
        the registry): its ``start`` is when the call reached the policy.
        For an ``async def`` tool a coroutine is returned, and the record is
        written when it has been awaited (use :meth:`arun`)."""
        policy = _policy(allow_unsafe, roles, capabilities, approve)
        fn, a, v, fields, clock = self._begin(call, args, policy)
        if v.get("approval_required"):
            try:
                answer = approve(_approval_request(fields, v, a))  # type: ignore[misc]
            except BaseException as e:
                raise self._approver_failed(v, fields, clock, e) from e
            if inspect.isawaitable(answer):
                shown = _shown(answer)
                _discard(answer)
                self._deny(v, fields, clock, f"the approver returned {shown}; run() cannot wait for it (use arun)")
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

    async def arun(self, call: Union[ToolCall, str], args: "Optional[Arguments]" = None, *,
                   allow_unsafe: bool = False, roles: Iterable[str] = (), capabilities: Iterable[str] = (),
                   approve: Optional[Callable[[Dict[str, Any]], Any]] = None) -> Any:
        """:meth:`run`, awaiting the result when the tool is ``async`` (and
        the approver when it is)."""
        policy = _policy(allow_unsafe, roles, capabilities, approve)
        fn, a, v, fields, clock = self._begin(call, args, policy)
        if v.get("approval_required"):
            try:
                answer = approve(_approval_request(fields, v, a))  # type: ignore[misc]
                if inspect.isawaitable(answer):
                    answer = await answer
            except BaseException as e:
                raise self._approver_failed(v, fields, clock, e) from e
            if inspect.isawaitable(answer):  # e.g. an async approver that returned approve2(req), not awaited
                shown = _shown(answer)
                _discard(answer)
                self._deny(v, fields, clock, f"the approver's answer, awaited once, is still awaitable: {shown}")
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


#: What an approver must answer, as the refusals of other answers say it.
_APPROVAL = "an approval is True, or a mapping or an object whose approved is True"
_NOT_AN_APPROVAL = object()


def _approval_request(fields: Dict[str, Any], v: Dict[str, Any], args: Dict[str, Any]) -> Dict[str, Any]:
    """What the approver is asked: the call's id, the tool and a copy of the
    arguments that will run (an approver that edits it changes nothing)."""
    return {"id": fields["id"], "tool": v["tool"], "args": copy.deepcopy(args)}


def _discard(aw: Any) -> None:
    """Close a coroutine nobody will await (no "never awaited" warning)."""
    if inspect.iscoroutine(aw):
        aw.close()


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _shown(value: Any) -> str:
    """A value as a refusal names it: its type and its repr, clipped."""
    try:
        r = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the refusal
        r = "<repr failed>"
    return f"{type(value).__name__} {_clip(r)}"


def _flag(keyword: str, value: Any) -> bool:
    """A policy keyword that takes a boolean: True or False, nothing else
    (bool("false") is True, and a string must not switch a rule off)."""
    if not isinstance(value, bool):
        raise TypeError(f"{keyword} must be True or False, not {_shown(value)}")
    return value


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
    """The run policy keywords, checked once for every run path: a boolean
    allow_unsafe, lists of names (a string is not a list of roles), and an
    approve that is callable or None."""
    if approve is not None and not callable(approve):
        raise TypeError(f"approve must be a callable or None, not {_shown(approve)}")
    return {"allow_unsafe": _flag("allow_unsafe", allow_unsafe), "roles": _names("roles", roles),
            "capabilities": _names("capabilities", capabilities), "approve": approve}


# How a refused Python run says what would let it run, worded from the
# refusal's rule (the library's message names Go's Options fields).
_RULE_HINTS = {
    "unsafe": "pass allow_unsafe=True to run it",
    "role": "pass roles= holding one of them to run it",
    "approval_required": "pass approve=, a callable that returns True to let it run",
    "no_schema_read_only": "register it with a schema, or with capabilities=[\"readOnly\"] if it only reads",
}


def _refusal_text(tool: str, rule: str, reason: str) -> str:
    hint = _RULE_HINTS.get(rule)
    return f"{tool!r} refused by the run policy ({rule}): {reason}" + (f" ({hint})" if hint else "")


#: A call's arguments: a mapping, or JSON text as a model sent it.
Arguments = Union[Mapping[str, Any], str, bytes]


class _BadArguments(ValueError):
    """Argument text refused before any policy is asked, with its violation."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(violation.message)
        self.violation = violation


def _arguments(args: "Optional[Arguments]") -> Any:
    """A call's arguments as the one value that is validated and run: a
    mapping as it is; JSON text parsed once, here (see _loads_once)."""
    if args is None:
        return {}
    if isinstance(args, (str, bytes, bytearray)):
        try:
            return _loads_once(args)
        except ValueError as e:
            if isinstance(e, _BadArguments):
                raise
            raise _BadArguments(Violation("", "json", f"the arguments are not valid JSON: {e}")) from None
    if isinstance(args, Mapping):
        return dict(args)
    raise TypeError(f"the arguments must be a mapping or JSON text, not {type(args).__name__}")


def _loads_once(text: Union[str, bytes, bytearray]) -> Any:
    """JSON argument text as one value, refusing a key that appears twice in
    one object: parsers disagree on which of the two they keep (Python's and
    Go's the last, cJSON and RapidJSON the first), so the value one checked
    need not be the value another runs. Raises _BadArguments naming the key."""
    first: List[Any] = []

    def pairs(items: List[Any]) -> Dict[str, Any]:
        d: Dict[str, Any] = {}
        for k, val in items:
            if k in d and not first:
                first.append((d, k))
            d[k] = val
        return d

    value = json.loads(text, object_pairs_hook=pairs, parse_constant=_not_json)
    if first:
        obj, key = first[0]
        pointer = _pointer_to(value, obj) + "/" + key.replace("~", "~0").replace("/", "~1")
        raise _BadArguments(Violation(pointer, "duplicateKey",
                                      f"the key {_quote(key)} appears more than once in one object; "
                                      "give it once"))
    return value


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")


def _pointer_to(root: Any, target: Any) -> str:
    """The JSON pointer of the object target (by identity) inside root."""
    stack = [(root, "")]
    while stack:
        node, at = stack.pop()
        if node is target:
            return at
        if isinstance(node, dict):
            stack.extend((v, at + "/" + k.replace("~", "~0").replace("/", "~1")) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{at}/{i}") for i, v in enumerate(node))
    return ""


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
        (unsafe, roles, capabilities, no-schema modes, an approver), asked
        with no arguments and recorded nowhere, since nothing runs."""
        p = self._policy
        policy = json.dumps({"allow_unsafe": p["allow_unsafe"], "roles": p["roles"], "capabilities": p["capabilities"],
                             "approver": p["approve"] is not None}).encode()
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
        this caller's, as Go's executor.Resolve completes a request."""
        if not request.get("roles") and self._policy["roles"]:
            request["roles"] = list(self._policy["roles"])
        may = self._may_run()
        return json.dumps([t for t in self.registry.view("canonical") if t["name"] in may])
