"""ToolSelector: the Go selector behind the Python API agent code already uses.

Two ways to reach the model, one policy (attempts, fallback, checks, cap,
fail-closed), which always runs in Go:

* ``client=None``: the library's built-in OpenAI-compatible HTTP client makes
  the calls, in a worker thread.
* ``client=<your client>``: a sans-I/O session. Go says which chat completion
  to perform, Python awaits ``client.chat_completion(...)`` on its own event
  loop and feeds the reply back; no Python code is ever called from a Go
  thread.

What is sent to a caller's client and how its reply is read is in
:mod:`toolselect._chat_client`; the native selectors and the registries
compiled from callers' schema text in :mod:`toolselect._native_cache`; the
worker threads in :mod:`toolselect._workers`.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import sys
import weakref
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _lib
from ._chat_client import _DIALECT_PARAMS, _accepts, _client_base_url, _client_error, _redact, _reply
from ._handle import Use
from ._native_cache import _Catalog, _schemas, _Selectors
from ._llm_common_registry import CallerRegistry
from ._registry import ToolRegistry
from ._run import RulesArg, _checked_rules, _policy
from ._words import _flag
from ._workers import _native
from .config import ToolSelectionConfig, env_value
from .config import _field as _config_field
from .errors import ArgumentError, HandleError, NotRecordedError
from .types import (Attempt, ChatClient, DroppedCall, Message, SelectionFailure, SelectionResult, TaskLike, ToolCall,
                    ToolSchemaSource)


log = logging.getLogger("toolselect")
log.addHandler(logging.NullHandler())


MessageFactory = Callable[..., Any]


class ToolSelector:
    """Selects tool calls for a task.

    ``client``: ``None`` for the built-in HTTP client, or any object with an
    ``async`` (or plain) ``chat_completion(messages=..., model=...,
    temperature=..., response_format=..., timeout=...)`` whose result has
    ``.content`` (or is a ``str``, or an OpenAI ``ChatCompletion``).

    ``config``: a :class:`ToolSelectionConfig`; ``None`` reads
    :meth:`ToolSelectionConfig.from_env` now; llm-common's config object (or
    a mapping) is read field by field.

    ``message_factory``: how to build each message passed to the client.
    ``None`` passes :class:`~toolselect.types.Message` objects: dicts that
    also read as attributes (``m.role``, ``m.content``, ``m["role"]``); pass
    e.g. ``message_factory=LLMMessage`` for a class the client checks,
    called as ``LLMMessage(role=..., content=...)``.

    Never closing a selector is fine: the native handles it holds are
    released quietly when it is collected. ``close()`` and the context
    managers release them at a known point.

    ``roles``, ``allow_unsafe``, ``capabilities``, ``rules``: which tools may
    be offered at all (a tool with roles is offered only to callers holding
    one; unsafe tools only when allowed; every required capability must be
    declared; ``rules``, the per-tool patterns :meth:`ToolRegistry.run` takes
    (:class:`~toolselect.types.ToolRules`): a tool a deny rule names is never
    offered, an unsafe tool an allow or ask rule names is offered without
    ``allow_unsafe``). Pass the same keywords to ``run``/``arun``: the
    selector offers, the run decides.

    What the model is offered follows the config's budget by default
    (``offer_tokens``, ``top_k``, ``max_searches``): every eligible tool
    while their view fits ``offer_tokens`` tokens, else the ``config.top_k``
    the ranking (bm25, Go's ``rank`` package) puts first, with search rounds.
    ``top_k`` here overrides that for this selector: an integer from 1 offers
    only the ``top_k`` eligible tools ranked first for the query, or the task
    and sub-tasks, listed in registry order (the tools that yield a parameter
    of the best ones come with them); ``0`` offers every eligible tool;
    ``None`` (the default) follows the budget.

    When there is nothing to offer (no tool passes the filters:
    ``no_eligible_tools``; the ranking found nothing and searching is off:
    ``no_ranked_tools``) no model is asked: ``select_tool_calls`` returns
    ``[]`` and the detailed result's ``failure.kind`` says which.

    With ``client=None`` the endpoint comes from ``config.base_url`` /
    ``config.api_key`` when set, else ``LLM_COMMON_TOOL_SELECTION_BASE_URL`` /
    ``_API_KEY``, else ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, read when each
    call is made.
    """

    def __init__(self, client: Optional[ChatClient] = None, config: Optional[ToolSelectionConfig] = None, *,
                 message_factory: Optional[MessageFactory] = None, roles: Optional[List[str]] = None,
                 allow_unsafe: bool = False, capabilities: Optional[List[str]] = None,
                 logger: Optional[logging.Logger] = None, top_k: Optional[int] = None,
                 rules: RulesArg = None) -> None:
        if config is None:
            config = ToolSelectionConfig.from_env()
        elif isinstance(config, ToolSelectionConfig):
            config.validate()
        else:
            config = _foreign_config(config)
        if client is not None and not callable(getattr(client, "chat_completion", None)):
            raise TypeError("client must have a chat_completion(...) method (or be None for the built-in client)")
        self.client = client
        self.config = config
        if client is None:
            _check_endpoint(*self._endpoint())
        self.message_factory = message_factory
        self.roles = list(roles or [])
        self.allow_unsafe = _flag("allow_unsafe", allow_unsafe)
        self.capabilities = list(capabilities or [])
        # The same rules ToolRegistry.run takes, checked now by the library.
        self.rules = _checked_rules(_policy(False, (), (), None, rules))["rules"]
        top = _config_field("top_k")["max"]  # Go's bound (selector.MaxTopK), read from its schema
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or not 0 <= top_k <= top):
            raise ValueError(f"top_k must be None (the offer budget), 0 (every eligible tool) or an integer "
                             f"from 1 to {top}, got {top_k!r}")
        self.top_k = top_k
        self.log = logger or log
        # The native selectors live in a separate object so that a quiet
        # finalizer can release them when this selector is collected unclosed
        # (llm-common's executor builds one per task and never closes it).
        self._natives = _Selectors()
        self._finalizer = weakref.finalize(self, self._natives.close)
        self._finalizer.atexit = False

    # -- public API ----------------------------------------------------------

    async def select_tool_calls(self, task: TaskLike, tool_registry: Union[ToolRegistry, ToolSchemaSource], query: Optional[str] = None,
                                context: Optional[Mapping[str, Any]] = None) -> List[ToolCall]:
        """Return the checked calls for ``task`` (at most ``max_calls``, in the
        model's order). When every attempt fails it returns ``[]`` and logs
        why; it never raises for model or network failures. Invalid input
        (a task without a description, a registry whose schema is not JSON)
        raises."""
        return (await self.select_tool_calls_detailed(task=task, tool_registry=tool_registry, query=query,
                                                      context=context)).calls

    async def select_tool_calls_detailed(self, task: TaskLike, tool_registry: Union[ToolRegistry, ToolSchemaSource], query: Optional[str] = None,
                                         context: Optional[Mapping[str, Any]] = None) -> SelectionResult:
        """Like :meth:`select_tool_calls`, with every attempt, the dropped
        calls, the offered tools and the typed failure (``result.failure``)."""
        if self._natives.closed:
            raise HandleError("this ToolSelector is closed", code=2, kind="handle")
        req = self._request(task, query, context)
        if isinstance(tool_registry, CallerRegistry):
            # A caller's view keeps its rights here too: only what it may run is offered.
            tool_registry = _Catalog(tool_registry._offer(req))
        request = json.dumps(req).encode("utf-8")
        if self.client is None:
            done = await self._select_http(tool_registry, request)
        else:
            done = await self._select_session(tool_registry, request)
        return self._result(done)

    def add_feedback(self, query: str, tools: Sequence[str], *, remove: bool = False) -> Dict[str, int]:
        """Record by hand that ``query`` needed ``tools`` (``remove=True``
        withdraws it, e.g. when running the call failed) in the store
        ``config.feedback`` names; ranking with ``top_k`` learns it at once.
        Returns the counts ``{"pairs", "tools", "unknown", "evicted"}``, and
        for a withdrawal ``"withdrawn"``: how many recorded pairs it matched.
        Raises ValueError without a store, for an empty query or no tools,
        and :class:`~toolselect.NotRecordedError` (a ValueError) for a
        withdrawal that matches nothing recorded (nothing is written)."""
        if self._natives.closed:
            raise HandleError("this ToolSelector is closed", code=2, kind="handle")
        if not isinstance(query, str):
            raise TypeError("query must be a string")
        if isinstance(tools, str) or not all(isinstance(t, str) for t in tools):
            raise TypeError("tools must be a sequence of tool names")
        rec = {"query": query, "tools": list(tools), "remove": bool(remove)}
        with self._selector_use(*self._native_key()) as h:
            # A bad pair, or no store in the config, raises
            # toolselect.ArgumentError, a ValueError (the library's rule).
            try:
                added: Dict[str, int] = _lib.call("toolselect_selector_add_feedback", h,
                                                  json.dumps(rec).encode("utf-8"))
            except ArgumentError as e:
                if isinstance(e.detail, Mapping) and e.detail.get("rule") == "not_recorded":
                    raise NotRecordedError(f"nothing recorded to withdraw: no tool of {rec['tools']!r} is learned for "
                                           f"this query (withdraw with the text the selection was recorded "
                                           f"under: the SelectionResult itself, or its feedback_query)",
                                           code=e.code, detail=e.detail) from None
                raise
            return added

    def withdraw(self, selection: Union[SelectionResult, str], tools: Optional[Sequence[str]] = None) -> int:
        """Take back what a selection taught the feedback store, typically
        because running a call failed or was refused: ``selection`` is the
        :class:`SelectionResult` itself or its ``feedback_query``; ``tools``
        defaults to every tool the result's calls named (required with a
        query string). Returns how many recorded pairs matched. Raises
        :class:`~toolselect.NotRecordedError` when none did (nothing is
        written), and ValueError for a selection that returned no calls (it
        taught nothing) or a selector without a store."""
        if isinstance(selection, SelectionResult):
            query = selection.feedback_query
            if not query:
                raise ArgumentError("the selection returned no calls (its feedback_query is empty), so it taught "
                                    "nothing to withdraw", code=1, kind="argument")
            if tools is None:
                tools = list(dict.fromkeys(c.tool for c in selection.calls))
        elif isinstance(selection, str):
            query = selection
            if tools is None:
                raise TypeError("withdraw(query, tools): give the tools to withdraw with a query string "
                                "(or pass the SelectionResult, whose calls name them)")
        else:
            raise TypeError(f"selection must be a SelectionResult or its feedback_query (a str), "
                            f"not {type(selection).__name__}")
        return int(self.add_feedback(query, tools, remove=True)["withdrawn"])

    def close(self) -> None:
        """Release the native selectors now (a call in flight keeps its own
        until it ends). Idempotent. Not required: a selector collected
        unclosed is released quietly."""
        self._finalizer()

    def __enter__(self) -> "ToolSelector":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "ToolSelector":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    # -- building the request ------------------------------------------------

    def _request(self, task: Any, query: Optional[str], context: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
        if task is None or not hasattr(task, "description"):
            raise TypeError("task must have a description (and sub_tasks), e.g. toolselect.PlannedTask")
        desc = task.description
        if not isinstance(desc, str):
            raise TypeError(f"task.description must be a string, not {type(desc).__name__}")
        subs = []
        for i, st in enumerate(getattr(task, "sub_tasks", None) or []):
            if isinstance(st, str):
                subs.append({"description": st})
                continue
            d = st.get("description") if isinstance(st, Mapping) else getattr(st, "description", None)
            if not isinstance(d, str):
                raise TypeError(f"task.sub_tasks[{i}] has no string description")
            sid = st.get("id") if isinstance(st, Mapping) else getattr(st, "id", None)
            subs.append({"id": str(sid) if sid is not None else "", "description": d})
        tid = getattr(task, "id", None)
        req: Dict[str, Any] = {"task": {"id": str(tid) if tid is not None else "", "description": desc,
                                        "sub_tasks": subs}}
        if query is not None:
            if not isinstance(query, str):
                raise TypeError("query must be a string or None")
            req["query"] = query
        if context is not None:
            if not isinstance(context, Mapping):
                raise TypeError("context must be a mapping or None")
            req["context"] = json.loads(json.dumps(dict(context), default=str))
        if self.roles:
            req["roles"] = self.roles
        if self.allow_unsafe:
            req["allow_unsafe"] = True
        if self.capabilities:
            req["capabilities"] = self.capabilities
        if self.rules is not None:
            req["rules"] = self.rules
        if self.top_k is not None:
            req["top_k"] = self.top_k
        req.update(_trace_context())
        return req

    def _schema_of(self, tool_registry: Any) -> Union[ToolRegistry, str]:
        """A ToolRegistry as is, or the caller's schema text, read on the
        caller's thread (the caller's object may not be thread-safe)."""
        if isinstance(tool_registry, ToolRegistry):
            return tool_registry
        get = getattr(tool_registry, "get_tools_schema", None)
        if not callable(get):
            raise TypeError("tool_registry must be a toolselect.ToolRegistry or have get_tools_schema()")
        text: Any = get()
        if isinstance(text, (bytes, bytearray)):
            return bytes(text).decode("utf-8")
        if isinstance(text, str):
            return text
        return json.dumps(text, default=_plain_json)  # a list of dicts (or pydantic models) is accepted too

    def _registry_use(self, source: Union[ToolRegistry, str]) -> Use:
        """A use of the native registry for a _schema_of result, held for the
        whole call (runs in a worker thread: compiling a large catalog takes
        a while). See _SchemaCache for caller schema text."""
        if isinstance(source, ToolRegistry):
            return source.use()
        return _schemas.use(source)

    def _selector_use(self, base_url: str, api_key: str, own_client: bool = False) -> Use:
        cfg = self.config.to_json()
        cfg["base_url"], cfg["api_key"] = base_url, api_key
        cfg = {k: v for k, v in cfg.items() if v is not None}
        if own_client:
            # The caller's client sends the requests, to base_url ("" when
            # its base URL cannot be read: the dialect then follows the model
            # name, never OpenAI's by default, and what adapt-once learns
            # stays with this native selector).
            cfg["own_client"] = True
        return self._natives.use((base_url, api_key, own_client), json.dumps(cfg).encode("utf-8"))

    def _native_key(self) -> Tuple[str, str, bool]:
        """Which native selector serves this one: with the caller's client,
        the client's own base URL when it can be read (the dialect follows
        it, as for the built-in client; the configured endpoint is not ours
        to use, and the key only redacts); without one, the configured
        endpoint. add_feedback must reach the same native selector as the
        selections, or the two learn apart."""
        base, key = self._endpoint()
        if self.client is not None:
            return (_client_base_url(self.client), key, True)
        return (base, key, False)

    def _endpoint(self) -> Tuple[str, str]:
        base = self.config.base_url or env_value("base_url")
        key = self.config.api_key or env_value("api_key")
        return base.strip(), key.strip()

    def _secrets(self) -> List[str]:
        return [k for k in (self.config.api_key, self._endpoint()[1]) if k]

    # -- built-in HTTP client --------------------------------------------------

    async def _select_http(self, tool_registry: Any, request: bytes) -> Dict[str, Any]:
        import asyncio  # here, not at import: a process that only loads catalogs need not pay for it
        base, key = self._endpoint()  # read at call time, on the caller's thread
        source = self._schema_of(tool_registry)

        def prepare() -> Tuple[Use, Use, int]:
            reg = self._registry_use(source)
            try:
                sel = self._selector_use(base, key)
            except BaseException:
                reg.__exit__()
                raise
            try:
                tok = _lib.call("toolselect_cancel_new")["handle"]
            except BaseException:
                reg.__exit__()
                sel.__exit__()
                raise
            return sel, reg, tok

        sel, reg, tok = await _native(prepare)
        with sel, reg:
            try:
                result: Dict[str, Any] = await _native(_lib.call, "toolselect_selector_select", sel.h, reg.h, request, tok)
                return result
            except asyncio.CancelledError:
                # The awaiting task was cancelled: the worker thread returns
                # promptly with toolselect.CancelledError, which nobody reads;
                # asyncio's own CancelledError goes on.
                _lib.call("toolselect_cancel", tok)
                raise
            finally:
                _lib.call("toolselect_cancel_close", tok)

    # -- caller's client, sans-I/O ----------------------------------------------

    async def _select_session(self, tool_registry: Any, request: bytes) -> Dict[str, Any]:
        source = self._schema_of(tool_registry)
        # The configured key is not sent anywhere in session mode; the Go
        # session gets it only to redact it from what the client reports.
        native = self._native_key()

        def begin() -> Dict[str, Any]:
            # The session holds the Go registry and selector itself: the
            # handles are needed only until it exists.
            with self._registry_use(source) as reg, self._selector_use(*native) as sel:
                began: Dict[str, Any] = _lib.call("toolselect_session_begin", sel, reg, request)
                return began

        act: Dict[str, Any] = await _native(begin)
        session = act["session"]
        raised: List[BaseException] = []
        try:
            while act.get("action") == "chat":
                reply = await self._chat(act, raised)
                act = await _native(_lib.call, "toolselect_session_feed", session,
                                    json.dumps(reply).encode("utf-8"))
        finally:
            _lib.call("toolselect_session_close", session)
        act["_client_exceptions"] = raised
        return act

    async def _chat(self, act: Dict[str, Any], raised: List[BaseException]) -> Dict[str, Any]:
        import asyncio  # here, not at import: a process that only loads catalogs need not pay for it
        params = act.get("params") or {}
        timeout = float(params.get("timeout_s") or self.config.timeout_s)
        make = self.message_factory
        # A turn of a continued conversation (DeepSeek's tool loop) carries
        # reasoning_content and tool_calls: it goes as a dict, whatever the factory.
        messages = [make(role=m["role"], content=m["content"]) if make and set(m) <= {"role", "content"} else Message(m)
                    for m in act["messages"]]
        assert self.client is not None  # the session path runs only with the caller's client
        fn = self.client.chat_completion
        kw: Dict[str, Any] = {"messages": messages, "model": act["model"],
                              "response_format": params.get("response_format"), "timeout": timeout}
        # The provider dialect decides what the request carries (docs/providers.md):
        # no temperature for OpenAI's reasoning models; the token limit's field;
        # reasoning_effort; provider fields in extra_body, as the OpenAI SDKs take them.
        if "temperature" in params:
            kw["temperature"] = params["temperature"]
        if params.get("tools"):
            kw["tools"] = params["tools"]
        for key in _DIALECT_PARAMS:
            if key in params:
                if _accepts(fn, key):
                    kw[key] = params[key]
                else:
                    self.log.warning("tool selection: the client's chat_completion takes no %r, which the %s dialect "
                                     "sends (%r); the request goes without it", key, act.get("dialect") or "generic",
                                     params[key])
        try:
            if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None)):
                result = await asyncio.wait_for(fn(**kw), timeout)
            else:
                # A plain method runs in a worker thread so it cannot block the loop.
                result = await asyncio.wait_for(_native(functools.partial(fn, **kw)), timeout)
                if inspect.isawaitable(result):
                    result = await asyncio.wait_for(result, timeout)
        except asyncio.TimeoutError:
            return {"error": {"kind": "timeout", "message": f"the client did not answer within {timeout:g} s"}}
        except asyncio.CancelledError:
            # Cancellation is never a failed attempt. This clause comes before
            # the Exception one: toolselect.CancelledError (a client that ran
            # a selection of its own that was cancelled) is both.
            raise
        except Exception as e:  # noqa: BLE001 - any client failure is a failed attempt, not an exception
            raised.append(e)
            err = _client_error(e)
            # The message can quote the request (a key included): the Go
            # session redacts what it keeps, and this log line does the same.
            self._warn_toolselect("tool selection: the client's chat_completion raised %s (model %s); the attempt "
                                  "failed: %s", type(e).__name__, act.get("model"),
                                  _redact(err["message"], self._secrets()))
            return {"error": err}
        try:
            return _reply(result)
        except Exception as e:  # noqa: BLE001
            return {"error": {"kind": "transport", "message": f"unreadable client result: {e}"}}

    def _warn_toolselect(self, msg: str, *args: Any) -> None:
        """A WARNING on the ``toolselect`` logger, which names a raising
        client whatever ``logger=`` is (where operators look for it), and on the caller's logger
        too when one was given outside the ``toolselect`` tree (a child of
        it reaches ``toolselect`` by propagation already)."""
        self.log.warning(msg, *args)
        if self.log is not log and not (self.log.name.startswith("toolselect.") and self.log.propagate):
            log.warning(msg, *args)

    # -- results ------------------------------------------------------------------

    def _result(self, done: Dict[str, Any]) -> SelectionResult:
        attempts = [_attempt(a) for a in done.get("attempts") or []]
        res = SelectionResult(
            calls=[ToolCall.from_json(c) for c in done.get("calls") or []],
            attempts=attempts,
            dropped=[DroppedCall(tool=d.get("tool", ""), reason=d.get("reason", ""), raw=d, rule=d.get("rule", ""),
                                     did_you_mean=list(d.get("did_you_mean") or []))
                     for d in done.get("dropped") or []],
            offered=list(done.get("offered") or []),
            client_exceptions=list(done.get("_client_exceptions") or []),
            feedback_query=done.get("feedback_query") or "",
        )
        err = done.get("error")
        if err:
            res.failure = SelectionFailure(kind=err.get("kind", ""), message=err.get("message", ""),
                                           attempts=attempts)
            self.log.warning("tool selection failed (%s), returning no calls: %s", res.failure.kind,
                             res.failure.message)
        else:
            for d in res.dropped:
                self.log.info("tool selection dropped a call to %r (%s): %s", d.tool, d.reason,
                              d.raw.get("message", ""))
        return res


def _trace_context() -> Dict[str, str]:
    """The caller's W3C trace context, when the application uses
    OpenTelemetry (``opentelemetry`` already imported; never imported here):
    the library's selection spans then continue the caller's trace."""
    if "opentelemetry" not in sys.modules:
        return {}
    try:
        from opentelemetry import propagate
    except Exception:  # noqa: BLE001 - an unusable install is no trace context
        return {}
    carrier: Dict[str, str] = {}
    try:
        propagate.inject(carrier)
    except Exception:  # noqa: BLE001
        return {}
    return {k: v for k, v in carrier.items() if k in ("traceparent", "tracestate") and isinstance(v, str)}


def _plain_json(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump()
    raise TypeError(f"tool_registry.get_tools_schema() returned a {type(obj).__name__}, which is not JSON")


def _attempt(a: Dict[str, Any]) -> Attempt:
    err = a.get("error") or {}
    return Attempt(model=a.get("model", ""), ok=bool(a.get("ok")), kind=err.get("kind", ""),
                   message=err.get("message", ""), latency_s=float(a.get("latency_ms") or 0) / 1000.0,
                   searches=list(a.get("searches") or []), raw=a)


def _foreign_config(config: Any) -> ToolSelectionConfig:
    """A config that is not ours, read as ours is: llm-common's
    ToolSelectionConfig, a pydantic model in some releases and a frozen
    dataclass (no model_dump) in others, a mapping, or any object with the
    settings as attributes."""
    import dataclasses  # here, not at import: only a foreign config needs it

    from .config import schema as config_schema

    dump = getattr(config, "model_dump", None)
    if callable(dump):
        data = dict(dump())
    elif isinstance(config, Mapping):
        data = dict(config)
    elif dataclasses.is_dataclass(config) and not isinstance(config, type):
        data = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    else:
        names = [f["name"] for f in config_schema()["fields"]]
        data = {n: getattr(config, n) for n in names if hasattr(config, n)}
        if not data or isinstance(config, type):
            raise TypeError(f"config must be a ToolSelectionConfig (or llm-common's config: a pydantic model, a "
                            f"dataclass, a mapping or an object with its settings as attributes, such as "
                            f"{', '.join(names[:6])}), not {type(config).__name__}")
    return ToolSelectionConfig.model_validate(data)  # which warns about the fields toolselect does not have


def _check_endpoint(base: str, key: str) -> None:
    """Refuse a built-in client whose requests would go to api.openai.com (no
    base URL, or that one) without an API key: the server can only refuse
    them, so the selector would return ``[]`` for every task."""
    if key:
        return
    if base:
        from urllib.parse import urlsplit
        try:
            host = urlsplit(base).hostname or ""
        except ValueError:
            return  # the library names a malformed URL
        if host.lower() != "api.openai.com":
            return
    def where(name: str) -> str:  # the field and its variables, as the Go schema lists them
        env: List[str] = _config_field(name)["env"]
        return ", ".join([f"config.{name}"] + env[:-1]) + " or " + env[-1]
    raise ArgumentError(
        f"no model endpoint: the base URL ({where('base_url')}) "
        f"is {'unset, which means api.openai.com' if not base else repr(base)}, and no API key is set "
        f"({where('api_key')}), so every request would be refused: "
        "set the base URL of your model server (and its key if it needs one), or pass client= your own chat client; "
        "in tests, use toolselect.testing.FakeModel's url as base_url")
