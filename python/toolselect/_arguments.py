"""A call's arguments: the one value that is validated and run, and the
verdict on it (:class:`Violation`, :class:`Validation`).

JSON argument text is parsed once, here, refusing a key given twice in one
object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Union

from ._words import _quote


@dataclass(frozen=True)
class Violation:
    """One broken rule: the JSON pointer of the value, the schema keyword, and why."""

    pointer: str
    rule: str
    message: str

    def __str__(self) -> str:
        """As Go's Violation prints: at /pointer: message (rule)."""
        return f"at {self.pointer or '/'}: {self.message} ({self.rule})"


@dataclass(frozen=True)
class Validation:
    """The verdict on one argument document. Truthy when valid."""

    tool: str
    valid: bool
    violations: List[Violation] = field(default_factory=list)
    validated: bool = True
    message: str = ""

    def __bool__(self) -> bool:
        return self.valid


#: A call's arguments: a mapping, or JSON text as a model sent it.
Arguments = Union[Mapping[str, Any], str, bytes]


class _BadArguments(ValueError):
    """Argument text refused before any policy is asked, with its violation."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(violation.message)
        self.violation = violation


def _arguments(args: "Optional[Arguments]") -> Any:
    """A call's arguments as the one value that is validated and run: a
    mapping as it is; JSON text parsed once, here (see _loads_once)."""
    if args is None:
        return {}
    if isinstance(args, (str, bytes, bytearray)):
        try:
            return _loads_once(args)
        except ValueError as e:
            if isinstance(e, _BadArguments):
                raise
            raise _BadArguments(Violation("", "json", f"the arguments are not valid JSON: {e}")) from None
    if isinstance(args, Mapping):
        return dict(args)
    raise TypeError(f"the arguments must be a mapping or JSON text, not {type(args).__name__}")


def _loads_once(text: Union[str, bytes, bytearray]) -> Any:
    """JSON argument text as one value, refusing a key that appears twice in
    one object: parsers disagree on which of the two they keep (Python's and
    Go's the last, cJSON and RapidJSON the first), so the value one checked
    need not be the value another runs. Raises _BadArguments naming the key."""
    first: List[Any] = []

    def pairs(items: List[Any]) -> Dict[str, Any]:
        d: Dict[str, Any] = {}
        for k, val in items:
            if k in d and not first:
                first.append((d, k))
            d[k] = val
        return d

    beyond: List[_Beyond] = []

    def number(literal: str) -> Any:
        f = float(literal)
        if f in (_INF, -_INF):
            beyond.append(_Beyond(literal))
            return beyond[-1]
        return f

    value = json.loads(text, object_pairs_hook=pairs, parse_constant=_not_json, parse_float=number)
    if beyond:
        # Go and the C ABI refuse the text the same way (registry's "number"
        # rule): no float holds it, so no receiver could read it.
        raise _BadArguments(Violation(_pointer_to(value, beyond[0]), "number",
                                      f"the number {beyond[0].literal} is beyond the range of a 64-bit float, "
                                      "what a receiver reads it as"))
    if first:
        obj, key = first[0]
        pointer = _pointer_to(value, obj) + "/" + key.replace("~", "~0").replace("/", "~1")
        raise _BadArguments(Violation(pointer, "duplicateKey",
                                      f"the key {_quote(key)} appears more than once in one object; "
                                      "give it once"))
    return value


_INF = float("inf")


class _Beyond:
    """A number literal no 64-bit float holds (1e400): kept in place while
    parsing so that its pointer can be named."""

    def __init__(self, literal: str) -> None:
        self.literal = literal


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")


def _pointer_to(root: Any, target: Any) -> str:
    """The JSON pointer of the object target (by identity) inside root."""
    stack = [(root, "")]
    while stack:
        node, at = stack.pop()
        if node is target:
            return at
        if isinstance(node, dict):
            stack.extend((v, at + "/" + k.replace("~", "~0").replace("/", "~1")) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{at}/{i}") for i, v in enumerate(node))
    return ""
