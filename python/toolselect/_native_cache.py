"""The native objects selectors hold: one Go selector per endpoint for each
ToolSelector, and the registries compiled from callers' schema text, shared
by every selector of the process."""

from __future__ import annotations

import collections
import concurrent.futures
import json
import threading
from typing import Dict, Tuple

from . import _lib
from ._handle import Native, Use
from ._registry import ToolRegistry
from .errors import ArgumentError, HandleError


_SCHEMA_CACHE_SIZE = 16


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
