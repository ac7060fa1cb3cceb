"""How the Python front door words what it names or refuses: a tool name as
Go quotes it, a value by its type and repr, and the keywords that take a
boolean or a list of names, checked and worded the same way everywhere."""

from __future__ import annotations

import json
from typing import Any, Iterable, List


def _quote(name: str) -> str:
    """A tool name as Go's %q writes it (for the names a registry accepts)."""
    return json.dumps(name, ensure_ascii=False)


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _shown(value: Any) -> str:
    """A value as a refusal names it: its type and its repr, clipped."""
    try:
        r = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the refusal
        r = "<repr failed>"
    return f"{type(value).__name__} {_clip(r)}"


def _flag(keyword: str, value: Any) -> bool:
    """A policy keyword that takes a boolean: True or False, nothing else
    (bool("false") is True, and a string must not switch a rule off)."""
    if not isinstance(value, bool):
        raise TypeError(f"{keyword} must be True or False, not {_shown(value)}")
    return value


def _names(what: str, seq: Iterable[str]) -> List[str]:
    if isinstance(seq, (str, bytes)):
        raise TypeError(f"{what} must be a list of names, not one string")
    return [str(x) for x in seq]
