"""Write the toolselect sdist: the Python package and the Go sources of its
library, for platforms with no wheel (macOS first), stdlib only.

    python3 python/build_sdist.py --out dist     # dist/toolselect-VERSION.tar.gz

`pip install toolselect-VERSION.tar.gz` runs setup.py, which builds the
library with the user's Go (`go build -buildmode=c-shared`, cgo and the
platform's C compiler) into the package as libtoolselect.dylib on macOS,
toolselect.dll on Windows, libtoolselect.so elsewhere. The Go sources are the
packages ./cabi links on Linux, macOS and Windows (`go list -deps`), with
go.mod, go.sum, LICENSE and the NOTICE files, under go/ in the archive; Go
fetches the modules go.sum pins through its module proxy (no vendored copy).
The archive's bytes are the same on every run (fixed order, times, owners).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import build_wheel  # noqa: E402 - beside this script: the one version() and METADATA

MODULE = "github.com/toolselect/toolselect"


def go_sources(go: str) -> "list[str]":
    """Every file the library's build reads, relative to the module root."""
    files = {"go.mod", "go.sum", "LICENSE", "VERSION", "BUILDTAGS"}
    for goos in ("linux", "darwin", "windows"):
        env = dict(os.environ, CGO_ENABLED="1", GOOS=goos, GOARCH="amd64", GOFLAGS="-mod=mod")
        out = subprocess.run([go, "list", "-deps", "-json=Dir,ImportPath,Module,GoFiles,CgoFiles,HFiles,CFiles,EmbedFiles",
                              "./cabi"], cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout
        dec = json.JSONDecoder()
        pos = 0
        while pos < len(out):
            while pos < len(out) and out[pos].isspace():
                pos += 1
            if pos >= len(out):
                break
            pkg, pos = dec.raw_decode(out, pos)
            if not (pkg.get("Module") or {}).get("Main"):
                continue
            rel = Path(pkg["Dir"]).relative_to(ROOT)
            for key in ("GoFiles", "CgoFiles", "HFiles", "CFiles", "EmbedFiles"):
                files.update((rel / f).as_posix() for f in pkg.get(key) or [])
            if (ROOT / rel / "NOTICE").is_file():
                files.add((rel / "NOTICE").as_posix())
    return sorted(files)


def python_sources() -> "list[str]":
    files = ["pyproject.toml", "setup.py", "README.md"]
    for p in sorted((HERE / "toolselect").rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".typed"):
            files.append(p.relative_to(HERE).as_posix())
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "dist"))
    args = ap.parse_args()
    go = os.environ.get("GO") or "go"
    ver = build_wheel.version()
    top = f"toolselect-{ver}"
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH") or 1577836800)
    entries: "list[tuple[str, bytes]]" = []
    readme = (HERE / "README.md").read_text() if (HERE / "README.md").is_file() else ""
    entries.append((f"{top}/PKG-INFO", (
        "Metadata-Version: 2.1\n"
        f"Name: toolselect\nVersion: {ver}\n"
        "Summary: LLM tool selection with strict schema checks, backed by a Go shared library\n"
        "Requires-Python: >=3.9\nLicense: Apache-2.0\n"
        "Description-Content-Type: text/markdown\n\n" + readme).encode()))
    for rel in python_sources():
        entries.append((f"{top}/{rel}", (HERE / rel).read_bytes()))
    entries.append((f"{top}/toolselect/VERSION", (ver + "\n").encode()))
    for rel in go_sources(go):
        entries.append((f"{top}/go/{rel}", (ROOT / rel).read_bytes()))

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, mtime
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sdist = out / f"{top}.tar.gz"
    with open(sdist, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=mtime) as gz:
        gz.write(buf.getvalue())
    print(f"{sdist.name}: {len(entries)} files, {sdist.stat().st_size / 1e6:.1f} MB", file=sys.stderr)
    print(sdist)


if __name__ == "__main__":
    main()
