"""ToolRegistry: the Go registry with Python callables attached.

This module holds the registry itself: registration (callables, llm-common
``BaseTool`` objects, definition dicts, catalog files), reading the tools
back in provider formats, and argument checks. Running a call (policy,
approval, audit) is in :mod:`toolselect._run`, the argument documents and
their verdicts in :mod:`toolselect._arguments`, llm-common's registry
surface in :mod:`toolselect._llm_common_registry`, schemas inferred from
signatures in :mod:`toolselect._schema`.
"""

from __future__ import annotations

import collections
import functools
import inspect
import json
import os
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, TypeVar, Union, overload

from . import _lib
from ._arguments import Validation, Violation, _BadArguments, _loads_once
from ._handle import Handle
from ._llm_common_registry import (CallerRegistry, RegisteredTool, _execute, _executor_of, _field_of, _is_base_tool,
                                   _schema_of_metadata)
from ._run import _RULE_HINTS, RulesArg, _checked_rules, _policy, _rules, _rules_error, _RunPath
from ._words import _flag, _quote
from .errors import ArgumentError, RegistrationError, UnknownToolError
from .types import BaseToolLike, HiddenTool, RankedTool, Ranking


F = TypeVar("F", bound=Callable[..., Any])
T_Tool = TypeVar("T_Tool", bound=BaseToolLike)

#: Provider formats accepted by :meth:`ToolRegistry.view`.
FORMATS = ("canonical", "schema", "openai", "openai-responses", "anthropic", "ollama", "mcp")


class ToolRegistry(_RunPath, Handle):
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
                 strict: bool = ..., allow_no_schema: bool = ..., no_schema_mode: Optional[str] = ...,
                 requires_approval: bool = ...) -> F: ...

    @overload
    def register(self, name: str, fn: None = ..., *, description: Optional[str] = ..., parameters: Any = ...,
                 safe: bool = ..., tags: Iterable[str] = ..., roles: Iterable[str] = ...,
                 capabilities: Iterable[str] = ..., metadata: Optional[Mapping[str, Any]] = ...,
                 strict: bool = ..., allow_no_schema: bool = ...,
                 no_schema_mode: Optional[str] = ...,
                 requires_approval: bool = ...) -> Callable[[F], F]: ...

    @overload
    def register(self, name: T_Tool, fn: None = ..., *, safe: bool = ..., tags: Iterable[str] = ...,
                 roles: Iterable[str] = ..., capabilities: Iterable[str] = ..., strict: bool = ...,
                 allow_no_schema: bool = ..., no_schema_mode: Optional[str] = ...,
                 requires_approval: bool = ...) -> T_Tool: ...

    @overload
    def register(self, name: F, fn: None = ..., *, description: Optional[str] = ..., parameters: Any = ...,
                 safe: bool = ..., tags: Iterable[str] = ..., roles: Iterable[str] = ...,
                 capabilities: Iterable[str] = ..., metadata: Optional[Mapping[str, Any]] = ...,
                 strict: bool = ..., allow_no_schema: bool = ..., no_schema_mode: Optional[str] = ...,
                 requires_approval: bool = ...) -> F: ...

    def register(self, name: Any, fn: Optional[Callable[..., Any]] = None, *, description: Optional[str] = None,
                 parameters: Any = None, safe: bool = True, tags: Iterable[str] = (), roles: Iterable[str] = (),
                 capabilities: Iterable[str] = (), metadata: Optional[Mapping[str, Any]] = None,
                 strict: bool = False, allow_no_schema: bool = False,
                 no_schema_mode: Optional[str] = None, requires_approval: bool = False) -> Any:
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

        ``requires_approval=True`` marks a tool whose every call must be
        approved: :meth:`run` and :meth:`arun` refuse it without
        ``approve=`` and ask ``approve`` about each call (as they ask about
        an unsafe tool once an approver is given).

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
                                          no_schema_mode=no_schema_mode, requires_approval=requires_approval)
            _check_register_name(name, fn)
            fn, name = name, name.__name__  # @registry.register: the function's own name
        _check_register_fn(name, fn)
        options = dict(description=description, parameters=parameters, safe=safe, tags=tags, roles=roles,
                       capabilities=capabilities, metadata=metadata, strict=strict,
                       allow_no_schema=allow_no_schema, no_schema_mode=no_schema_mode,
                       requires_approval=requires_approval)

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
                      allow_no_schema: bool, no_schema_mode: Optional[str], requires_approval: bool = False) -> None:
        """Register one tool run by ``f``; with ``infer``, a schema not given
        (and not waived with ``allow_no_schema``) is inferred from ``f``."""
        safe, strict, allow_no_schema = _flag("safe", safe), _flag("strict", strict), \
            _flag("allow_no_schema", allow_no_schema)
        desc = description
        run = f
        if infer and parameters is None and not allow_no_schema:
            # Imported here, not with the package: a process that never
            # infers a schema does not pay for the inference's import.
            from ._schema import Unsupported, function_schema
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
        if _flag("requires_approval", requires_approval):
            tool["requiresApproval"] = True
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
            raise _in_python_words(e, no_schema_mode) from None
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
                                    allow_no_schema=False, no_schema_mode=None, requires_approval=False)
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
            capabilities: Iterable[str] = (), approve: Optional[Callable[[Dict[str, Any]], Any]] = None,
            rules: RulesArg = None) -> "Optional[RegisteredTool]":
        """llm-common's ``ToolRegistry.get``: the tool named ``name``, or
        ``None`` when there is none. What it returns has llm-common's
        ``BaseTool`` surface (``metadata``, ``async execute(**kwargs)``), and
        its ``execute`` runs the tool through :meth:`arun`, under the policy
        given here (the same keywords, and the same defaults: unsafe tools,
        tools with roles and approval tools are refused) and with an audit
        record for every run. A refusal raises as :meth:`arun` does; bad
        ``rules`` raise here."""
        policy = _checked_rules(_policy(allow_unsafe, roles, capabilities, approve, rules))
        if name not in self:
            return None
        return RegisteredTool(self, name, policy)

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
                   approve: Optional[Callable[[Dict[str, Any]], Any]] = None,
                   rules: RulesArg = None) -> "CallerRegistry":
        """This registry as one caller sees it: ``get``, ``execute``,
        ``list_tools`` and ``get_tools_schema`` whose runs go through
        :meth:`arun` with these policy keywords. Hand it to an executor that
        calls ``registry.execute(...)`` or ``registry.get(...)``, which have
        no room for them. Its ``list_tools``, ``get_tools_schema`` and what a
        selector given it offers leave out what ``rules`` deny; bad
        ``rules`` raise here."""
        return CallerRegistry(self, _checked_rules(_policy(allow_unsafe, roles, capabilities, approve, rules)))

    # -- ranking --------------------------------------------------------------

    def rank(self, task: str, *, k: int = 10, min_score: Optional[float] = None, scorer: str = "bm25",
             allow_unsafe: bool = False, roles: Iterable[str] = (), capabilities: Iterable[str] = (),
             timeout_s: float = 0.0, no_prerequisites: bool = False, no_name_words: bool = False,
             no_namespace: bool = False, no_related_words: bool = False, debug: bool = False,
             rules: RulesArg = None) -> Ranking:
        """Rank the registered tools for ``task`` without asking a model, as
        ``toolselect rank`` does: the top ``k`` (default 10, what a selection
        offers when the tools do not all fit) as :class:`RankedTool` with
        ``tool``, ``score`` and ``reason``, best first, and in ``.hidden``
        the tools that ``allow_unsafe``, ``roles``, ``capabilities`` and a
        deny pattern of ``rules`` (as :meth:`run` takes them) kept out. The
        keywords are the CLI's flags (``min_score`` defaults to
        0.05, a negative one keeps every tool scoring above zero; ``scorer``
        is ``bm25`` or ``keyword``). The GIL is released while the library
        ranks; :meth:`arank` is the same for an event loop."""
        req: Dict[str, Any] = {"task": task, "k": k, "scorer": scorer, "allow_unsafe": allow_unsafe,
                               "roles": _strings("roles", roles), "capabilities": _strings("capabilities", capabilities),
                               "timeout_s": timeout_s, "no_prerequisites": no_prerequisites,
                               "no_name_words": no_name_words, "no_namespace": no_namespace,
                               "no_related_words": no_related_words, "debug": debug}
        if min_score is not None:
            req["min_score"] = min_score
        checked = _rules(rules)
        if checked is not None:
            req["rules"] = checked
        try:
            r = self._call("toolselect_registry_rank", json.dumps(req).encode(), 0)
        except ArgumentError as e:
            raise _rules_error(e) from None
        return Ranking(
            [RankedTool(p["tool"], p["score"], p["reason"], p.get("provenance", {}).get("source", "score"), p)
             for p in r["picks"]],
            [HiddenTool(p["tool"], p["score"], p["reason"], p["hidden"], p) for p in r["hidden"]],
        )

    async def arank(self, task: str, *, k: int = 10, min_score: Optional[float] = None, scorer: str = "bm25",
                    allow_unsafe: bool = False, roles: Iterable[str] = (), capabilities: Iterable[str] = (),
                    timeout_s: float = 0.0, no_prerequisites: bool = False, no_name_words: bool = False,
                    no_namespace: bool = False, no_related_words: bool = False, debug: bool = False,
                    rules: RulesArg = None) -> Ranking:
        """:meth:`rank` on a worker thread, so an event loop goes on meanwhile."""
        from ._workers import _native
        ranking: Ranking = await _native(functools.partial(
            self.rank, task, k=k, min_score=min_score, scorer=scorer, allow_unsafe=allow_unsafe, roles=roles,
            capabilities=capabilities, timeout_s=timeout_s, no_prerequisites=no_prerequisites,
            no_name_words=no_name_words, no_namespace=no_namespace, no_related_words=no_related_words, debug=debug,
            rules=rules))
        return ranking

    # -- validation ----------------------------------------------------------

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


def _strings(what: str, values: Iterable[str]) -> List[str]:
    """values as a list of str; a lone str (a role spelt without brackets)
    is refused rather than read as its characters."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{what} must be a list of strings, not a single string: {what}=[{values!r}]")
    return [str(v) for v in values]


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


# register()'s reasons for the definition rules, from the no_schema_mode given.
_REGISTRATION_REASONS: Dict[str, Callable[[Optional[str]], str]] = {
    "no_schema": lambda mode: f"parameters schema is missing ({_RULE_HINTS['no_schema']})",
    "no_schema_mode": lambda mode: (
        f"no_schema_mode {_quote(mode or '')} is not one of {_RULE_HINTS['no_schema_mode']}" if mode else
        f"allow_no_schema is set without a no_schema_mode ({_RULE_HINTS['no_schema_mode']})"),
}


def _in_python_words(e: RegistrationError, no_schema_mode: Optional[str]) -> RegistrationError:
    """A register() refusal whose reason names the definition's JSON fields
    (the library marks it with its rule, no_schema or no_schema_mode), worded
    anew from the rule with register()'s keywords; others as they are."""
    detail = e.detail
    if not (isinstance(detail, dict) and isinstance(detail.get("refused"), list)):
        return e
    refused = []
    for r in detail["refused"]:
        why = _REGISTRATION_REASONS.get(r.get("rule", "")) if isinstance(r, dict) else None
        if why is not None:
            reason = why(no_schema_mode)
            r = dict(r, reason=reason, message=f"tool {_quote(r.get('tool', ''))}: {reason}")
        refused.append(r)
    if refused == detail["refused"]:
        return e
    message = refused[0]["message"] if len(refused) == 1 else e.message
    return RegistrationError(message, code=e.code, kind=e.kind, detail=dict(detail, refused=refused))
