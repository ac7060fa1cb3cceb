"""The package's version: toolselect's one VERSION file.

`make python` and the wheel build put a copy of the repository's VERSION
file beside this module; in a source checkout without it, the repository's
own file is read. The loader compares it with the library's version."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def _read() -> str:
    for p in (_HERE / "VERSION", _HERE.parent.parent / "VERSION"):
        try:
            v = p.read_text().strip()
        except OSError:
            continue
        if v:
            return v
    return "0+unknown"


#: The release this package was written for.
__version__ = _read()
#: The C ABI this package was written for (cabi/internal/capi.ABIVersion).
ABI_VERSION = 3
