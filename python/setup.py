"""`pip install ./python` from a source checkout where Go is installed.

The metadata is in pyproject.toml. This file only makes the build complete:
it copies the repository's VERSION file into the package (the one version),
and builds the Go shared library into it when it is not there yet (`make
python` builds the same file, with the same flags). Wheels for distribution
come from `make wheel` (build_wheel.py), not from here."""

import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PKG = HERE / "toolselect"

if (ROOT / "VERSION").is_file():
    shutil.copyfile(ROOT / "VERSION", PKG / "VERSION")


class BuildWithGo(build_py):
    """build_py that first builds libtoolselect.so with Go when missing."""

    def run(self) -> None:
        lib = PKG / "libtoolselect.so"
        if not lib.is_file():
            go = shutil.which("go") or "/usr/local/go/bin/go"
            subprocess.run([go, "build", "-buildmode=c-shared", "-tags", "netgo,osusergo", "-ldflags=-s -w",
                            "-o", str(lib), "./cabi"], cwd=ROOT, check=True)
            header = PKG / "libtoolselect.h"
            if header.exists():
                header.unlink()
        super().run()


setup(cmdclass={"build_py": BuildWithGo})
