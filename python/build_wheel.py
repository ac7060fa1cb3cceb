"""Write the toolselect platform wheel by hand (PEP 427), stdlib only.

The wheel holds the pure-Python package and the Go shared library; the tag is
py3-none-<platform> because the library does not depend on the Python ABI.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import re
import sys
import sysconfig
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PKG = HERE / "toolselect"
NAME = "toolselect"


def version() -> str:
    """The one version: the repository's VERSION file."""
    v = (HERE.parent / "VERSION").read_text().strip()
    if not re.fullmatch(r"\d+(\.\d+)*([a-z0-9.+-]*)", v):
        sys.exit(f"build_wheel: VERSION holds {v!r}, not a version")
    return v


def platform_tag() -> str:
    return re.sub(r"[^a-zA-Z0-9]", "_", sysconfig.get_platform())


def record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=str(HERE.parent / "dist"))
    args = ap.parse_args()
    lib = PKG / "libtoolselect.so"
    if not lib.is_file():
        sys.exit(f"build_wheel: {lib} is missing; run `make lib` first")
    ver, tag = version(), f"py3-none-{platform_tag()}"
    dist_info = f"{NAME}-{ver}.dist-info"
    readme = (HERE / "README.md").read_text() if (HERE / "README.md").is_file() else ""
    files = {}
    for p in sorted(PKG.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".h"):
            files[f"{NAME}/{p.relative_to(PKG).as_posix()}"] = p.read_bytes()
    files[f"{dist_info}/METADATA"] = (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\nVersion: {ver}\n"
        "Summary: LLM tool selection with strict schema checks, backed by a Go shared library\n"
        "Requires-Python: >=3.9\nLicense: Apache-2.0\n"
        "Classifier: Programming Language :: Python :: 3\nClassifier: Typing :: Typed\n"
        "Description-Content-Type: text/markdown\n\n" + readme
    ).encode()
    files[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: toolselect build_wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n"
    ).encode()
    files[f"{dist_info}/top_level.txt"] = f"{NAME}\n".encode()
    record = [record_line(p, d) for p, d in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{NAME}-{ver}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if path.endswith(".so") else 0o644) << 16
            z.writestr(info, data)
    print(wheel)


if __name__ == "__main__":
    main()
