"""Base class for Python objects that own a library handle."""

from __future__ import annotations

import threading
import warnings
from typing import Any, Optional

from . import _lib
from .errors import HandleError


class Handle:
    """Owns one integer handle of the C ABI.

    ``close()`` is idempotent; the object is a context manager; an object
    collected while still open emits a :class:`ResourceWarning` and is closed.
    """

    _close_fn: str = ""
    _kind: str = "object"

    def __init__(self, handle: int) -> None:
        self._h: Optional[int] = handle
        self._close_lock = threading.Lock()

    @property
    def handle(self) -> int:
        """The integer handle; raises :class:`HandleError` once closed."""
        h = self._h
        if h is None:
            raise HandleError(f"this {self._kind} is closed")
        return h

    @property
    def closed(self) -> bool:
        return self._h is None

    def close(self) -> None:
        """Release the handle. Calling it again does nothing."""
        lock = getattr(self, "_close_lock", None)
        if lock is None:
            return
        with lock:
            h, self._h = self._h, None
        if h is not None:
            _lib.call(self._close_fn, h)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_h", None) is None:
            return
        try:
            warnings.warn(f"unclosed toolselect {self._kind} (handle {self._h}); call close() "
                          "or use it as a context manager", ResourceWarning, stacklevel=2)
            self.close()
        except Exception:  # noqa: BLE001 - never raise from __del__ (e.g. in a forked child)
            pass
