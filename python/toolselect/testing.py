"""Test helpers that need neither Go nor the source checkout.

:class:`FakeModel` is an OpenAI-compatible chat server on 127.0.0.1 that
answers scripted replies: the library's own (Go's ``modeltest``, through
the C ABI), so it ships inside the wheel::

    from toolselect.testing import FakeModel

    with FakeModel([{"calls": [{"tool": "get_weather", "args": {"city": "Paris"}, "reasoning": "asked"}]}]) as fake:
        selector = ToolSelector(config=ToolSelectionConfig(base_url=fake.url))
        calls = await selector.select_tool_calls(task, registry)
        assert fake.requests[0]["model"] == "glm-4.5-air"
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Sequence, Union

from . import _lib
from ._handle import Handle

#: One scripted reply: ``{"calls": [{"tool", "args", "reasoning"}]}`` (tool
#: calls; ``[]`` for none), a ``str`` (the raw message text, e.g. prose or
#: broken JSON), or an ``int`` (an HTTP error status). A mapping may also
#: give ``{"status": 503, "content": "overloaded"}``: an error with its
#: message, or ``{"content": "..."}``.
Reply = Union[Mapping[str, Any], str, int]


class FakeModel(Handle):
    """A fake chat model on 127.0.0.1 that answers ``replies`` in order, the
    last one again when they run out (none: it answers no calls).

    Use it as a context manager (or call :meth:`close`); :attr:`url` is the
    base URL to configure, :attr:`requests` the JSON bodies of the chat
    requests it received, in order."""

    _close_fn = "toolselect_fake_model_close"
    _kind = "fake model"

    def __init__(self, replies: Sequence[Reply] = ()) -> None:
        if isinstance(replies, (str, bytes, Mapping)) or not isinstance(replies, Sequence):
            raise TypeError(f"replies must be a list of replies, got {type(replies).__name__}: FakeModel([{replies!r}])")
        script = [_reply(i, r) for i, r in enumerate(replies)]
        r = _lib.call("toolselect_fake_model_new", json.dumps(script).encode())
        super().__init__(r["handle"])
        #: The base URL to configure (``ToolSelectionConfig(base_url=fake.url)``).
        self.url: str = r["url"]

    @property
    def requests(self) -> List[Dict[str, Any]]:
        """The JSON bodies of the chat requests received so far, in order
        (``model``, ``messages``, ``temperature``, ``response_format``, ...)."""
        with self.use() as h:
            got = _lib.call("toolselect_fake_model_requests", h)["requests"]
        return [json.loads(json.dumps(q["body"])) for q in got]

    def __enter__(self) -> "FakeModel":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FakeModel(url={self.url!r})"


def _reply(i: int, r: Reply) -> Dict[str, Any]:
    if isinstance(r, bool):
        raise TypeError(f"reply {i}: {r!r} is not a reply (a dict of calls, a str or an HTTP status int)")
    if isinstance(r, int):
        return {"status": r, "content": f"fake model: scripted HTTP {r}"}
    if isinstance(r, str):
        return {"content": r}
    if isinstance(r, Mapping):
        out = dict(r)
        if "calls" in out:
            out["calls"] = [_call(i, c) for c in out["calls"]]
        return out
    raise TypeError(f"reply {i}: {type(r).__name__} is not a reply (a dict of calls, a str or an HTTP status int)")


def _call(i: int, c: Any) -> Dict[str, Any]:
    if not isinstance(c, Mapping):
        raise TypeError(f"reply {i}: a call must be a dict {{'tool': ..., 'args': {{...}}, 'reasoning': ...}}, got {c!r}")
    return dict(c)


__all__ = ["FakeModel", "Reply"]

