"""ToolSelectionConfig: the selector's settings, with the rules Go publishes.

Field types, defaults, ranges, choices and environment variables come from
Go's ``selector.Config`` through the C ABI (``toolselect_config_schema``),
read once when the first config is built. A field added on the Go side (with
its validate tag and its variable) appears here as an attribute, a keyword, a
``from_env`` variable and a ``model_dump`` key without a change to this file.
What is written here is for IDEs and type checkers only: the class
annotations and ``__init__``'s signature name every field with its type and
default, and ``tests/test_config.py`` fails until they agree with the schema
(so a field Go adds is accepted at once and written here next).

What this file owns is how Python values are read, the way llm-common's
pydantic model reads them in lax mode: ``"5"`` and ``5.0`` are 5 for an
integer, ``"0.2"`` is 0.2 for a number, ``"true"``/``"off"``/``1`` are booleans
(the spellings Go's ``ParseBool`` accepts). ``True`` is not an integer, a
fraction is not an integer, ``None`` is not a boolean: anything that is not
clearly the value meant is refused, never replaced by a default.
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple
from urllib.parse import urlparse

from . import _lib
from .types import dump, dump_json

log = logging.getLogger("toolselect")

_schema_lock = threading.Lock()
_schema: Optional[Dict[str, Any]] = None

#: The endpoint settings: ``from_env`` leaves them unset and the selector
#: reads their variables when each call is made (see ToolSelector).
CALL_TIME_FIELDS = ("base_url", "api_key")

_INT_TEXT = re.compile(r"[+-]?\d+")  # what Go's strconv.ParseInt reads in base 10


def schema() -> Dict[str, Any]:
    """The configuration schema published by the library (see
    ``toolselect_config_schema`` in ``cabi/toolselect.h``). Loads the library
    on first use."""
    global _schema
    s = _schema
    if s is None:
        with _schema_lock:
            if _schema is None:
                _schema = _lib.call("toolselect_config_schema")
            s = _schema
    return s


def _fields() -> List[Dict[str, Any]]:
    return schema()["fields"]


def _field(name: str) -> Dict[str, Any]:
    for f in _fields():
        if f["name"] == name:
            return f
    raise KeyError(name)


class _Bad(ValueError):
    """A value that does not read as the field's type, or is out of range."""


def _coerce(f: Dict[str, Any], v: Any, *, lax: bool = True) -> Any:
    """Read one value for field ``f``; raise _Bad when it is not clearly one.
    ``lax`` is pydantic's lax mode; the environment is read strictly (only
    the text Go itself reads)."""
    t = f["type"]
    if isinstance(v, (bytes, bytearray)):
        v = bytes(v).decode("utf-8")
    if v is None:
        if f.get("nullable"):
            return None
        raise _Bad("missing")
    if t == "bool":
        if isinstance(v, bool):
            return v
        if lax and isinstance(v, (int, float)) and v in (0, 1):
            return bool(v)
        if isinstance(v, str):
            low = v.strip().lower()
            if low in schema()["bool_true"]:
                return True
            if low in schema()["bool_false"]:
                return False
        raise _Bad("malformed")
    if t == "int":
        if isinstance(v, bool):
            raise _Bad("malformed")
        if isinstance(v, int):
            n = v
        elif lax and isinstance(v, float) and math.isfinite(v) and v == int(v):
            n = int(v)
        elif isinstance(v, str) and _INT_TEXT.fullmatch(v.strip()):
            n = int(v.strip())
        elif lax and isinstance(v, str):
            try:
                x = float(v.strip())
            except ValueError:
                raise _Bad("malformed") from None
            if not math.isfinite(x) or x != int(x):
                raise _Bad("malformed")
            n = int(x)
        else:
            raise _Bad("malformed")
        return _in_range(f, n)
    if t == "float":
        if isinstance(v, bool):
            raise _Bad("malformed")
        if isinstance(v, (int, float)):
            x = float(v)
        elif isinstance(v, str):
            try:
                x = float(v.strip())
            except ValueError:
                raise _Bad("malformed") from None
        else:
            raise _Bad("malformed")
        if not math.isfinite(x):
            raise _Bad("out of range")
        return _in_range(f, x)
    # string
    if isinstance(v, os.PathLike):
        v = os.fspath(v)
    if not isinstance(v, str):
        raise _Bad("malformed")
    s = v.strip()
    if f.get("fold_case"):
        s = s.lower()
    if not s:
        if f["required"] or not f.get("nullable"):
            raise _Bad("invalid")
        return None
    if f.get("choices") and s not in f["choices"]:
        raise _Bad("invalid")
    if f.get("format") == "http_url":
        u = urlparse(s)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise _Bad("invalid")
    return s


def _in_range(f: Dict[str, Any], x: Any) -> Any:
    lo, hi = f.get("min"), f.get("max")
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        raise _Bad("out of range")
    return x


def _shown(f: Dict[str, Any], v: Any) -> str:
    return "" if f["secret"] else f", got {v!r}"


class ToolSelectionConfig:
    """Selector settings: the names, defaults, ranges and environment
    variables of Go's ``selector.Config`` (see the table in
    ``docs/python.md``, or :func:`toolselect.config.schema`).

    Build it with keywords (``ToolSelectionConfig(max_calls=3)``), from
    llm-common-style values (``max_calls="3"``, ``timeout_s=30.0``,
    ``fail_closed="false"``), or with :meth:`from_env`. A value that is out of
    range or of the wrong type raises :class:`ValueError` naming the field;
    a keyword that is not a setting is ignored with a WARNING on the
    ``toolselect`` logger naming it (llm-common's pydantic model ignores
    extra fields too).

    ``base_url`` and ``api_key``: when ``None``, the selector reads the
    endpoint from the environment when each call is made.
    """

    # For type checkers only: the attributes are set from the schema.
    model: str
    fallback_model: Optional[str]
    max_calls: int
    timeout_s: int
    temperature: float
    fail_closed: bool
    base_url: Optional[str]
    api_key: Optional[str]
    mode: str
    max_response_bytes: int
    feedback: Optional[str]
    offer_tokens: int
    top_k: int
    max_searches: int
    provider: str
    reasoning: str
    max_tokens: int

    # The signature lists every setting of Go's schema, in its order, with its
    # default, for IDEs and type checkers (tests/test_config.py checks it
    # against toolselect_config_schema). The values are still read through
    # the schema: a setting Go adds before this list has it is accepted
    # through ``extra`` (and the test fails until it is written here).
    def __init__(self, model: str = "glm-4.5-air", fallback_model: Optional[str] = None, max_calls: int = 5,
                 timeout_s: int = 30, temperature: float = 0.0, fail_closed: bool = True,
                 base_url: Optional[str] = None, api_key: Optional[str] = None, mode: str = "json",
                 max_response_bytes: int = 4194304, feedback: Optional[str] = None, offer_tokens: int = 10000,
                 top_k: int = 10, max_searches: int = 1, provider: str = "auto", reasoning: str = "off",
                 max_tokens: int = 0, **extra: Any) -> None:
        given = {k: v for k, v in locals().items() if k not in ("self", "extra")}  # the named parameters
        fields = _fields()
        names = {f["name"] for f in fields}
        unknown = sorted(set(extra) - names)
        if unknown:
            # As llm-common's pydantic model does, extra fields are accepted and
            # ignored, but not silently. The defaults are the safe values, so
            # an ignored (say misspelled) field never makes a selector fail open.
            log.warning("ToolSelectionConfig: ignoring %s: toolselect has no such setting (settings: %s)",
                        ", ".join(map(repr, unknown)), ", ".join(sorted(names)))
        for f in fields:
            name = f["name"]
            v = extra[name] if name in extra else given.get(name, f["default"])
            object.__setattr__(self, name, v)
        self.validate()

    def validate(self) -> None:
        """Check (and normalise, lax mode) every field; raise ValueError naming the first bad one."""
        for f in _fields():
            name = f["name"]
            v = getattr(self, name, f["default"])
            try:
                object.__setattr__(self, name, _coerce(f, v))
            except _Bad:
                raise ValueError(f"{name} must be {f['want']}{_shown(f, v)}") from None

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None, **overrides: Any) -> "ToolSelectionConfig":
        """Read the ``LLM_COMMON_TOOL_SELECTION_*`` variables now (not at
        import), as Go's ``selector.ConfigFromEnv`` reads them: an empty
        variable is unset, values are trimmed, integers are whole decimal
        numbers. A malformed or out-of-range value raises ValueError naming
        the variable and the accepted values; it is never replaced by the
        default. The endpoint variables (``base_url``, ``api_key``) are left
        to the selector, which reads them when each call is made.
        ``overrides`` are keyword values applied last."""
        env = os.environ if environ is None else environ
        kw: Dict[str, Any] = {}
        for f in _fields():
            if f["name"] in CALL_TIME_FIELDS or f["name"] in overrides:
                continue
            var, raw = _first_set(env, f["env"])
            if var is None:
                continue
            try:
                kw[f["name"]] = _coerce(f, raw.strip(), lax=False)
            except _Bad as e:
                raise ValueError(f"{var}={raw.strip()!r} ({f['name']}) is {e}: want {f['want']}") from None
        kw.update(overrides)
        return cls(**kw)

    @classmethod
    def model_validate(cls, obj: Any) -> "ToolSelectionConfig":
        """pydantic's spelling: a config from a mapping (or a config)."""
        if isinstance(obj, cls):
            return obj.model_copy()
        if not isinstance(obj, Mapping):
            raise TypeError(f"ToolSelectionConfig.model_validate takes a mapping, not {type(obj).__name__}")
        return cls(**dict(obj))

    def model_copy(self, *, update: Optional[Mapping[str, Any]] = None, deep: bool = False) -> "ToolSelectionConfig":
        """A copy with ``update`` applied (and checked). Every value is a
        string, a number, a boolean or ``None``, so ``deep`` changes nothing."""
        d = self.to_json()
        d.update(update or {})
        return type(self)(**d)

    def model_dump(self, *, mode: str = "python", include: Optional[Iterable[str]] = None,
                   exclude: Optional[Iterable[str]] = None, exclude_none: bool = False,
                   exclude_defaults: bool = False, **unsupported: Any) -> Dict[str, Any]:
        """The fields as a dict under llm-common's names (``model``,
        ``fallback_model``, ``max_calls``, ``timeout_s``, ``fail_closed``,
        ``temperature``, ...), with pydantic's ``include`` / ``exclude`` /
        ``exclude_none`` / ``exclude_defaults``; any other option is refused
        (TypeError), never silently ignored. ``api_key`` is included, as
        pydantic includes it; it never appears in ``repr``."""
        if unsupported:
            raise TypeError(f"ToolSelectionConfig.model_dump does not support {', '.join(sorted(unsupported))} "
                            "(supported: mode, include, exclude, exclude_none, exclude_defaults)")
        return dump(self.to_json(), mode, include, exclude, exclude_none,
                     {f["name"]: f["default"] for f in _fields()} if exclude_defaults else None)

    def model_dump_json(self, *, indent: Optional[int] = None, **kw: Any) -> str:
        """:meth:`model_dump` as JSON text, compact as pydantic writes it (``indent`` for more)."""
        return dump_json(self.model_dump(mode="json", **kw), indent)

    def to_json(self) -> Dict[str, Any]:
        """The config as the C ABI's selector_new expects it (every field)."""
        return {f["name"]: getattr(self, f["name"]) for f in _fields()}

    def __setattr__(self, name: str, value: Any) -> None:
        # Assignment is checked as construction is (pydantic's validate_assignment).
        try:
            f = _field(name)
        except KeyError:
            f = None
        if f is not None:
            try:
                value = _coerce(f, value)
            except _Bad:
                raise ValueError(f"{name} must be {f['want']}{_shown(f, value)}") from None
        object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolSelectionConfig):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass

    def __repr__(self) -> str:
        parts = []
        for f in _fields():
            v = getattr(self, f["name"])
            parts.append(f"{f['name']}={'***' if f['secret'] and v else repr(v)}")  # URLs may hold credentials
        return f"ToolSelectionConfig({', '.join(parts)})"


def _first_set(env: Mapping[str, str], names: List[str]) -> Tuple[Optional[str], str]:
    for n in names:
        v = env.get(n)
        if v is not None and v.strip():
            return n, v
    return None, ""


def env_value(name: str, environ: Optional[Mapping[str, str]] = None) -> str:
    """The first set variable of field ``name`` (e.g. ``base_url``: the
    selector's own variable, then ``OPENAI_BASE_URL``), trimmed; "" if none."""
    return _first_set(os.environ if environ is None else environ, _field(name)["env"])[1].strip()
