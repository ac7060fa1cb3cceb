"""The JSON Schema of a Python function's arguments, from its signature and docstring.

:meth:`ToolRegistry.register <toolselect.ToolRegistry.register>` uses it when
no ``parameters`` are given. Each parameter becomes a property: its
annotation gives the type (``str``, ``int``, ``float``, ``bool``, ``None``,
``Optional``, ``Union``, ``Literal``, ``Enum``, ``list[T]``, ``set[T]``,
``tuple``, ``dict[str, T]``, ``TypedDict``, dataclasses, ``Annotated[T,
"description"]``, ``Any``, and a pydantic model's own ``model_json_schema()``),
its default makes it optional (and is written as ``"default"``), and the
docstring (Google, NumPy or reST) gives its description. An annotation that
has no JSON Schema, or a parameter without one, is an error naming the
parameter: a tool never gets an empty schema by accident.

It also says how to turn validated JSON back into what the function's
annotations ask for (an ``Enum`` member, a dataclass, a pydantic model, a
tuple or a set), so the function receives the types it declares.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import inspect
import json
import re
import textwrap
import types
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["Unsupported", "function_schema", "parse_docstring"]

_NoneType = type(None)
_UnionType = getattr(types, "UnionType", None)  # int | None, Python 3.10+
_REQUIRED = tuple(x for x in (getattr(typing, "Required", None), getattr(typing, "NotRequired", None)) if x)


class Unsupported(TypeError):
    """A parameter whose schema cannot be inferred; the message says which and why."""


Converter = Callable[[Any], Any]


class _Context:
    """State of one inference: the pydantic ``$defs`` lifted to the root,
    and the classes being expanded (a class that contains itself needs an
    explicit schema)."""

    def __init__(self) -> None:
        self.defs: Dict[str, Any] = {}
        self.expanding: List[Any] = []


def function_schema(fn: Callable[..., Any]) -> Tuple[Dict[str, Any], str, Optional[Callable[..., Any]]]:
    """``fn``'s arguments as a JSON Schema, its description (the docstring
    before its sections) and, when a parameter's type is not what JSON
    decodes to, a wrapper of ``fn`` that converts those arguments first
    (else ``None``). Raises :class:`Unsupported` naming the parameter."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as e:
        raise Unsupported(f"its signature cannot be read ({e})") from None
    hints = _hints(fn, sig)
    if not _FORMATS:
        _formats()  # here, not at import: datetime, uuid and pathlib wait for the first inferred schema
    description, docs = parse_docstring(inspect.getdoc(fn) or "")
    ctx = _Context()
    props: Dict[str, Any] = {}
    required: List[str] = []
    converters: Dict[str, Converter] = {}
    open_ended = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            continue  # the tool is called with keywords only: *args stays empty
        if p.kind is p.VAR_KEYWORD:
            open_ended = True
            continue
        if p.kind is p.POSITIONAL_ONLY:
            raise Unsupported(f"parameter {p.name!r} is positional-only, and a tool is called with keyword arguments")
        if p.name not in hints:
            raise Unsupported(f"parameter {p.name!r} has no type annotation")
        try:
            prop = _schema(hints[p.name], ctx)
        except Unsupported as e:
            raise Unsupported(f"parameter {p.name!r}: {e}") from None
        if p.name in docs and ("description" not in prop or not _has_own_description(hints[p.name])):
            # The parameter's own line, over its class's docstring (a model's or a dataclass's).
            prop["description"] = docs[p.name]
        if p.default is p.empty:
            required.append(p.name)
        else:
            _set_default(prop, p.default)
        props[p.name] = prop
        conv = _converter(hints[p.name])
        if conv is not None:
            converters[p.name] = conv
    schema: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    if not open_ended:
        schema["additionalProperties"] = False  # the function would refuse an unknown keyword
    if ctx.defs:
        schema["$defs"] = ctx.defs
    return schema, description, (_converting(fn, converters) if converters else None)


def _hints(fn: Callable[..., Any], sig: inspect.Signature) -> Dict[str, Any]:
    """The parameters' annotations, resolved (string annotations included)."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # noqa: BLE001 - find the parameter whose annotation does not resolve
        pass
    out: Dict[str, Any] = {}
    globalns = getattr(inspect.unwrap(fn), "__globals__", {})
    for p in sig.parameters.values():
        if p.annotation is p.empty:
            continue
        a = p.annotation
        if isinstance(a, str):
            try:
                a = eval(a, globalns)  # noqa: S307 - the function's own annotation, as get_type_hints does
            except Exception as e:  # noqa: BLE001
                raise Unsupported(f"parameter {p.name!r}: annotation {p.annotation!r} cannot be resolved "
                                  f"({type(e).__name__}: {e})") from None
        out[p.name] = a
    return out


def _schema(tp: Any, ctx: _Context) -> Dict[str, Any]:
    """The JSON Schema of one annotation."""
    if tp is Any:
        return {}
    if tp is None or tp is _NoneType:
        return {"type": "null"}
    for py, js in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string")):
        if tp is py:
            return {"type": js}
    fmt = _FORMATS.get(tp) if isinstance(tp, type) else None
    if fmt is not None:
        return {"type": "string", "format": fmt}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        s = _schema(args[0], ctx)
        for a in args[1:]:
            _constrain(s, a)
        return s
    if _REQUIRED and origin in _REQUIRED:
        return _schema(args[0], ctx)
    if origin is typing.Literal:
        return _enum([a.value if isinstance(a, enum.Enum) else a for a in args], repr(tp))
    if origin is typing.Union or (_UnionType is not None and isinstance(tp, _UnionType)):
        members = [a for a in args if a is not _NoneType]
        if len(members) == 1:
            return _nullable(_schema(members[0], ctx))
        return {"anyOf": [_schema(a, ctx) for a in args]}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum([m.value for m in tp], tp.__name__)
    if tp in (list, set, frozenset, tuple) or origin in (list, set, frozenset, tuple, collections.abc.Sequence,
                                                         collections.abc.MutableSequence, collections.abc.Set,
                                                         collections.abc.MutableSet, collections.abc.Iterable,
                                                         collections.abc.Collection):
        return _array(tp, origin or tp, args, ctx)
    if tp is dict or origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping):
        if not args:
            return {"type": "object"}
        if args[0] is not str:
            raise Unsupported(f"{_name(tp)}: JSON object keys are strings (use dict[str, ...])")
        return {"type": "object", "additionalProperties": _schema(args[1], ctx)}
    if _is_typeddict(tp):
        return _typeddict(tp, ctx)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass(tp, ctx)
    if isinstance(tp, type) and callable(getattr(tp, "model_json_schema", None)):
        return _pydantic(tp, ctx)
    raise Unsupported(f"{_name(tp)} has no JSON Schema here (supported: str, int, float, bool, None, Optional, "
                      "Union, Literal, Enum, list, set, tuple, dict[str, T], TypedDict, dataclasses, Annotated, "
                      "Any, pydantic models)")


# The JSON Schema format of the standard types a model writes as strings
# (pydantic's names); _converter turns the string back into the type.
_FORMATS: Dict[Any, str] = {}


def _formats() -> None:
    import datetime
    import pathlib
    import uuid
    _FORMATS.update({datetime.datetime: "date-time", datetime.date: "date", datetime.time: "time",
                     uuid.UUID: "uuid", pathlib.Path: "path", pathlib.PurePath: "path"})
    _PARSE.update({datetime.datetime: _iso(datetime.datetime), datetime.date: _iso(datetime.date),
                   datetime.time: _iso(datetime.time), uuid.UUID: uuid.UUID, pathlib.Path: pathlib.Path,
                   pathlib.PurePath: pathlib.PurePath})


_PARSE: Dict[Any, Converter] = {}


def _iso(cls: Any) -> Converter:
    def parse(v: Any) -> Any:
        text = v[:-1] + "+00:00" if isinstance(v, str) and v.endswith(("Z", "z")) else v  # fromisoformat before 3.11
        return cls.fromisoformat(text)
    return parse


# annotated_types' constraints (and pydantic's, which are the same objects)
# by their attribute: the JSON Schema keyword for numbers, strings, arrays
# and objects. Recognised by attribute name, so neither package is imported.
_BOUNDS = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum", "le": "maximum",
           "multiple_of": "multipleOf"}
_LENGTHS = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems"),
            "object": ("minProperties", "maxProperties")}


def _constrain(s: Dict[str, Any], meta: Any) -> None:
    """Add what one piece of ``Annotated`` metadata says to the schema ``s``:
    a description (a str, or a pydantic ``Field``'s), bounds, lengths, a
    pattern. Anything else is :class:`Unsupported`, never dropped."""
    if isinstance(meta, str):
        s["description"] = meta
        return
    kind = type(meta).__name__
    if kind == "FieldInfo":  # pydantic.Field(...): its description, examples and constraints
        if getattr(meta, "description", None):
            s["description"] = meta.description
        examples = getattr(meta, "examples", None)
        if examples:
            s["examples"] = list(examples)
        for m in getattr(meta, "metadata", None) or ():
            _constrain(s, m)
        return
    found = False
    for attr, keyword in _BOUNDS.items():
        v = getattr(meta, attr, None)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            s[keyword] = v
            found = True
    lo, hi = getattr(meta, "min_length", None), getattr(meta, "max_length", None)
    if isinstance(lo, int) or isinstance(hi, int):
        keys = _LENGTHS.get(_json_type(s))
        if keys is None:
            raise Unsupported(f"{meta!r} bounds a length, and the type {_json_type(s) or 'given'} has none")
        if isinstance(lo, int) and lo > 0:
            s[keys[0]] = lo
        if isinstance(hi, int):
            s[keys[1]] = hi
        found = True
    pattern = getattr(meta, "pattern", None)
    if isinstance(pattern, str):
        if _json_type(s) != "string":
            raise Unsupported(f"{meta!r} is a pattern, for strings")
        s["pattern"] = pattern
        found = True
    elif isinstance(pattern, re.Pattern):
        s["pattern"] = pattern.pattern
        found = True
    if not found:
        raise Unsupported(f"Annotated metadata {meta!r} ({type(meta).__module__}.{kind}) has no JSON Schema here "
                          "(supported: a description str, pydantic Field, annotated_types Gt, Ge, Lt, Le, "
                          "MultipleOf, MinLen, MaxLen, Len, Interval, and a pattern)")


def _json_type(s: Dict[str, Any]) -> str:
    t = s.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    return t if isinstance(t, str) else ""


def _has_own_description(tp: Any) -> bool:
    """Whether the annotation itself describes the parameter (Annotated
    text or a Field description), which wins over the docstring's line."""
    if typing.get_origin(tp) is not typing.Annotated:
        return False
    return any(isinstance(a, str) or getattr(a, "description", None) for a in typing.get_args(tp)[1:])


def _name(tp: Any) -> str:
    if isinstance(tp, type) and typing.get_origin(tp) is None:
        return tp.__qualname__
    return repr(tp).replace("typing.", "")


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (_NoneType, "null"))


def _enum(values: List[Any], what: str) -> Dict[str, Any]:
    kinds = []
    for v in values:
        kind = next((js for py, js in _JSON_TYPES if type(v) is py), None)
        if kind is None:
            raise Unsupported(f"{what}: the value {v!r} is not a JSON string, number, boolean or null")
        if kind not in kinds:
            kinds.append(kind)
    s: Dict[str, Any] = {}
    if len(kinds) == 1:
        s["type"] = kinds[0]
    elif "null" not in kinds or len(kinds) > 2:
        s["type"] = kinds
    else:
        s["type"] = [k for k in kinds if k != "null"] + ["null"]
    s["enum"] = list(values)
    return s


def _nullable(s: Dict[str, Any]) -> Dict[str, Any]:
    """``s`` or null: a second type when ``s`` has one type, else anyOf."""
    t = s.get("type")
    if isinstance(t, str) and "anyOf" not in s and "$ref" not in s:
        if t == "null":
            return s
        out = dict(s)
        out["type"] = [t, "null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = list(out["enum"]) + [None]
        return out
    return {"anyOf": [s, {"type": "null"}]}


def _array(tp: Any, origin: Any, args: Tuple[Any, ...], ctx: _Context) -> Dict[str, Any]:
    s: Dict[str, Any] = {"type": "array"}
    if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        if args == ((),):  # Tuple[()]
            s["maxItems"] = 0
            return s
        s["prefixItems"] = [_schema(a, ctx) for a in args]
        s["minItems"] = s["maxItems"] = len(args)
        return s
    if args:
        s["items"] = _schema(args[0], ctx)
    if origin in (set, frozenset, collections.abc.Set, collections.abc.MutableSet):
        s["uniqueItems"] = True
    return s


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__total__") and hasattr(tp, "__required_keys__")


def _expanding(tp: Any, ctx: _Context) -> None:
    if tp in ctx.expanding:
        raise Unsupported(f"{tp.__qualname__} contains itself")
    ctx.expanding.append(tp)


def _class_docs(tp: Any) -> Dict[str, str]:
    """Field descriptions from a class's own docstring (dataclasses write one of their own)."""
    doc = tp.__dict__.get("__doc__") or ""
    if not doc or doc.startswith(tp.__name__ + "("):
        return {}
    return parse_docstring(inspect.cleandoc(doc))[1]


def _object(tp: Any, fields: List[Tuple[str, Any, bool, Any]], ctx: _Context) -> Dict[str, Any]:
    """An object schema from (name, annotation, required, default or _NO_DEFAULT) fields."""
    _expanding(tp, ctx)
    docs = _class_docs(tp)
    props: Dict[str, Any] = {}
    required: List[str] = []
    for name, ann, req, default in fields:
        try:
            prop = _schema(ann, ctx)
        except Unsupported as e:
            raise Unsupported(f"{tp.__qualname__}.{name}: {e}") from None
        if name in docs and "description" not in prop:
            prop["description"] = docs[name]
        if req:
            required.append(name)
        elif default is not _NO_DEFAULT:
            _set_default(prop, default)
        props[name] = prop
    ctx.expanding.pop()
    s: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        s["required"] = required
    s["additionalProperties"] = False
    return s


_NO_DEFAULT = object()


def _typeddict(tp: Any, ctx: _Context) -> Dict[str, Any]:
    hints = typing.get_type_hints(tp, include_extras=True)
    req = tp.__required_keys__
    return _object(tp, [(k, v, k in req, _NO_DEFAULT) for k, v in hints.items()], ctx)


def _dataclass(tp: Any, ctx: _Context) -> Dict[str, Any]:
    hints = typing.get_type_hints(tp, include_extras=True)
    fields = []
    for f in dataclasses.fields(tp):
        if not f.init:
            continue
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        default = f.default if f.default is not dataclasses.MISSING else _NO_DEFAULT
        fields.append((f.name, hints.get(f.name, f.type), not has_default, default))
    return _object(tp, fields, ctx)


def _pydantic(tp: Any, ctx: _Context) -> Dict[str, Any]:
    """The model's own schema, its ``$defs`` lifted to the root (where its ``$ref``s point)."""
    s: Dict[str, Any] = _tidy(dict(tp.model_json_schema()))
    for k, v in (s.pop("$defs", None) or {}).items():
        if k in ctx.defs and ctx.defs[k] != v:
            raise Unsupported(f"two different models are named {k!r}")
        ctx.defs[k] = v
    return s


def _tidy(s: Any) -> Any:
    """A pydantic schema as toolselect infers one: its generated ``title``
    keys dropped (the model sees the property names) and every object with
    properties closed (``additionalProperties: false``), as dataclasses are,
    unless the model says otherwise. A property named "title" stays."""
    if isinstance(s, list):
        return [_tidy(x) for x in s]
    if not isinstance(s, dict):
        return s
    out: Dict[str, Any] = {}
    for k, v in s.items():
        if k == "title" and isinstance(v, str):
            continue
        if k in ("properties", "$defs", "definitions", "patternProperties") and isinstance(v, dict):
            out[k] = {name: _tidy(sub) for name, sub in v.items()}
        else:
            out[k] = _tidy(v)
    if "properties" in out and out.get("type") == "object" and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def _set_default(prop: Dict[str, Any], default: Any) -> None:
    """Write a parameter's default into its schema when JSON can hold it."""
    value = default.value if isinstance(default, enum.Enum) else default
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    elif isinstance(value, (tuple, set, frozenset)):
        value = list(value)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return  # optional all the same; the function supplies its own default
    prop["default"] = value


# -- from JSON to the annotated types ---------------------------------------------

def _converter(tp: Any) -> Optional[Converter]:
    """How to turn the decoded JSON for ``tp`` into ``tp``; None when it is already."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated or (_REQUIRED and origin in _REQUIRED):
        return _converter(args[0])
    if origin is typing.Literal:
        if any(isinstance(a, enum.Enum) for a in args):
            by_value = {a.value if isinstance(a, enum.Enum) else a: a for a in args}
            return lambda v: by_value.get(v, v)
        return None
    if origin is typing.Union or (_UnionType is not None and isinstance(tp, _UnionType)):
        members = [a for a in args if a is not _NoneType]
        inner = _converter(members[0]) if len(members) == 1 else None
        return None if inner is None else _or_none(inner)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp
    if tp is int:
        return _to_int
    if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        return _fixed_tuple([_converter(a) for a in args])
    if origin in (list, tuple, set, frozenset) or tp in (tuple, set, frozenset):
        make: Callable[[Any], Any] = origin or tp
        item = _converter(args[0]) if args else None
        if item is None:
            return None if make is list else make
        return _each(make, item)
    if origin in (collections.abc.Sequence, collections.abc.MutableSequence, collections.abc.Iterable,
                  collections.abc.Collection, collections.abc.Set, collections.abc.MutableSet):
        item = _converter(args[0]) if args else None
        return None if item is None else _each(list, item)
    if origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping):
        value = _converter(args[1]) if len(args) == 2 else None
        return None if value is None else _values(value)
    if _is_typeddict(tp):
        fields = _field_converters(typing.get_type_hints(tp).items())
        return _fields(dict, fields) if fields else None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return _fields(tp, _field_converters((f.name, hints.get(f.name, f.type)) for f in dataclasses.fields(tp)))
    if isinstance(tp, type) and tp in _PARSE:
        return _PARSE[tp]
    validate = getattr(tp, "model_validate", None)
    if isinstance(tp, type) and callable(validate):
        return validate  # type: ignore[no-any-return]
    return None


def _to_int(v: Any) -> Any:
    """An ``int`` parameter receives an ``int``: JSON Schema's "integer"
    admits ``1.0`` (and ``1e2``), which JSON decodes to a float, so an
    integral float is converted; any other float is refused."""
    if isinstance(v, float):
        if v.is_integer():
            return int(v)
        raise TypeError(f"expected an integer, got {v!r}")
    return v


def _or_none(inner: Converter) -> Converter:
    return lambda v: None if v is None else inner(v)


def _fixed_tuple(items: List[Optional[Converter]]) -> Converter:
    return lambda v: tuple(c(x) if c else x for c, x in zip(items, v))


def _each(make: Callable[[Any], Any], item: Converter) -> Converter:
    return lambda v: make(item(x) for x in v)


def _values(value: Converter) -> Converter:
    return lambda v: {k: value(x) for k, x in v.items()}


def _field_converters(fields: Any) -> Dict[str, Converter]:
    out: Dict[str, Converter] = {}
    for name, ann in fields:
        c = _converter(ann)
        if c is not None:
            out[name] = c
    return out


def _fields(make: Callable[..., Any], convs: Dict[str, Converter]) -> Converter:
    return lambda v: make(**{k: convs[k](x) if k in convs else x for k, x in v.items()})


def _converting(fn: Callable[..., Any], converters: Dict[str, Converter]) -> Callable[..., Any]:
    """``fn`` called with the arguments named in ``converters`` converted."""
    def call(**kwargs: Any) -> Any:
        for name, conv in converters.items():
            if name in kwargs:
                kwargs[name] = conv(kwargs[name])
        return fn(**kwargs)

    call.__name__ = getattr(fn, "__name__", "tool")
    call.__qualname__ = getattr(fn, "__qualname__", call.__name__)
    call.__doc__ = getattr(fn, "__doc__", None)
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


# -- docstrings ---------------------------------------------------------------------

# Google-style section headers ("Args:"); those that describe parameters or fields.
_GOOGLE_PARAMS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments",
                  "other parameters", "attributes"}
_GOOGLE_SECTIONS = _GOOGLE_PARAMS | {"returns", "return", "yields", "yield", "raises", "raise", "examples",
                                     "example", "note", "notes", "see also", "warning", "warnings", "todo",
                                     "references", "methods"}
_NUMPY_PARAMS = {"parameters", "other parameters", "attributes"}
_REST_PARAM = re.compile(r":(?:param|parameter|arg|argument|key|keyword|ivar|var)\s+(?:[^:]*\s)?\**(\w+)\s*:(.*)")
_REST_FIELD = re.compile(r":\w[^:]*:")
_DASHES = re.compile(r"-{3,}")


def parse_docstring(doc: str) -> Tuple[str, Dict[str, str]]:
    """A cleaned docstring's description (the text before its first
    section) and its parameters' descriptions, read from Google
    (``Args:``), NumPy (``Parameters`` over a dashed line) or reST
    (``:param name:``) sections."""
    lines = doc.splitlines()
    params: Dict[str, str] = {}
    end = len(lines)
    i = 0
    while i < len(lines):
        line, text = lines[i], lines[i].strip()
        indented = line[:1].isspace()
        if not indented and text and i + 1 < len(lines) and _DASHES.fullmatch(lines[i + 1].strip()):
            end = min(end, i)
            j = i + 2
            while j < len(lines) and not (lines[j].strip() and not lines[j][:1].isspace() and j + 1 < len(lines)
                                          and _DASHES.fullmatch(lines[j + 1].strip())):
                j += 1
            if text.lower() in _NUMPY_PARAMS:
                params.update(_numpy_params(lines[i + 2:j]))
            i = j
            continue
        if not indented and text.endswith(":") and text[:-1].strip().lower() in _GOOGLE_SECTIONS:
            end = min(end, i)
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j][:1].isspace()):
                j += 1
            if text[:-1].strip().lower() in _GOOGLE_PARAMS:
                params.update(_google_params(lines[i + 1:j]))
            i = j
            continue
        if not indented and _REST_FIELD.match(text):
            end = min(end, i)
            m = _REST_PARAM.match(text)
            j = i + 1
            while j < len(lines) and lines[j].strip() and not _REST_FIELD.match(lines[j].strip()):
                j += 1
            if m:
                params[m.group(1)] = _join([m.group(2)] + lines[i + 1:j])
            i = j
            continue
        i += 1
    return "\n".join(lines[:end]).strip(), params


def _join(parts: List[str]) -> str:
    return " ".join(p.strip() for p in parts if p.strip())


def _google_params(body: List[str]) -> Dict[str, str]:
    out: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for line in textwrap.dedent("\n".join(body)).splitlines():
        if line.strip() and not line[:1].isspace():
            m = re.match(r"\**(\w+)\s*(?:\([^)]*\))?\s*:(.*)", line)
            if m:
                current = m.group(1)
                out[current] = [m.group(2)]
                continue
        if current is not None:
            out[current].append(line)
    return {k: _join(v) for k, v in out.items()}


def _numpy_params(body: List[str]) -> Dict[str, str]:
    out: Dict[str, List[str]] = {}
    current: List[str] = []
    for line in textwrap.dedent("\n".join(body)).splitlines():
        if line.strip() and not line[:1].isspace():
            current = [n.strip().lstrip("*") for n in line.split(":", 1)[0].split(",") if n.strip()]
            for n in current:
                out[n] = []
        else:
            for n in current:
                out[n].append(line)
    return {k: _join(v) for k, v in out.items()}
