"""`pip install ./python` from a source checkout, or `pip install
toolselect-VERSION.tar.gz` (the sdist, python/build_sdist.py), where Go is
installed.

The metadata is in pyproject.toml. This file only makes the build complete:
it copies the repository's VERSION file into the package (the one version),
and builds the Go shared library into it when it is not there yet (`make
python` builds the same file, with the same flags): libtoolselect.so on
Linux, libtoolselect.dylib on macOS, toolselect.dll on Windows. The Go
sources are the checkout around this folder, or the sdist's go/ folder. Go
is the `GO` environment variable, else `go` on PATH; without it the build
stops naming Go's install page. Wheels for distribution come from `make
wheel` (build_wheel.py), not from here."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PKG = HERE / "toolselect"
# The sdist carries the Go module under go/; a checkout has it one level up.
GO_ROOT = HERE / "go" if (HERE / "go" / "go.mod").is_file() else HERE.parent

if (GO_ROOT / "VERSION").is_file():
    shutil.copyfile(GO_ROOT / "VERSION", PKG / "VERSION")

sys.path.insert(0, str(HERE))
from toolselect._lib import LIBRARY_NAME  # noqa: E402 - the loader's own name for this platform


def find_go() -> str:
    go = os.environ.get("GO") or shutil.which("go")
    if not go or not shutil.which(go):
        named = f"GO={os.environ['GO']} is not an executable" if os.environ.get("GO") else "`go` is not on PATH"
        sys.exit(f"toolselect: building from source compiles the Go library ({LIBRARY_NAME}) with Go 1.26 or newer "
                 f"and a C compiler (cgo), and {named}. Install Go from https://go.dev/doc/install, then run pip "
                 f"again (or install a wheel: Linux x86-64 and aarch64, Windows x86-64).")
    return go


def build_tags() -> str:
    """The Go build tags of every artefact: BUILDTAGS's first line that is not a comment (the file says why)."""
    for line in (GO_ROOT / "BUILDTAGS").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            return line.strip()
    sys.exit(f"toolselect: {GO_ROOT / 'BUILDTAGS'} names no build tags")


class BuildWithGo(build_py):
    """build_py that first builds the library with Go when missing."""

    def run(self) -> None:
        lib = PKG / LIBRARY_NAME
        if not lib.is_file():
            cmd = [find_go(), "build", "-buildmode=c-shared", "-trimpath", "-tags", build_tags(),
                   "-ldflags=-s -w", "-o", str(lib), "./cabi"]
            r = subprocess.run(cmd, cwd=GO_ROOT, env=dict(os.environ, CGO_ENABLED="1"))
            if r.returncode != 0:
                sys.exit(f"toolselect: `{' '.join(cmd)}` in {GO_ROOT} failed (exit {r.returncode}, its output is "
                         "above): cgo needs a C compiler (Xcode's command line tools on macOS: xcode-select "
                         "--install; gcc or clang elsewhere), and Go fetches the modules go.sum pins from its "
                         "module proxy")
            header = lib.with_suffix(".h")
            if header.exists():
                header.unlink()
        super().run()


class BinaryDistribution(Distribution):
    """The wheel holds a native library: tag it for this platform, not py3-none-any."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildWithGo}, distclass=BinaryDistribution)
