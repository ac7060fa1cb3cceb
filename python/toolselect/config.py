"""ToolSelectionConfig: the selector's settings, with the rules Go publishes.

Field types, defaults, ranges, choices and environment variables come from
Go's ``selector.Config`` through the C ABI (``toolselect_config_schema``),
read once when the first config is built. A field added on the Go side (with
its validate tag and its variable) appears here as an attribute, a keyword, a
``from_env`` variable and a ``model_dump`` key without a change to this file.
What is written here is for IDEs and type checkers only: the class
annotations and ``__init__``'s signature name every field with its type and
default, and ``tests/test_config.py`` fails until they agree with the schema
(so a field Go adds is accepted at once and written here next). The defaults
a call uses are the schema's: each parameter's run-time default is a marker
read as Go's default when the config is built.

What this file owns is how Python values are read. Keywords (and
assignment, ``model_validate``) are read the way llm-common's pydantic model
reads them in lax mode, held to pydantic by ``tests/test_pydantic_parity.py``:
``"5"``, ``" 5 "``, ``"5_0"`` (50), ``"5.0"``, ``5.0`` and ``b"5"`` are
integers, ``"0.2"``, ``"1e-1"`` and ``True`` (1.0) numbers, ``"true"``,
``"OFF"``, ``1`` and ``1.0`` booleans (the spellings of Go's schema, which
are pydantic's), and text is kept as given. Refused, as pydantic refuses
them: ``"1e1"`` or ``"٥"`` as an integer, a ``bytearray`` for anything but
text, ``" true "`` as a boolean. Refused on purpose although pydantic
accepts them: ``True`` as an integer, and an empty model name (Go requires
one). Nothing that is not clearly the value meant is replaced by a default.

The environment (``from_env``) is read by Go's rules instead, those of
``selector.ConfigFromEnv``: Go's white space trimmed, ``strconv``'s integer
(ASCII decimal digits) and float syntax, the boolean spellings of the
schema; ``selector/testdata/env_cases.json`` holds Go and this file to the
same table.
"""

from __future__ import annotations

import inspect
import json
import math
import operator
import os
import re
import sys
import threading
import warnings
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple
from urllib.parse import urlparse

from . import _lib
from .types import Mode, Provider, Reasoning, StrPath, dump, dump_json


_schema_lock = threading.Lock()
_schema: Optional[Dict[str, Any]] = None

#: The endpoint settings: ``from_env`` leaves them unset and the selector
#: reads their variables when each call is made (see ToolSelector).
CALL_TIME_FIELDS = ("base_url", "api_key")


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


def _typed_default(f: Dict[str, Any]) -> Any:
    """A field's default as its Python type (JSON writes the float 0.0 as 0)."""
    d = f["default"]
    return None if d is None else {"int": int, "float": float, "bool": bool, "string": str}[f["type"]](d)


class _GoDefault:
    """The run-time default of ToolSelectionConfig.__init__'s parameters:
    read as the schema's default for the setting (Go's)."""

    def __repr__(self) -> str:
        return "<Go's default>"


_GO_DEFAULT: Any = _GoDefault()


class _SchemaSignature:
    """ToolSelectionConfig.__signature__: __init__'s parameters (without
    self) with the schema's defaults. Loads the schema when read."""

    def __get__(self, obj: Any, owner: Any) -> inspect.Signature:
        sig = inspect.signature(vars(owner)["__init__"])
        by_name = {f["name"]: f for f in _fields()}
        params = [p.replace(default=_typed_default(by_name[p.name])) if p.name in by_name else p
                  for p in list(sig.parameters.values())[1:]]
        return sig.replace(parameters=params)


def _fields() -> List[Dict[str, Any]]:
    fields: List[Dict[str, Any]] = schema()["fields"]
    return fields


def _field(name: str) -> Dict[str, Any]:
    for f in _fields():
        if f["name"] == name:
            return f
    raise KeyError(name)


class _Bad(ValueError):
    """A value that does not read as the field's type, or is out of range."""


# The white space Go's strings.TrimSpace removes (unicode.IsSpace) and
# pydantic-core's str::trim removes (Unicode White_Space): the same set.
# Python's str.strip() also removes U+001C..U+001F, which neither does.
_WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
                + "\u2028\u2029\u202f\u205f\u3000")


def _trim(s: str) -> str:
    return s.strip(_WHITE_SPACE)


# -- pydantic's lax mode (keywords, assignment, model_validate) -------------------

# pydantic-core reads an integer from text (after trimming) as an optional
# sign, ASCII digits with single underscores between them (leading zeros may
# be followed by any underscores: "0__5" is 5), and an optional "." with one
# or more zeros: "5_0" is 50, "5.00" is 5; "1e1", "5.", "٥" are refused.
_LAX_INT = re.compile(r"([+-]?)(?:0[0_]*)?([0-9]+(?:_[0-9]+)*)?(?:\.0+)?", re.ASCII)
# Rust's f64 grammar, which pydantic-core reads a number with.
_LAX_FLOAT = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)",
                        re.ASCII | re.IGNORECASE)


def _lax_int_text(text: str) -> int:
    s = _trim(text)
    m = _LAX_INT.fullmatch(s)
    if len(s) > 4300 or m is None or not s.lstrip("+-")[:1].isdigit() or s.split(".")[0].endswith("_"):
        raise _Bad("malformed")
    return int(m.group(1) + (m.group(2) or "0").replace("_", ""))


def _lax_float_text(text: str) -> float:
    s = _trim(text)
    if _LAX_FLOAT.fullmatch(s):
        return float(s)
    # Then with the underscores taken out, none at either end or doubled,
    # of the text as given (so white space and underscores together fail).
    if not (text.startswith("_") or text.endswith("_") or "__" in text):
        plain = text.replace("_", "")
        if _LAX_FLOAT.fullmatch(plain):
            return float(plain)
    raise _Bad("malformed")


def _text(v: Any, *, bytearray_ok: bool) -> Optional[str]:
    """``v`` as text when pydantic reads it as text: a str, UTF-8 bytes (and
    a bytearray for a string field only)."""
    if isinstance(v, str):
        return str.__str__(v)  # a str subclass (a str Enum) as its plain text
    if isinstance(v, bytes) or (bytearray_ok and isinstance(v, bytearray)):
        try:
            return bytes(v).decode("utf-8")
        except UnicodeDecodeError:
            raise _Bad("malformed") from None
    return None


def _lax_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    text = _text(v, bytearray_ok=False)
    if text is not None:  # pydantic does not trim here: " true " is refused
        low = text.lower()
        if low in schema()["bool_true"]:
            return True
        if low in schema()["bool_false"]:
            return False
        raise _Bad("malformed")
    if isinstance(v, (int, float) + _exact_numbers()) and v in (0, 1):
        return bool(v)
    raise _Bad("malformed")


def _exact_numbers() -> Tuple[type, ...]:
    """decimal.Decimal and fractions.Fraction, of those whose module is
    loaded: a value can only be one of them once its module was imported, so
    the checks need not import them (both cost about 3 ms of the package's
    import; docs/measurements.md)."""
    return tuple(getattr(sys.modules[m], t) for m, t in (("decimal", "Decimal"), ("fractions", "Fraction"))
                 if m in sys.modules)


def _lax_int(v: Any) -> int:
    if isinstance(v, bool):
        raise _Bad("malformed")  # a deliberate difference: pydantic reads True as 1
    if isinstance(v, int):
        return int(v)
    text = _text(v, bytearray_ok=False)
    if text is not None:
        return _lax_int_text(text)
    if isinstance(v, (float,) + _exact_numbers()):
        try:
            n = int(v)
        except (ValueError, OverflowError):  # NaN, infinities
            raise _Bad("malformed") from None
        if n != v:
            raise _Bad("malformed")  # a fraction is not an integer
        return n
    if not isinstance(v, (bytearray, complex)) and hasattr(type(v), "__index__"):
        return operator.index(v)
    raise _Bad("malformed")


def _lax_float(v: Any) -> float:
    text = _text(v, bytearray_ok=False)
    if text is not None:
        return _lax_float_text(text)
    if isinstance(v, (int, float) + _exact_numbers()) or (
            not isinstance(v, (bytearray, complex)) and hasattr(type(v), "__float__")):
        try:
            return float(v)  # True is 1.0, as pydantic reads it
        except (ValueError, OverflowError):
            raise _Bad("malformed") from None
    raise _Bad("malformed")


def _lax_str(v: Any) -> str:
    if isinstance(v, os.PathLike):
        v = os.fspath(v)  # a path for a text setting (the feedback store)
    text = _text(v, bytearray_ok=True)
    if text is None:
        raise _Bad("malformed")
    return text


# -- the environment: Go's ConfigFromEnv ------------------------------------------

_GO_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)  # strconv.ParseInt(s, 10, _): ASCII digits, no underscores


def _go_int_text(s: str) -> int:
    if not _GO_INT.fullmatch(s):
        raise _Bad("malformed")
    n = int(s)
    if not -(1 << 63) <= n < (1 << 63):
        raise _Bad("malformed")  # strconv.ErrRange
    return n


def _go_float_text(s: str) -> float:
    """strconv.ParseFloat(s, 64): Go's float literal syntax (decimal, or hex
    with a p exponent; underscores only between digits), "inf",
    "infinity" (signed) and "nan", any case. A value beyond the float64
    range is an error there, so malformed here."""
    body = s[1:] if s[:1] in "+-" else s
    low = body.lower()
    if low in ("inf", "infinity") or s.lower() == "nan":
        return float(s)
    if low.startswith("0x") and len(body) > 2:
        m = re.fullmatch(r"0[xX]([0-9a-fA-F_]*)(?:\.([0-9a-fA-F_]*))?[pP]([+-]?[0-9][0-9_]*)", body)
        digits = (m.group(1) + (m.group(2) or "")) if m else ""
        if m is None or not digits.replace("_", "") or not _go_underscores_ok(body, hex_digits=True):
            raise _Bad("malformed")
        mant = m.group(1) + ("." + m.group(2) if m.group(2) is not None else "")
        x = float.fromhex(("-" if s[:1] == "-" else "") + "0x" + mant.replace("_", "") + "p" +
                          m.group(3).replace("_", ""))
    else:
        m = re.fullmatch(r"[0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9][0-9_]*)?", body, re.ASCII)
        mant = re.split(r"[eE]", body)[0]
        if m is None or not any(c.isdigit() for c in mant) or not _go_underscores_ok(body, hex_digits=False):
            raise _Bad("malformed")
        try:
            x = float(("-" if s[:1] == "-" else "") + body.replace("_", ""))
        except ValueError:
            raise _Bad("malformed") from None
    if math.isinf(x):
        raise _Bad("malformed")  # strconv.ErrRange
    return x


def _go_underscores_ok(body: str, *, hex_digits: bool) -> bool:
    """strconv's underscoreOK: each '_' between two digits (a "0x" prefix
    counts as a digit)."""
    saw, i = "^", 0
    if hex_digits:
        saw, i = "0", 2
    for c in body[i:]:
        if c.isdigit() or (hex_digits and c.lower() in "abcdef"):
            saw = "0"
        elif c == "_":
            if saw != "0":
                return False
            saw = "_"
        else:
            if saw == "_":
                return False
            saw = "!"
    return saw != "_"


def _env_value(f: Dict[str, Any], raw: str) -> Any:
    """A variable's value read as Go's ConfigFromEnv reads it."""
    s = _trim(raw)
    t = f["type"]
    if t == "bool":
        low = s.lower()
        if low in schema()["bool_true"]:
            return True
        if low in schema()["bool_false"]:
            return False
        raise _Bad("malformed")
    if t == "int":
        return _in_range(f, _go_int_text(s))
    if t == "float":
        x = _go_float_text(s)
        if math.isnan(x):
            raise _Bad("out of range")
        return _in_range(f, x)
    return _string_rules(f, s)


# -- both ---------------------------------------------------------------------------

def _coerce(f: Dict[str, Any], v: Any) -> Any:
    """Read one keyword value for field ``f`` as pydantic's lax mode reads
    it, then apply Go's rules for the field; raise _Bad when it is not
    clearly one."""
    if v is None:
        if f.get("nullable"):
            return None
        raise _Bad("missing")
    t = f["type"]
    if t == "bool":
        return _lax_bool(v)
    if t == "int":
        return _in_range(f, _lax_int(v))
    if t == "float":
        x = _lax_float(v)
        if not math.isfinite(x):
            raise _Bad("out of range")
        return _in_range(f, x)
    return _string_rules(f, _lax_str(v))


def _string_rules(f: Dict[str, Any], s: str) -> Optional[str]:
    """Go's rules for a string setting. A setting Go normalizes (choices:
    trimmed, and lower-cased when it folds case; a URL: trimmed) is
    normalized here too; free text (model names, the key, the feedback
    store) is kept as given, as pydantic keeps it, and a required one must
    not be blank."""
    if f.get("choices") or f.get("fold_case"):
        s = _trim(s)
        if f.get("fold_case"):
            s = s.lower()
        if f.get("choices") and s not in f["choices"]:
            raise _Bad("invalid")
        return s
    if f.get("format") == "http_url":
        s = _trim(s)
        if not s:
            if f.get("nullable") and not f["required"]:
                return None
            raise _Bad("invalid")
        u = urlparse(s)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise _Bad("invalid")
        return s
    if f["required"] and not _trim(s):
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
    a keyword that is not a setting raises :class:`TypeError` naming it (and
    the setting it most likely meant). :meth:`model_validate` and a foreign
    config given to the selector (llm-common's) drop the fields toolselect
    does not have with a :class:`UserWarning` naming them.

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
    mode: Mode
    max_response_bytes: int
    feedback: Optional[str]
    offer_tokens: int
    top_k: int
    max_searches: int
    provider: Provider
    reasoning: Reasoning
    max_tokens: int

    #: What ``inspect.signature(ToolSelectionConfig)`` shows: ``__init__``'s
    #: parameters with the schema's defaults, the ones a call uses.
    __signature__ = _SchemaSignature()

    # The signature lists every setting of Go's schema, in its order, with its
    # default, for IDEs and type checkers (tests/test_config.py checks the
    # text against toolselect_config_schema). Those written defaults are not
    # the ones used: at run time each parameter defaults to _GO_DEFAULT (set
    # below the class), which is read as the schema's default, so Go's
    # defaults are the ones a config takes. A setting Go adds takes its
    # default until it is written here (and the test fails until it is).
    # There is no **extra: a misspelt keyword (fail_closd=False) is an error
    # for mypy --strict, and at run time __new__ refuses it naming the
    # setting it most likely meant.
    def __new__(cls, *args: Any, **kwargs: Any) -> "ToolSelectionConfig":
        names = {f["name"] for f in _fields()}
        unknown = sorted(set(kwargs) - names)
        if unknown:
            # Fields of another library's config (model_validate, a foreign
            # config) are dropped with a warning before they get here.
            what = "ToolSelectionConfig() got an unexpected keyword argument" + ("s" if len(unknown) > 1 else "")
            raise TypeError(_unknown_settings(what, unknown, names))
        return super().__new__(cls)

    def __init__(self, model: str = "glm-4.5-air", fallback_model: Optional[str] = None, max_calls: int = 5,
                 timeout_s: int = 30, temperature: float = 0.0, fail_closed: bool = True,
                 base_url: Optional[str] = None, api_key: Optional[str] = None, mode: Mode = "json",
                 max_response_bytes: int = 4194304, feedback: Optional[StrPath] = None, offer_tokens: int = 10000,
                 top_k: int = 10, max_searches: int = 1, provider: Provider = "auto", reasoning: Reasoning = "off",
                 max_tokens: int = 0) -> None:
        given = {k: v for k, v in locals().items() if k != "self"}  # the named parameters
        for f in _fields():
            name = f["name"]
            v = given.get(name, _GO_DEFAULT)
            if v is _GO_DEFAULT:
                v = f["default"]
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
                kw[f["name"]] = _env_value(f, raw)
            except _Bad as e:
                raise ValueError(f"{var}={_trim(raw)!r} ({f['name']}) is {e}: want {f['want']}") from None
        _warn_unknown_env(env)  # after the settings' own values, which the library checks too
        kw.update(overrides)
        return cls(**kw)

    @classmethod
    def model_validate(cls, obj: Any) -> "ToolSelectionConfig":
        """pydantic's spelling: a config from a mapping (or a config). A key
        that is not a setting (a field of another library's config, such as
        llm-common's) is dropped with a :class:`UserWarning` naming it, as
        pydantic drops extra fields, but visibly."""
        if isinstance(obj, cls):
            return obj.model_copy()
        if not isinstance(obj, Mapping):
            raise TypeError(f"ToolSelectionConfig.model_validate takes a mapping, not {type(obj).__name__}")
        names = {f["name"] for f in _fields()}
        unknown = sorted(str(k) for k in obj if k not in names)
        if unknown:
            warnings.warn(_unknown_settings("ToolSelectionConfig: ignoring", unknown, names), UserWarning,
                          stacklevel=2)
        return cls(**{k: v for k, v in obj.items() if k in names})

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


def _warn_unknown_env(env: Mapping[str, str]) -> None:
    """Warn (UserWarning) of each ``LLM_COMMON_TOOL_SELECTION_*`` variable
    that names no setting, naming the closest setting's variable, in the
    Go library's words (``selector.Config.EnvWarnings``): a misspelt variable is
    not ignored without a word."""
    prefix = schema()["env_prefix"]
    known = {v for f in _fields() for v in f["env"]}
    mine = {k: v for k, v in env.items() if k.startswith(prefix) and k not in known}  # the settings' own: read above
    if not mine:
        return
    for w in _lib.call("toolselect_config_unknown_env", json.dumps(mine).encode())["warnings"]:
        warnings.warn(f"toolselect: {w}", UserWarning, stacklevel=3)


def _unknown_settings(what: str, unknown: List[str], names: Iterable[str]) -> str:
    """``what`` and the unknown names, each with its likely meaning, and the settings."""
    parts = []
    for u in unknown:
        import difflib  # only for this message: not loaded with the package

        close = difflib.get_close_matches(u, list(names), n=1)
        parts.append(f"{u!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return (f"{what} {', '.join(parts)}: toolselect has no such setting "
            f"(settings: {', '.join(sorted(names))})")


def _use_go_defaults(cls: Any) -> None:
    """Make every named parameter of ``cls.__init__`` default to _GO_DEFAULT
    (the schema's default, read when a config is built), keeping the
    written signature for ``inspect.signature(cls.__init__)``. Needs no
    schema, so importing the package still loads no library."""
    init = vars(cls)["__init__"]
    init.__signature__ = inspect.signature(init)
    init.__defaults__ = (_GO_DEFAULT,) * len(init.__defaults__ or ())


_use_go_defaults(ToolSelectionConfig)


def _first_set(env: Mapping[str, str], names: List[str]) -> Tuple[Optional[str], str]:
    for n in names:
        v = env.get(n)
        if v is not None and _trim(v):  # empty (after Go's TrimSpace) is unset
            return n, v
    return None, ""


def env_value(name: str, environ: Optional[Mapping[str, str]] = None) -> str:
    """The first set variable of field ``name`` (e.g. ``base_url``: the
    selector's own variable, then ``OPENAI_BASE_URL``), trimmed; "" if none."""
    return _trim(_first_set(os.environ if environ is None else environ, _field(name)["env"])[1])
