"""Write a toolselect platform wheel by hand (PEP 427), stdlib only.

The wheel holds the pure-Python package and one Go shared library. Its tag is
py3-none-manylinux_2_N_<arch>: the library does not depend on the Python ABI,
<arch> is read from the library's ELF header, and N is the highest GLIBC_2.N
symbol version the library needs, read from its symbol table
(elf_glibc.py): an installer on an older glibc refuses the wheel instead of
failing at load time. A Windows library (toolselect.dll, a PE32+ x86-64 DLL)
makes a py3-none-win_amd64 wheel.

    python3 python/build_wheel.py --lib .cache/wheel/aarch64/libtoolselect.so --out dist
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import re
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import elf_glibc  # noqa: E402 - beside this script
PKG = HERE / "toolselect"
NAME = "toolselect"


def version() -> str:
    """The one version: the repository's VERSION file."""
    v = (HERE.parent / "VERSION").read_text().strip()
    if not re.fullmatch(r"\d+(\.\d+)*([a-z0-9.+-]*)", v):
        sys.exit(f"build_wheel: VERSION holds {v!r}, not a version")
    return v


def platform_tag(lib: Path) -> "tuple[str, str]":
    """The manylinux (or win_amd64) tag of lib, and a line saying why."""
    if lib.suffix == ".dll":
        data = lib.read_bytes()[:4096]
        pe = int.from_bytes(data[0x3C:0x40], "little") if data[:2] == b"MZ" else -1
        if pe < 0 or data[pe:pe + 4] != b"PE\0\0" or data[pe + 4:pe + 6] != b"\x64\x86":
            sys.exit(f"build_wheel: {lib} is not an x86-64 Windows DLL (PE32+, machine 0x8664)")
        return "win_amd64", "Windows x86-64 (PE32+ DLL)"
    arch, needs = elf_glibc.glibc_needs(str(lib))
    major, minor = elf_glibc.max_glibc(needs)
    top = f"GLIBC_{major}.{minor}"
    why = f"glibc {major}.{minor} ({top}: {', '.join(sorted(needs.get(top, []))) or 'no symbol'})"
    return f"manylinux_{major}_{minor}_{arch}", why


def record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=str(HERE.parent / "dist"))
    ap.add_argument("--lib", default=str(PKG / "libtoolselect.so"), help="the shared library to ship")
    args = ap.parse_args()
    lib = Path(args.lib)
    if not lib.is_file():
        sys.exit(f"build_wheel: {lib} is missing; run `make lib` first")
    plat, why = platform_tag(lib)
    ver, tag = version(), f"py3-none-{plat}"
    dist_info = f"{NAME}-{ver}.dist-info"
    readme = (HERE / "README.md").read_text() if (HERE / "README.md").is_file() else ""
    files = {}
    for p in sorted(PKG.rglob("*")):
        if (p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".h", ".so")
                and p.suffix not in (".dll", ".dylib") and p.name != "VERSION"):
            files[f"{NAME}/{p.relative_to(PKG).as_posix()}"] = p.read_bytes()
    lib_name = "toolselect.dll" if plat == "win_amd64" else "libtoolselect.so"
    files[f"{NAME}/{lib_name}"] = lib.read_bytes()
    files[f"{NAME}/VERSION"] = (ver + "\n").encode()
    files[f"{dist_info}/METADATA"] = (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\nVersion: {ver}\n"
        "Summary: LLM tool selection with strict schema checks, backed by a Go shared library\n"
        "Requires-Python: >=3.9\nLicense: Apache-2.0\n"
        "Classifier: Programming Language :: Python :: 3\n"
        + ("Classifier: Operating System :: Microsoft :: Windows\n" if plat == "win_amd64"
           else "Classifier: Operating System :: POSIX :: Linux\n") +
        "Classifier: Typing :: Typed\n"
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
            info.external_attr = (0o755 if path.endswith((".so", ".dll")) else 0o644) << 16
            z.writestr(info, data)
    print(f"{wheel.name}: tag {tag}, library needs {why}, {wheel.stat().st_size / 1e6:.1f} MB", file=sys.stderr)
    print(wheel)


if __name__ == "__main__":
    main()
