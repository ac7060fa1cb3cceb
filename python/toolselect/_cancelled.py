"""toolselect.CancelledError, kept out of errors.py so that importing the
package does not import asyncio (see ``errors.__getattr__``): a process that
only loads catalogs does not pay for asyncio, and one that cancels a
selection has imported it already."""

from __future__ import annotations

import asyncio

from .errors import ToolSelectError


class CancelledError(ToolSelectError, asyncio.CancelledError):
    """The call was cancelled (``TS_ERR_CANCELED``: its cancel token was
    cancelled, which ToolSelector does when the awaiting task is cancelled).

    Both a :class:`ToolSelectError` (so an :class:`Exception`: ``except
    Exception`` and ``except ToolSelectError`` still catch it, as before) and
    an :class:`asyncio.CancelledError` (so ``except asyncio.CancelledError``
    catches it, and asyncio treats it as cancellation: raised out of a task,
    it marks the task cancelled). See docs/python.md, "Errors"."""

    code, kind = 5, "canceled"


# The public home, for repr, pickle and documentation tools.
CancelledError.__module__ = "toolselect.errors"
