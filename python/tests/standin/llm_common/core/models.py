"""llm-common's message and response types (pydantic there; plain classes
with the same attribute-only surface here: no __getitem__)."""

from __future__ import annotations

import copy
import json
from typing import Any, Dict, List, Optional


class _Model:
    _fields: tuple = ()

    def __init__(self, **kw: Any) -> None:
        for f in self._fields:
            setattr(self, f, kw.pop(f, copy.copy(getattr(type(self), f, None))))
        if kw:
            raise TypeError(f"{type(self).__name__} has no field {sorted(kw)}")

    def model_dump(self) -> Dict[str, Any]:
        return {f: _dump(getattr(self, f)) for f in self._fields}

    def model_dump_json(self) -> str:
        return json.dumps(self.model_dump(), separators=(",", ":"), ensure_ascii=False)  # as pydantic writes it

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.model_dump() == other.model_dump()  # type: ignore[union-attr]


def _dump(v: Any) -> Any:
    if isinstance(v, _Model):
        return v.model_dump()
    if isinstance(v, list):
        return [_dump(x) for x in v]
    return v


class LLMMessage(_Model):
    """A chat message. Read as m.role, m.content, m.name: it is not a mapping."""

    _fields = ("role", "content", "name")
    name: Optional[str] = None


class LLMUsage(_Model):
    _fields = ("prompt_tokens", "completion_tokens")
    prompt_tokens = 0
    completion_tokens = 0


class LLMResponse(_Model):
    _fields = ("content", "model", "usage")
    model = ""
    usage = None
