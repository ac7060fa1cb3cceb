"""Exceptions raised by toolselect.

Model and network failures are never raised by selection (it returns ``[]``
and reports the failure in the detailed result); these exceptions are for the
caller's own mistakes and for a broken environment.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, Optional

if TYPE_CHECKING:
    from ._cancelled import CancelledError
else:
    # CancelledError subclasses asyncio.CancelledError, and importing asyncio
    # costs more than importing this package: the class is made (by importing
    # _cancelled, once, under the import lock) when it is first asked for,
    # from here, from the package (toolselect.CancelledError) or by a
    # cancelled call (error_from_body). Hidden from type checkers, which
    # would otherwise take any toolselect.errors.<name> as valid.
    def __getattr__(name: str) -> Any:
        if name == "CancelledError":
            from ._cancelled import CancelledError
            globals()[name] = CancelledError
            return CancelledError
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ToolSelectError(Exception):
    """Base class: a call into the library failed.

    ``code`` and ``kind`` are the C return code and its name (see
    ``cabi/toolselect.h``); ``detail`` holds structured data when the library
    sent some (e.g. every refused tool).
    """

    code: int = 6
    kind: str = "internal"

    def __init__(self, message: str, *, code: Optional[int] = None, kind: Optional[str] = None,
                 detail: Any = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if kind is not None:
            self.kind = kind
        self.detail = detail


class ArgumentError(ToolSelectError, ValueError):
    """A bad argument: NULL, invalid UTF-8, malformed JSON, a bad value or config."""

    code, kind = 1, "argument"


class NotRecordedError(ArgumentError):
    """A feedback withdrawal matched nothing learned: no tool it names is
    recorded for that query, so nothing was written. Withdraw with the text
    the selection was recorded under (``SelectionResult.feedback_query``, or
    the result itself). A :class:`ArgumentError`, so a ``ValueError`` too."""

    code, kind = 1, "not_recorded"


class HandleError(ToolSelectError, ValueError):
    """An unknown, closed or wrong-kind handle (e.g. using a closed registry)."""

    code, kind = 2, "handle"


class UnknownToolError(ToolSelectError, LookupError):
    """The tool is not registered."""

    code, kind = 3, "not_found"


class RegistrationError(ToolSelectError, ValueError):
    """The registry refused a tool or catalog; ``refused`` lists each tool and why."""

    code, kind = 4, "rejected"

    @property
    def refused(self) -> "list[dict[str, Any]]":
        if isinstance(self.detail, dict):
            return list(self.detail.get("refused") or [])
        return []


class InternalError(ToolSelectError, RuntimeError):
    """A bug: the library recovered a panic or failed unexpectedly."""

    code, kind = 6, "internal"


class PointerError(ToolSelectError, RuntimeError):
    """toolselect_free was given a pointer the library did not return (or freed twice)."""

    code, kind = 7, "pointer"


class InvalidArgumentsError(ToolSelectError, ValueError):
    """Arguments for a tool do not satisfy its schema; ``violations`` says where and why."""

    code, kind = 1, "invalid_args"

    def __init__(self, message: str, *, tool: str = "", violations: Any = None) -> None:
        super().__init__(message)
        self.tool = tool
        self.violations = list(violations or [])


class PolicyError(ToolSelectError, PermissionError):
    """The run policy refused a call before its callable ran (the same policy
    as the Go executor's). ``rule`` names it: ``denied_by_rule`` (a pattern
    in ``rules["deny"]`` matches the tool), ``unsafe`` (the tool is marked
    unsafe and ``allow_unsafe`` is off), ``role`` (the caller holds none of the
    tool's roles), ``capability`` (the tool lacks a capability the caller
    requires), ``no_schema_read_only``, ``approval_required`` (a human-approval
    tool and no ``approve``), ``approval_denied``; ``record`` is the audit
    record of the refusal."""

    code, kind = 8, "policy"

    def __init__(self, message: str, *, rule: str = "", tool: str = "", record: Any = None) -> None:
        super().__init__(message)
        self.rule = rule
        self.tool = tool
        self.record = record


class ForkedProcessError(ToolSelectError, RuntimeError):
    """The library was loaded before this process was forked; use spawn or forkserver."""

    code, kind = -1, "forked"


class LibraryNotFoundError(ToolSelectError, ImportError):
    """libtoolselect.so could not be found or loaded."""

    code, kind = -2, "library"


class LibraryVersionError(LibraryNotFoundError):
    """The library loaded is not the one this package was written for: both
    files and both versions are in the message."""

    code, kind = -3, "library_version"


__all__ = [
    "ArgumentError", "CancelledError", "ForkedProcessError", "HandleError", "InternalError", "InvalidArgumentsError",
    "LibraryNotFoundError", "LibraryVersionError", "NotRecordedError", "PointerError", "PolicyError", "RegistrationError",
    "ToolSelectError", "UnknownToolError", "error_from_body",
]

_BY_CODE: "Dict[int, type[ToolSelectError]]" = {cls.code: cls for cls in (
    ArgumentError, HandleError, UnknownToolError, RegistrationError, InternalError, PointerError,
)}
_CANCELED = 5  # CancelledError.code


def _cancelled_error() -> "type[ToolSelectError]":
    from ._cancelled import CancelledError
    return CancelledError


def __dir__() -> "list[str]":
    return sorted(set(globals()) | set(__all__))


def error_from_body(rc: int, body: bytes) -> ToolSelectError:
    """Build the exception for a failed call from its return code and body."""
    cls = _cancelled_error() if rc == _CANCELED else _BY_CODE.get(rc, ToolSelectError)
    try:
        err = json.loads(body)["error"]
        return cls(str(err.get("message", "")), code=rc, kind=err.get("kind"), detail=err.get("detail"))
    except Exception:  # noqa: BLE001 - a body we cannot read is still an error
        return cls(f"toolselect call failed with code {rc}: {body[:200]!r}", code=rc)
