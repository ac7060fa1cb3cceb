"""What the loader says when the library is not the one the package needs
(so the message says how to fix it): a missing library gets what the package needs (this machine's
architecture and glibc) and how to get it; a stale library, one from before an
export the package calls, is refused with both versions and both files named,
and the exports it lacks, not with a bare missing symbol. The stand-in
libraries are a few lines of C, so these run in a second."""

import os
import platform
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from toolselect import _version

PY_DIR = Path(__file__).resolve().parents[1]
PKG_DIR = PY_DIR / "toolselect"

# A library that has toolselect_version and toolselect_free and nothing else
# (EXTRA adds more), and says it is VERSION with C ABI ABI.
FAKE = r"""
#include <stdlib.h>
#include <string.h>
int toolselect_free(char *p) { free(p); return 0; }
int toolselect_version(char **out) {
    const char *v = "{\"abi\":" ABI ",\"go\":\"go1\",\"version\":\"" VERSION "\"}";
    *out = malloc(strlen(v) + 1);
    strcpy(*out, v);
    return 0;
}
EXTRA
"""


def load(lib: Path) -> subprocess.CompletedProcess:
    """Import the package in a fresh interpreter with TOOLSELECT_LIBRARY=lib
    and make a first call."""
    env = dict(os.environ, PYTHONPATH=str(PY_DIR), TOOLSELECT_LIBRARY=str(lib))
    return subprocess.run([sys.executable, "-c", "import toolselect; toolselect.version()"], capture_output=True,
                          text=True, env=env, cwd=PY_DIR, timeout=60)


class MissingLibraryTest(unittest.TestCase):
    def test_a_missing_library_says_what_the_package_needs_and_how_to_get_it(self):
        lib = Path(tempfile.gettempdir()) / "no-such-dir" / "libtoolselect.so"
        r = load(lib)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("LibraryNotFoundError", r.stderr)
        libc, libc_version = platform.libc_ver()
        for want in (str(lib), "TOOLSELECT_LIBRARY", platform.machine(), f"glibc {libc_version}",
                     "pip install --no-index --find-links dist toolselect",
                     f"manylinux_2_N_{platform.machine()}.whl", "make python"):
            self.assertIn(want, r.stderr)


@unittest.skipUnless(shutil.which("gcc") or shutil.which("cc"), "needs a C compiler for the stand-in libraries")
class StaleLibraryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="ts-loader-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def fake(self, version: str, abi: int, extra: str = "", name: str = "libtoolselect.so") -> Path:
        src = self.tmp / (name + ".c")
        src.write_text(FAKE.replace("EXTRA", extra))
        lib = self.tmp / name
        subprocess.run([shutil.which("gcc") or "cc", "-shared", "-fPIC", "-o", str(lib), str(src),
                        f'-DVERSION="{version}"', f'-DABI="{abi}"'], check=True)
        return lib

    def test_a_library_from_before_an_export_is_refused_naming_both_versions(self):
        # What a libtoolselect.so built before toolselect_registry_authorize
        # says: the same release number (VERSION moves at releases), C ABI 1.
        lib = self.fake(_version.__version__, 1)
        r = load(lib)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("LibraryVersionError", r.stderr)
        self.assertNotIn("has no symbol", r.stderr)
        for want in (str(lib), str(PKG_DIR), f"version {_version.__version__} (C ABI 1)",
                     f"version {_version.__version__} (C ABI {_version.ABI_VERSION})",
                     "toolselect_registry_authorize", "make python"):
            self.assertIn(want, r.stderr)

    def test_a_library_of_another_release_is_refused_naming_both_versions(self):
        lib = self.fake("9.9.9", _version.ABI_VERSION)
        r = load(lib)
        self.assertIn("LibraryVersionError", r.stderr)
        for want in (str(lib), str(PKG_DIR), f"version 9.9.9 (C ABI {_version.ABI_VERSION})",
                     f"version {_version.__version__} (C ABI {_version.ABI_VERSION})"):
            self.assertIn(want, r.stderr)

    def test_the_right_versions_without_an_export_are_refused(self):
        lib = self.fake(_version.__version__, _version.ABI_VERSION)
        r = load(lib)
        self.assertIn("LibraryVersionError", r.stderr)
        for want in (str(lib), str(PKG_DIR), "lacks", "toolselect_registry_new",
                     f"version {_version.__version__} (C ABI {_version.ABI_VERSION})"):
            self.assertIn(want, r.stderr)

    def test_a_library_without_toolselect_version_is_not_a_toolselect_library(self):
        src = self.tmp / "other.c"
        src.write_text("int something(void) { return 1; }\n")
        lib = self.tmp / "libother.so"
        subprocess.run([shutil.which("gcc") or "cc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
        r = load(lib)
        self.assertIn("LibraryNotFoundError", r.stderr)
        for want in (str(lib), "not a toolselect library", f"version {_version.__version__}"):
            self.assertIn(want, r.stderr)


if __name__ == "__main__":
    unittest.main()
