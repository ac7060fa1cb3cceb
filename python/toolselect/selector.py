"""ToolSelector: the Go selector behind the Python API agent code already uses.

Two ways to reach the model, one policy (attempts, fallback, checks, cap,
fail-closed), which always runs in Go:

* ``client=None``: the library's built-in OpenAI-compatible HTTP client makes
  the calls, in a worker thread.
* ``client=<your client>``: a sans-I/O session. Go says which chat completion
  to perform, Python awaits ``client.chat_completion(...)`` on its own event
  loop and feeds the reply back; no Python code is ever called from a Go
  thread.
"""

from __future__ import annotations

import collections
import concurrent.futures
import functools
import inspect
import json
import logging
import os
import sys
import threading
import weakref
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import urlparse

from . import _lib
from ._handle import Native, Use
from .config import ToolSelectionConfig, env_value
from .config import _field as _config_field
from .errors import ArgumentError, HandleError, NotRecordedError, ToolSelectError
from .registry import CallerRegistry, ToolRegistry, _flag
from .types import (Attempt, ChatClient, DroppedCall, Message, SelectionFailure, SelectionResult, TaskLike, ToolCall,
                    ToolSchemaSource)

log = logging.getLogger("toolselect")
log.addHandler(logging.NullHandler())

_SCHEMA_CACHE_SIZE = 16

_pool_lock = threading.Lock()
_pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
_pool_pid = 0


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    """Worker threads for native calls. ctypes releases the GIL during a call,
    so blocking HTTP selections run side by side without holding up the loop."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="toolselect")
            _pool_pid = os.getpid()
        return _pool


async def _native(fn: Callable[..., Any], *args: Any) -> Any:
    import asyncio  # here, not at import: a process that only loads catalogs need not pay for it
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor(), functools.partial(fn, *args))


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

    ``roles``, ``allow_unsafe``, ``capabilities``: which tools may be offered
    at all (a tool with roles is offered only to callers holding one; unsafe
    tools only when allowed; every required capability must be declared).

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
                 logger: Optional[logging.Logger] = None, top_k: Optional[int] = None) -> None:
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
        self.message_factory = message_factory
        self.roles = list(roles or [])
        self.allow_unsafe = _flag("allow_unsafe", allow_unsafe)
        self.capabilities = list(capabilities or [])
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
            dropped=[DroppedCall(tool=d.get("tool", ""), reason=d.get("reason", ""), raw=d, rule=d.get("rule", ""))
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


#: Request fields a dialect may add beyond messages, model, temperature,
#: response_format, tools and timeout: passed to the client when its
#: ``chat_completion`` takes them (by name, or ``**kwargs``).
_DIALECT_PARAMS = ("max_tokens", "max_completion_tokens", "reasoning_effort", "extra_body")


def _client_base_url(client: Any) -> str:
    """The base URL a caller's client sends to, when it can be read: its
    ``base_url`` (an OpenAI SDK client's), or that of the SDK client a
    wrapper holds (``.client`` / ``._client``), or of its ``.config``. Only
    an http(s) URL counts; anything else is "" (unknown: the library then
    decides the dialect from the model name, then generic)."""
    for holder in (client, getattr(client, "client", None), getattr(client, "_client", None),
                   getattr(client, "config", None)):
        if holder is None:
            continue
        try:
            value = getattr(holder, "base_url", None)
        except Exception:  # a property that fails to compute: not readable
            continue
        if value is None:
            continue
        url = str(value).strip()
        parts = urlparse(url)
        if parts.scheme in ("http", "https") and parts.netloc:
            return url
    return ""


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` takes keyword ``name`` (by name, or through ``**kwargs``)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True  # no signature to read (a C function): let the call say
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD or (p.name == name and p.kind is not inspect.Parameter.POSITIONAL_ONLY):
            return True
    return False


def _plain_json(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump()
    raise TypeError(f"tool_registry.get_tools_schema() returned a {type(obj).__name__}, which is not JSON")


def _redact(text: str, secrets: "List[str]") -> str:
    for k in secrets:
        if k:
            text = text.replace(k, "[REDACTED]")
    return text


def _attempt(a: Dict[str, Any]) -> Attempt:
    err = a.get("error") or {}
    return Attempt(model=a.get("model", ""), ok=bool(a.get("ok")), kind=err.get("kind", ""),
                   message=err.get("message", ""), latency_s=float(a.get("latency_ms") or 0) / 1000.0,
                   searches=list(a.get("searches") or []), raw=a)


def _client_error(e: BaseException) -> Dict[str, Any]:
    import asyncio  # here, not at import: a process that only loads catalogs need not pay for it
    status = getattr(e, "status_code", None) or getattr(e, "status", None)
    name = type(e).__name__.lower()
    if isinstance(e, (TimeoutError, asyncio.TimeoutError)) or "timeout" in name:
        kind = "timeout"
    elif isinstance(status, int) and status >= 400:
        kind = "http_status"
    else:
        kind = "transport"
    out: Dict[str, Any] = {"kind": kind, "message": f"{type(e).__name__}: {e}"}
    if isinstance(status, int):
        out["status_code"] = status
    if kind == "http_status":
        # The error body and Retry-After header as an OpenAI SDK error keeps
        # them (``.body``, ``.response.headers``): the library's one
        # error-body reader takes the message, code, retry delay and
        # failed_generation from them.
        body = getattr(e, "body", None)
        if body is not None:
            out["source"] = type(e).__name__
            try:
                json.dumps(body)
                out["body"] = body
            except (TypeError, ValueError):
                out["body"] = str(body)
        headers = getattr(getattr(e, "response", None), "headers", None)
        retry = headers.get("retry-after") if headers is not None and hasattr(headers, "get") else None
        if isinstance(retry, str) and retry.strip():
            out["retry_after"] = retry.strip()
    return out


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _reply(result: Any) -> Dict[str, Any]:
    """Turn whatever the client returned into the session's feed document.

    A whole completion (a mapping with ``choices`` or ``error``, or an
    OpenAI SDK object with ``model_dump``) goes to the library as it is: Go's
    one reply reader handles the providers' shapes (content as a list of
    parts, reasoning fields, object arguments, an error in a 200 body).
    Anything else is read field by field."""
    if isinstance(result, (str, bytes)):
        return {"content": result.decode("utf-8") if isinstance(result, bytes) else result}
    whole = result
    dump = getattr(result, "model_dump", None)
    if not isinstance(result, Mapping) and callable(dump):
        try:
            whole = dump()
        except Exception:  # noqa: BLE001 - not a pydantic completion: read it field by field
            whole = None
    meta = _get(result, "metadata")
    raw = _get(meta, "raw_response") if meta is not None else None
    if isinstance(raw, Mapping) and "choices" in raw:
        whole = raw  # llm-common's LLMResponse keeps the provider's completion here
    if isinstance(whole, Mapping) and ("choices" in whole or "error" in whole):
        try:
            json.dumps(whole)
            return dict(whole)
        except (TypeError, ValueError):
            pass
    choices = _get(result, "choices")
    msg = result
    if choices is not None and _get(result, "content") is None:
        if not choices:
            return {"choices": []}
        msg = _get(choices[0], "message") or choices[0]
    content = _get(msg, "content")
    reply: Dict[str, Any] = {"content": content if isinstance(content, list) else (content or "")}
    for key in ("reasoning_content", "reasoning"):
        val = _get(msg, key)
        if isinstance(val, str) and val:
            reply[key] = val
    finish = _get(choices[0], "finish_reason") if choices else _get(result, "finish_reason")
    if isinstance(finish, str):
        reply["finish_reason"] = finish
    calls = _get(msg, "tool_calls")
    if calls:
        out = []
        for c in calls:
            fn = _get(c, "function")
            name = _get(fn, "name") if fn is not None else _get(c, "name")
            args = _get(fn, "arguments") if fn is not None else _get(c, "arguments")
            if not isinstance(args, str):
                args = json.dumps(args if args is not None else {})
            out.append({"id": _get(c, "id") or "", "name": name or "", "arguments": args})
        reply["tool_calls"] = out
    usage = _get(result, "usage")
    if usage is not None:
        reply["usage"] = {"prompt_tokens": int(_get(usage, "prompt_tokens") or 0),
                          "completion_tokens": int(_get(usage, "completion_tokens") or 0)}
    return reply


class _Selectors:
    """The native selectors of one ToolSelector, one per endpoint. Holds no
    reference to the ToolSelector, so close() can be its finalizer."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: Dict[Tuple[str, str, bool], Native] = {}
        self.closed = False

    def use(self, key: Tuple[str, str, bool], config_json: bytes) -> Use:
        with self._lock:
            if self.closed:
                raise HandleError("this ToolSelector is closed", code=2, kind="handle")
            n = self._by_key.get(key)
            if n is not None:
                return Use(n)
        fresh = Native("toolselect_selector_close", "selector", _lib.call("toolselect_selector_new", config_json)["handle"])
        with self._lock:
            n = None if self.closed else self._by_key.setdefault(key, fresh)
            u = Use(n) if n is not None else None
        if n is not fresh:
            fresh.close()  # closed meanwhile, or another thread won the race
        if u is None:
            raise HandleError("this ToolSelector is closed", code=2, kind="handle")
        return u

    def close(self) -> None:
        with self._lock:
            self.closed = True
            natives, self._by_key = list(self._by_key.values()), {}
        for n in natives:
            n.close()  # at once, or when the call using it ends


class _SchemaCache:
    """Registries compiled from callers' schema text (llm-common's
    ``get_tools_schema()``), shared by every selector of the process, so a
    selector built per task does not compile the catalog again.

    A text is compiled once even when many calls ask for it at the same
    moment (the first compiles, the others wait for it). The most recently
    used ``size`` are kept; each use holds its registry open, so an entry
    evicted while calls use it is closed when the last of them ends.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._lru: "collections.OrderedDict[str, ToolRegistry]" = collections.OrderedDict()
        self._pending: Dict[str, "concurrent.futures.Future[None]"] = {}

    def use(self, text: str) -> Use:
        while True:
            with self._lock:
                reg = self._lru.get(text)
                if reg is not None:
                    self._lru.move_to_end(text)
                    return reg.use()
                fut = self._pending.get(text)
                owner = fut is None
                if fut is None:
                    fut = self._pending[text] = concurrent.futures.Future()
            if not owner:
                fut.result()  # the owner's compile error is everyone's
                continue  # found next time round (or evicted already: compile again)
            try:
                reg = _compile(text)
            except BaseException as e:
                with self._lock:
                    del self._pending[text]
                fut.set_exception(e)
                raise
            with self._lock:
                del self._pending[text]
                self._lru[text] = reg
                u = reg.use()
                evicted = []
                while len(self._lru) > self.size:
                    evicted.append(self._lru.popitem(last=False)[1])
            fut.set_result(None)
            for r in evicted:
                r.close()
            return u

    def clear(self) -> None:
        """Close every cached registry (each when its last call ends)."""
        with self._lock:
            regs, self._lru = list(self._lru.values()), collections.OrderedDict()
        for r in regs:
            r.close()

    def __len__(self) -> int:
        return len(self._lru)


class _Catalog:
    """Schema text already in hand, read as a caller's registry is read."""

    def __init__(self, text: str) -> None:
        self.text = text

    def get_tools_schema(self) -> str:
        return self.text


def _compile(text: str) -> ToolRegistry:
    """Check and compile a caller's schema text."""
    # An array goes to the library as is: parsing a large catalog in Python
    # first would cost more than loading it (the library names the line and
    # column of any JSON error). Anything else is parsed here only to say
    # what is wrong with it.
    if text[:4096].lstrip()[:1] != "[":
        try:
            parsed = json.loads(text)
        except ValueError as e:
            raise ValueError(f"tool_registry.get_tools_schema() did not return JSON: {e}") from None
        if not isinstance(parsed, list):
            raise ValueError("tool_registry.get_tools_schema() must return a JSON array of "
                             '{"name","description","parameters"}')
    reg = ToolRegistry()
    try:
        reg.load_catalog(text)
    except ArgumentError as e:
        reg.close()
        if "invalid JSON" in str(e):
            raise ValueError(f"tool_registry.get_tools_schema() did not return JSON: {e}") from None
        raise
    except BaseException:
        reg.close()
        raise
    return reg


_schemas = _SchemaCache(_SCHEMA_CACHE_SIZE)


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
