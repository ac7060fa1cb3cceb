"""Worker threads for blocking native calls, off the caller's event loop."""

from __future__ import annotations

import concurrent.futures
import functools
import os
import threading
from typing import Any, Callable, Optional


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
