"""`make npm`: the npm packages of the command, as tarballs in dist/npm/.

    python3 packaging/npm.py --dist dist          # after `make release`

One package per platform holds the binary taken from that platform's release
archive in --dist (so npm ships the bytes SHA256SUMS lists), with `os` and
`cpu` fields that make npm install it only there:

    @toolselect/linux-x64  @toolselect/linux-arm64  @toolselect/darwin-x64
    @toolselect/darwin-arm64  @toolselect/win32-x64

and the main package `toolselect` lists them all as optional dependencies of
the same version; its `bin` (packaging/npm/toolselect.js) runs the one npm
installed, or says which platforms have one. This is how esbuild, Biome and
Turborepo ship Go and Rust binaries: `npx -y toolselect mcp` downloads only
the main package and this machine's binary. NPM_PLATFORMS (for example
"linux-x64") limits the platform packages written, for tests; the main
package lists all five either way.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# npm's platform name -> (the release archive's GOOS_GOARCH, the npm os, the npm cpu).
PLATFORMS = {
    "linux-x64": ("linux_amd64", "linux", "x64"),
    "linux-arm64": ("linux_arm64", "linux", "arm64"),
    "darwin-x64": ("darwin_amd64", "darwin", "x64"),
    "darwin-arm64": ("darwin_arm64", "darwin", "arm64"),
    "win32-x64": ("windows_amd64", "win32", "x64"),
}
REPOSITORY = "https://github.com/toolselect/toolselect"
DESCRIPTION = "toolselect: decides which tools an LLM agent should call; an MCP proxy (toolselect mcp) in front of large tool catalogs"


def binary_from_archive(dist: Path, version: str, goplat: str) -> "tuple[str, bytes]":
    """The command's file name and bytes, read from the release archive."""
    name = f"toolselect_{version}_{goplat}"
    if goplat.startswith("windows"):
        path = dist / f"{name}.zip"
        if not path.is_file():
            sys.exit(f"npm: {path} is missing; run `make release` first")
        with zipfile.ZipFile(path) as z:
            return "toolselect.exe", z.read(f"{name}/toolselect.exe")
    path = dist / f"{name}.tar.gz"
    if not path.is_file():
        sys.exit(f"npm: {path} is missing; run `make release` first")
    with tarfile.open(path) as t:
        f = t.extractfile(f"{name}/toolselect")
        assert f is not None
        return "toolselect", f.read()


def write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n")


def pack(stage: Path, out: Path, npm: str) -> Path:
    r = subprocess.run([npm, "pack", "--silent", "--pack-destination", str(out)], cwd=stage,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"npm: npm pack in {stage} failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    return out / r.stdout.strip().splitlines()[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dist", default=str(ROOT / "dist"), help="where `make release` wrote the archives")
    ap.add_argument("--out", help="where the tarballs go (default: DIST/npm)")
    args = ap.parse_args()
    npm = shutil.which("npm")
    if not npm:
        sys.exit("npm: needs npm (apt-get install -y npm)")
    dist = Path(args.dist)
    out = Path(args.out) if args.out else dist / "npm"
    version = (ROOT / "VERSION").read_text().strip()
    only = os.environ.get("NPM_PLATFORMS", "").split() or list(PLATFORMS)
    for p in only:
        if p not in PLATFORMS:
            sys.exit(f"npm: NPM_PLATFORMS names {p!r}; the platforms are {', '.join(PLATFORMS)}")
    # A fresh staging folder per run: two runs (a test beside `make npm`) never share one.
    stage_root = Path(tempfile.mkdtemp(prefix="toolselect-npm-"))
    try:
        written = stage_and_pack(stage_root, dist, out, version, only, npm)
    finally:
        shutil.rmtree(stage_root, ignore_errors=True)
    for w in written:
        print(w)


def stage_and_pack(stage_root: Path, dist: Path, out: Path, version: str, only: "list[str]", npm: str) -> "list[Path]":
    """Write each package's folder under stage_root, then npm pack it into out."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob(f"*-{version}.tgz"):
        old.unlink()
    common = {"version": version, "license": "Apache-2.0", "homepage": REPOSITORY,
              "repository": {"type": "git", "url": f"git+{REPOSITORY}.git"}}
    written = []
    for plat in only:
        goplat, npm_os, cpu = PLATFORMS[plat]
        stage = stage_root / plat
        (stage / "bin").mkdir(parents=True)
        exe, data = binary_from_archive(dist, version, goplat)
        (stage / "bin" / exe).write_bytes(data)
        (stage / "bin" / exe).chmod(0o755)
        shutil.copyfile(ROOT / "LICENSE", stage / "LICENSE")
        (stage / "README.md").write_text(
            f"# @toolselect/{plat}\n\nThe `toolselect` binary for {npm_os} {cpu}. Install the "
            f"[toolselect]({REPOSITORY}) package instead: it picks this one on this platform.\n")
        write_json(stage / "package.json", {
            "name": f"@toolselect/{plat}", **common,
            "description": f"The toolselect binary for {npm_os} {cpu}",
            "os": [npm_os], "cpu": [cpu], "files": [f"bin/{exe}"],
            "preferUnplugged": True,
        })
        written.append(pack(stage, out, npm))

    main_stage = stage_root / "toolselect"
    (main_stage / "bin").mkdir(parents=True)
    shutil.copyfile(HERE / "npm" / "toolselect.js", main_stage / "bin" / "toolselect.js")
    (main_stage / "bin" / "toolselect.js").chmod(0o755)
    shutil.copyfile(ROOT / "LICENSE", main_stage / "LICENSE")
    shutil.copyfile(ROOT / "README.md", main_stage / "README.md")
    write_json(main_stage / "package.json", {
        "name": "toolselect", **common, "description": DESCRIPTION,
        "bin": {"toolselect": "bin/toolselect.js"},
        "files": ["bin/toolselect.js"],
        "engines": {"node": ">=16"},
        "optionalDependencies": {f"@toolselect/{p}": version for p in PLATFORMS},
    })
    written.append(pack(main_stage, out, npm))
    return written


if __name__ == "__main__":
    main()
