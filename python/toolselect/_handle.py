"""Native handles: use counts, deferred close, and a quiet finalizer.

A handle is never closed while a call uses it: a call takes a use
(:meth:`Native.acquire`) for its whole duration and gives it back
(:meth:`Native.release`); ``close()`` during a use only marks the handle
closing, and the last release closes it. An object collected while still
open is released by ``weakref.finalize``, quietly: code that builds an
object per task and never closes it (llm-common's executor does) sees no
warning and leaks nothing.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Optional

from . import _lib
from .errors import HandleError


class Native:
    """One integer handle of the C ABI with a use count. Holds no reference
    to its owner, so it can be the owner's finalizer."""

    __slots__ = ("_close_fn", "_kind", "_h", "_uses", "_closing", "_lock")

    def __init__(self, close_fn: str, kind: str, handle: int) -> None:
        self._close_fn = close_fn
        self._kind = kind
        self._h: Optional[int] = handle
        self._uses = 0
        self._closing = False
        self._lock = threading.RLock()  # reentrant: a finalizer may run on a thread inside acquire

    @property
    def closed(self) -> bool:
        return self._closing or self._h is None

    def peek(self) -> int:
        """The handle for a short call on the caller's own thread; raises
        :class:`HandleError` once close() was asked for."""
        h = self._h
        if h is None or self._closing:
            raise HandleError(f"this {self._kind} is closed")
        return h

    def acquire(self) -> int:
        """Take a use: the handle stays open until the matching release()."""
        with self._lock:
            h = self._h
            if h is None or self._closing:
                raise HandleError(f"this {self._kind} is closed")
            self._uses += 1
            return h

    def release(self) -> None:
        with self._lock:
            self._uses -= 1
            h = self._take_if_idle()
        self._close_native(h)

    def close(self) -> None:
        """Close now, or when the last use ends. Idempotent; never raises
        (it runs from finalizers, also in a forked child or at shutdown)."""
        with self._lock:
            self._closing = True
            h = self._take_if_idle()
        self._close_native(h)

    def _take_if_idle(self) -> Optional[int]:
        if self._closing and self._uses == 0 and self._h is not None:
            h, self._h = self._h, None
            return h
        return None

    def _close_native(self, h: Optional[int]) -> None:
        if h is None:
            return
        try:
            _lib.call(self._close_fn, h)
        except Exception:  # noqa: BLE001 - e.g. a forked child: the handle dies with the process
            pass


class Use:
    """``with Use(native) as h:`` holds a use for the block."""

    __slots__ = ("_n", "h")

    def __init__(self, native: Native) -> None:
        self._n = native
        self.h = native.acquire()

    def __enter__(self) -> int:
        return self.h

    def __exit__(self, *exc: Any) -> None:
        self._n.release()


class Handle:
    """Base class of Python objects that own one library handle.

    ``close()`` is idempotent; the object is a context manager; an object
    collected while still open is closed by a quiet finalizer.
    """

    _close_fn: str = ""
    _kind: str = "object"

    def __init__(self, handle: int) -> None:
        self._native = Native(self._close_fn, self._kind, handle)
        fin = weakref.finalize(self, self._native.close)
        fin.atexit = False  # the process is ending: nothing to give back
        self._finalizer = fin

    @property
    def handle(self) -> int:
        """The integer handle; raises :class:`HandleError` once closed."""
        return self._native.peek()

    @property
    def closed(self) -> bool:
        return self._native.closed

    def use(self) -> Use:
        """Hold the handle open for a ``with`` block, even if another thread
        calls close() meanwhile (the close then happens at the block's end)."""
        return Use(self._native)

    def close(self) -> None:
        """Release the handle (at once, or when the last call using it ends).
        Calling it again does nothing."""
        native = getattr(self, "_native", None)
        if native is not None:
            native.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
