"""Write one release archive with the same bytes on every run (stdlib only).

    python3 packaging/archive.py --out dist/toolselect_0.1.0_linux_amd64.tar.gz \
        --dir toolselect_0.1.0_linux_amd64 bin/toolselect LICENSE README.md

Reproducible by construction, not by luck: entries in the order given, every
mtime SOURCE_DATE_EPOCH (else 2020-01-01), owner and group 0 with no names,
modes 0755 for executables and 0644 for the rest, and a gzip header with no
file name and a fixed time. `.tar.gz` and `.zip` (for Windows) are the two
formats; the archive holds one folder, --dir, with the files inside.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import sys
import tarfile
import time
import zipfile
from pathlib import Path


def epoch() -> int:
    """SOURCE_DATE_EPOCH (reproducible-builds.org), else 2020-01-01 UTC. A
    zip stores times from 1980 on, so earlier values are raised to it."""
    v = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if v and not v.isdigit():
        sys.exit(f"archive: SOURCE_DATE_EPOCH={v!r} is not a number of seconds")
    return max(int(v) if v else 1577836800, 315532800)


def mode(path: Path) -> int:
    return 0o755 if os.access(path, os.X_OK) and path.is_file() else 0o644


def write_tar_gz(out: Path, folder: str, files: "list[Path]", mtime: int) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        d = tarfile.TarInfo(folder)
        d.type, d.mode, d.mtime = tarfile.DIRTYPE, 0o755, mtime
        tar.addfile(d)
        for f in files:
            data = f.read_bytes()
            info = tarfile.TarInfo(f"{folder}/{f.name}")
            info.size, info.mode, info.mtime = len(data), mode(f), mtime
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    with open(out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=mtime, compresslevel=9) as gz:
        gz.write(buf.getvalue())


def write_zip(out: Path, folder: str, files: "list[Path]", mtime: int) -> None:
    stamp = time.gmtime(mtime)[:6]
    with zipfile.ZipFile(out, "w") as z:
        for f in files:
            info = zipfile.ZipInfo(f"{folder}/{f.name}", date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so the mode below is read
            info.external_attr = mode(f) << 16
            z.writestr(info, f.read_bytes(), compresslevel=9)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="the archive to write: NAME.tar.gz or NAME.zip")
    ap.add_argument("--dir", required=True, help="the one folder inside the archive")
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args()
    out = Path(args.out)
    for f in args.files:
        if not f.is_file():
            sys.exit(f"archive: {f} is not a file")
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.name.endswith(".tar.gz"):
        write_tar_gz(out, args.dir, args.files, epoch())
    elif out.suffix == ".zip":
        write_zip(out, args.dir, args.files, epoch())
    else:
        sys.exit(f"archive: {out.name}: want a .tar.gz or .zip name")
    print(out)


if __name__ == "__main__":
    main()
