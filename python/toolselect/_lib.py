"""The one place that loads libtoolselect and declares its C signatures.

The library is found through the ``TOOLSELECT_LIBRARY`` environment variable,
else the copy shipped inside this package. It is loaded lazily, once per
process, and never unloaded. Every string the library returns is C memory
that :func:`call` frees with ``toolselect_free``; return pointers are declared
``c_void_p`` because a ``c_char_p`` restype would copy and leak.

After ``os.fork()`` in a process that already loaded the library, the Go
runtime in the child is unusable (calls that need the Go garbage collector or
timers hang), so every call in the child raises :class:`ForkedProcessError`.
Use the ``spawn`` or ``forkserver`` start methods of :mod:`multiprocessing`.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
from ctypes import POINTER, byref, c_char_p, c_int, c_uint64, c_void_p
from pathlib import Path
from typing import Any, Callable, Optional, Union

from . import _version
from .errors import ForkedProcessError, LibraryNotFoundError, LibraryVersionError, error_from_body

ENV_LIBRARY = "TOOLSELECT_LIBRARY"


def library_name(platform: str = sys.platform) -> str:
    """The library's file name on a platform (a ``sys.platform`` value): what
    ``go build -buildmode=c-shared`` is told to write there, and what the wheel
    or the sdist's build puts beside this file."""
    if platform == "win32":
        return "toolselect.dll"
    if platform == "darwin":
        return "libtoolselect.dylib"
    return "libtoolselect.so"


LIBRARY_NAME = library_name()

_out = POINTER(c_void_p)

# name -> (argtypes, restype); mirrors cabi/toolselect.h one line per prototype.
_SIGNATURES = {
    "toolselect_version": ([_out], c_int),
    "toolselect_telemetry_flush": ([_out], c_int),
    "toolselect_free": ([c_void_p], c_int),
    "toolselect_stats": ([_out], c_int),
    "toolselect_echo": ([c_char_p, _out], c_int),
    "toolselect_registry_new": ([c_char_p, _out], c_int),
    "toolselect_registry_register": ([c_uint64, c_char_p, _out], c_int),
    "toolselect_registry_load_catalog": ([c_uint64, c_char_p, _out], c_int),
    "toolselect_registry_load_catalog_file": ([c_uint64, c_char_p, _out], c_int),
    "toolselect_registry_schema": ([c_uint64, _out], c_int),
    "toolselect_registry_view": ([c_uint64, c_char_p, _out], c_int),
    "toolselect_registry_validate": ([c_uint64, c_char_p, c_char_p, _out], c_int),
    "toolselect_registry_authorize": ([c_uint64, c_char_p, c_char_p, _out], c_int),
    "toolselect_registry_rank": ([c_uint64, c_char_p, c_uint64, _out], c_int),
    "toolselect_registry_close": ([c_uint64, _out], c_int),
    "toolselect_config_schema": ([_out], c_int),
    "toolselect_config_unknown_env": ([c_char_p, _out], c_int),
    "toolselect_selector_new": ([c_char_p, _out], c_int),
    "toolselect_selector_select": ([c_uint64, c_uint64, c_char_p, c_uint64, _out], c_int),
    "toolselect_selector_close": ([c_uint64, _out], c_int),
    "toolselect_selector_add_feedback": ([c_uint64, c_char_p, _out], c_int),
    "toolselect_session_begin": ([c_uint64, c_uint64, c_char_p, _out], c_int),
    "toolselect_session_feed": ([c_uint64, c_char_p, _out], c_int),
    "toolselect_session_close": ([c_uint64, _out], c_int),
    "toolselect_cancel_new": ([_out], c_int),
    "toolselect_cancel": ([c_uint64, _out], c_int),
    "toolselect_cancel_close": ([c_uint64, _out], c_int),
    "toolselect_fake_model_new": ([c_char_p, _out], c_int),
    "toolselect_fake_model_requests": ([c_uint64, _out], c_int),
    "toolselect_fake_model_close": ([c_uint64, _out], c_int),
    "toolselect_eval_select": ([c_uint64, c_char_p, c_uint64, _out], c_int),
}

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_loaded_pid: Optional[int] = None
_forked = False


def _after_fork_in_child() -> None:
    global _forked
    if _lib is not None:
        _forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def library_path() -> Path:
    """The path the library is (or would be) loaded from."""
    env = os.environ.get(ENV_LIBRARY)
    if env:
        return Path(env)
    return Path(__file__).resolve().with_name(LIBRARY_NAME)


def _check_fork() -> None:
    if _forked or (_loaded_pid is not None and os.getpid() != _loaded_pid):
        raise ForkedProcessError(
            "toolselect: this process was forked after the Go library was loaded "
            f"(loaded in pid {_loaded_pid}, now pid {os.getpid()}); the Go runtime "
            "does not survive fork(). Use multiprocessing's 'spawn' or 'forkserver' "
            "start method, or import toolselect only in the children."
        )


def lib() -> ctypes.CDLL:
    """Load the library on first use (thread-safe) and return it."""
    if _lib is not None:
        if _forked:
            _check_fork()
        return _lib
    return _load()


def _load() -> ctypes.CDLL:
    global _lib, _loaded_pid
    with _lock:
        if _lib is not None:
            return _lib
        path = library_path()
        if not path.is_file():
            raise LibraryNotFoundError(_missing_message(path))
        try:
            handle = ctypes.CDLL(str(path))
        except OSError as e:
            raise LibraryNotFoundError(f"toolselect: cannot load {path}: {e}{_why_not_loaded(path, str(e))}") from e
        # The version first: toolselect_version and toolselect_free are in
        # every release, so a library from before an export this package
        # needs is refused naming both versions, not a missing symbol.
        _check_version(handle, path)
        for name, (argtypes, restype) in _SIGNATURES.items():
            fn = getattr(handle, name)
            fn.argtypes = argtypes
            fn.restype = restype
        _loaded_pid = os.getpid()
        _lib = handle
        _telemetry_at_exit()
        return handle


def _package_dir() -> Path:
    return Path(_version.__file__).resolve().parent


def _check_version(handle: ctypes.CDLL, path: Path) -> None:
    """Refuse a library of another release or C ABI than this package's (a
    stale TOOLSELECT_LIBRARY or build, a mixed install), naming both files
    and both versions, and the exports it lacks."""
    pkg = _package_dir()
    ours = f"version {_version.__version__} (C ABI {_version.ABI_VERSION})"
    missing = [name for name in _SIGNATURES if not hasattr(handle, name)]
    if "toolselect_version" in missing or "toolselect_free" in missing:
        raise LibraryNotFoundError(
            f"toolselect: {path} has no toolselect_version: it is not a toolselect library, but the package at "
            f"{pkg} is {ours} and needs its {LIBRARY_NAME}{_how_to_get()}")
    for name in ("toolselect_version", "toolselect_free"):
        fn = getattr(handle, name)
        fn.argtypes, fn.restype = _SIGNATURES[name]
    out = c_void_p()
    rc = handle.toolselect_version(byref(out))
    try:
        info = json.loads(ctypes.string_at(out.value)) if rc == 0 and out.value else {}
    finally:
        if out.value:
            handle.toolselect_free(out.value)
    lib_version, lib_abi = info.get("version", "?"), info.get("abi", "?")
    theirs = f"version {lib_version} (C ABI {lib_abi})"
    lacks = f"; it lacks {', '.join(missing)}, which this package calls" if missing else ""
    fix = (f": install the wheel that matches, rebuild the library (`make python`), or unset {ENV_LIBRARY} "
           "if it points at an old build")
    if lib_version != _version.__version__ or lib_abi != _version.ABI_VERSION:
        raise LibraryVersionError(
            f"toolselect: the library {path} is {theirs}, but the package at {pkg} is {ours}{lacks}{fix}")
    if missing:
        raise LibraryVersionError(
            f"toolselect: the library {path} says it is {theirs}, as the package at {pkg} is, yet it lacks "
            f"{', '.join(missing)}, which this package calls: it was built from other sources than this "
            f"version's{fix}")


def _missing_message(path: Path) -> str:
    """What a missing library means: what this package needs (the machine's
    architecture and glibc, and the wheel it was installed from, if any) and
    how to get it."""
    import platform
    where = f"{path} ({ENV_LIBRARY} names it)" if os.environ.get(ENV_LIBRARY) else str(path)
    arch = platform.machine() or "this architecture"
    libc, libc_version = platform.libc_ver()
    have = f"glibc {libc_version}" if libc == "glibc" and libc_version else "no glibc found"
    msg = (f"toolselect: the shared library is not at {where}. This package needs a {LIBRARY_NAME} built for "
           f"this machine, {platform.system() or 'an unknown system'} {arch} with {have}")
    tag = _wheel_tag()
    if tag:
        import re
        m = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", tag)
        built = f" (built for {m.group(3)} Linux with glibc {m.group(1)}.{m.group(2)} or newer)" if m else ""
        msg += (f"; the package was installed from a wheel tagged {tag}{built}, whose library is gone "
                f"(reinstall it: pip install --force-reinstall)")
    return msg + _how_to_get(arch)


def _how_to_get(arch: str = "") -> str:
    import platform
    arch = arch or platform.machine() or "ARCH"
    return (f". Get one: pip install the toolselect wheel for this platform (`make wheel` writes "
            f"dist/toolselect-VERSION-py3-none-manylinux_2_N_{arch}.whl; then "
            f"`pip install --no-index --find-links dist toolselect`), point {ENV_LIBRARY} at a {LIBRARY_NAME} "
            f"of version {_version.__version__}, or run `make python` in a source checkout (Go and a C compiler "
            f"build it for this machine)")


def _wheel_tag() -> str:
    """The platform tag of the wheel this package was installed from ('' in
    a source checkout): the WHEEL file of its dist-info."""
    pkg = _package_dir()
    ours = pkg.parent / f"toolselect-{_version.__version__}.dist-info"
    for info in [ours] + sorted(pkg.parent.glob("toolselect-*.dist-info")):
        try:
            for line in (info / "WHEEL").read_text().splitlines():
                if line.startswith("Tag:"):
                    return line.split(":", 1)[1].strip().rsplit("-", 1)[-1]
        except OSError:
            continue
    return ""


#: ELF e_machine values of the architectures a wheel is built for.
_ELF_MACHINES = {3: "x86 (32-bit)", 62: "x86_64", 183: "aarch64", 40: "arm (32-bit)", 243: "riscv64"}


def _why_not_loaded(path: Path, err: str) -> str:
    """Explain a load failure: the glibc the library needs, or the
    architecture it was built for."""
    import platform
    import re
    m = re.search(r"GLIBC_(\d+\.\d+)' not found", err)
    if m:
        libc = platform.libc_ver()
        have = f"{libc[0]} {libc[1]}" if libc[0] else "an older or non-glibc C library"
        return (f" (the library needs glibc {m.group(1)} or newer; this system has {have}: install a wheel whose "
                f"manylinux tag fits, or build the library here with `make python`)")
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return ""
    if head[:4] != b"\x7fELF":
        return " (the file is not an ELF shared library)"
    machine = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
    built = _ELF_MACHINES.get(machine, f"ELF machine {machine}")
    here = platform.machine()
    if built != here and not (built == "x86_64" and here in ("AMD64", "x86_64")):
        return f" (the library was built for {built}; this machine is {here}: install the {here} wheel)"
    return ""


def _telemetry_at_exit() -> None:
    """Export what the library's OpenTelemetry providers still hold when the
    interpreter exits (the library set them up from the OTEL_* environment
    when it loaded, traces and metrics alike; it is never unloaded, so nothing
    else would). Which variables turn export on is the library's rule alone:
    without any, the flush has nothing to do."""
    import atexit

    def flush() -> None:
        if _lib is not None and _loaded_pid == os.getpid():
            try:
                raw_call("toolselect_telemetry_flush")
            except Exception:  # noqa: BLE001 - never fail the interpreter's exit
                pass

    atexit.register(flush)


Arg = Union[str, bytes, None]


def cstr(s: Arg) -> Optional[bytes]:
    """Encode a string argument for the C side (bytes pass through as given)."""
    if s is None or isinstance(s, bytes):
        return s
    return s.encode("utf-8", "surrogatepass")


def raw_call(name: str, *args: Any) -> "tuple[int, bytes]":
    """Call an export; return its code and body. The body is copied and the
    C string freed before this returns."""
    fn: Callable[..., int] = getattr(lib(), name)  # lib() refuses a forked child
    out = c_void_p()
    rc = fn(*args, byref(out))
    p = out.value
    if not p:
        return rc, b""
    try:
        return rc, ctypes.string_at(p)
    finally:
        _lib.toolselect_free(p)  # type: ignore[union-attr]


def _checked(name: str, *args: Any) -> bytes:
    """Call an export and return its body, or raise the matching
    :class:`~toolselect.errors.ToolSelectError`."""
    rc, body = raw_call(name, *args)
    if rc != 0:
        raise error_from_body(rc, body)
    return body


def call(name: str, *args: Any) -> Any:
    """Call an export and return its decoded JSON result, or raise the
    matching :class:`~toolselect.errors.ToolSelectError`."""
    return json.loads(_checked(name, *args))


def call_text(name: str, *args: Any) -> str:
    """Like :func:`call` but returns the JSON result as text."""
    return _checked(name, *args).decode("utf-8")


def version() -> "dict[str, Any]":
    """The library's version, its Go version and its ABI version."""
    out: "dict[str, Any]" = call("toolselect_version")
    return out


def stats() -> "dict[str, Any]":
    """Open handles per kind and returned strings not yet freed (leak checks)."""
    out: "dict[str, Any]" = call("toolselect_stats")
    return out
