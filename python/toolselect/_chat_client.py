"""A caller's chat client: which of a dialect's request fields it takes, the
base URL it sends to, and its reply (or its exception) as the document the
Go session is fed."""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable, Dict, List, Mapping
from urllib.parse import urlparse


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


def _redact(text: str, secrets: "List[str]") -> str:
    for k in secrets:
        if k:
            text = text.replace(k, "[REDACTED]")
    return text


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
