"""`make wheel`: a wheel per target, tagged manylinux_2_N_<arch> from the
glibc symbol versions its library needs. The x86_64 wheel installs offline
into a fresh virtual environment and selects; the aarch64 wheel is installed
for its platform into a fresh directory and its library runs a selection
smoke test under qemu-aarch64-static (no aarch64 Python on this machine: the
Python half of the wheel is the same pure-Python package). The loader refuses
a library of another version, or of another architecture, saying so."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

PY_DIR = Path(__file__).resolve().parents[1]
ROOT = PY_DIR.parent
sys.path.insert(0, str(PY_DIR))
import elf_glibc  # noqa: E402

CHECK = r"""
import asyncio, json, os, sys
import toolselect as ts
assert "site-packages" in str(ts.library_path()), ts.library_path()
assert os.path.commonpath([ts.__file__, sys.prefix]) == sys.prefix, ts.__file__
with ts.ToolRegistry() as reg:
    reg.register("add", lambda a, b: a + b, description="Add",
                 parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                             "required": ["a", "b"]})
    assert not reg.validate("add", {"a": "x"})

    class Client:
        async def chat_completion(self, **kw):
            return json.dumps({"calls": [{"tool": "add", "args": {"a": 1, "b": 2}}]})

    with ts.ToolSelector(client=Client(), config=ts.ToolSelectionConfig(model="m")) as sel:
        calls = asyncio.run(sel.select_tool_calls(task=ts.PlannedTask("t", "add"), tool_registry=reg))
    print(reg.run(calls[0]), ts.version()["abi"], ts.__version__)
"""

VERSION = (ROOT / "VERSION").read_text().strip()
ABI_VERSION = int(re.search(r"^#define TOOLSELECT_ABI_VERSION (\d+)$", (ROOT / "cabi" / "toolselect.h").read_text(), re.M).group(1))


def go() -> str:
    g = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else "")
    if not g:
        raise unittest.SkipTest("needs Go to build a library")
    return g


def clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TOOLSELECT_LIBRARY")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def wheel_tag_matches_library(test: unittest.TestCase, wheel: Path, lib: Path, arch: str) -> None:
    got_arch, needs = elf_glibc.glibc_needs(str(lib))
    major, minor = elf_glibc.max_glibc(needs)
    test.assertEqual(got_arch, arch)
    test.assertEqual(wheel.name, f"toolselect-{VERSION}-py3-none-manylinux_{major}_{minor}_{arch}.whl")


@unittest.skipIf(os.environ.get("TOOLSELECT_SKIP_WHEEL_TEST"), "TOOLSELECT_SKIP_WHEEL_TEST is set")
@unittest.skipUnless((PY_DIR / "toolselect" / "libtoolselect.so").is_file(), "run `make lib` first")
class WheelTest(unittest.TestCase):
    def test_x86_64_wheel_installs_offline_in_a_fresh_venv(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            out = subprocess.run([sys.executable, str(PY_DIR / "build_wheel.py"), "--out", str(tmp / "dist")],
                                 check=True, capture_output=True, text=True)
            wheel = Path(out.stdout.strip().splitlines()[-1])
            self.assertIn("library needs glibc", out.stderr)
            wheel_tag_matches_library(self, wheel, PY_DIR / "toolselect" / "libtoolselect.so", "x86_64")
            subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True)
            py = str(tmp / "venv" / "bin" / "python")
            subprocess.run([py, "-m", "pip", "install", "--no-index", "--quiet", str(wheel)], check=True,
                           env=clean_env(), cwd=tmp)
            r = subprocess.run([py, "-c", CHECK], capture_output=True, text=True, env=clean_env(), cwd=tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), ["3", str(ABI_VERSION), VERSION])


@unittest.skipIf(os.environ.get("TOOLSELECT_SKIP_WHEEL_TEST"), "TOOLSELECT_SKIP_WHEEL_TEST is set")
class CrossWheelTest(unittest.TestCase):
    """The aarch64 wheel (built here with the Debian cross compiler)."""

    @classmethod
    def setUpClass(cls):
        missing = [t for t in ("aarch64-linux-gnu-gcc", "qemu-aarch64-static") if not shutil.which(t)]
        if missing:
            raise unittest.SkipTest(f"needs {', '.join(missing)} (apt-get install gcc-aarch64-linux-gnu qemu-user-static; .ci/run does)")
        go()
        cls.tmp = Path(tempfile.mkdtemp(prefix="ts-wheel-"))
        env = dict(os.environ, WHEEL_ARCHES="aarch64")
        out = subprocess.run(["bash", str(PY_DIR / "build_wheel.sh"), str(cls.tmp / "dist")], cwd=ROOT, env=env,
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise AssertionError(f"make wheel (aarch64) failed:\n{out.stderr}")
        cls.report = out.stderr
        cls.wheel = Path(out.stdout.strip().splitlines()[-1])
        cls.lib = ROOT / ".cache" / "wheel" / "aarch64" / "libtoolselect.so"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_aarch64_wheel_runs_a_selection_under_qemu(self):
        wheel_tag_matches_library(self, self.wheel, self.lib, "aarch64")
        self.assertRegex(self.report, r"manylinux_2_\d+_aarch64, library needs glibc 2\.\d+")
        site = self.tmp / "site"
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--quiet", "--no-deps",
                        "--platform", re.search(r"(manylinux_\w+)\.whl$", self.wheel.name).group(1),
                        "--only-binary=:all:", "--target", str(site), str(self.wheel)],
                       check=True, env=clean_env(), cwd=self.tmp)
        lib = site / "toolselect" / "libtoolselect.so"
        self.assertTrue(lib.is_file())
        self.assertEqual((site / "toolselect" / "VERSION").read_text().strip(), VERSION)
        smoke = self.tmp / "wheel_smoke"
        subprocess.run(["aarch64-linux-gnu-gcc", "-std=c99", "-Wall", "-Werror", "-O1", "-o", str(smoke),
                        str(PY_DIR / "tests" / "native" / "wheel_smoke.c"), "-ldl"], check=True)
        r = subprocess.run(["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu", str(smoke), str(lib)],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        self.assertTrue(r.stdout.startswith("ok "), r.stdout)
        self.assertIn(f'"version":"{VERSION}"', r.stdout)

    def test_loader_names_the_architecture(self):
        code = "import toolselect; toolselect.version()"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PY_DIR,
                           env=dict(os.environ, PYTHONPATH=str(PY_DIR), TOOLSELECT_LIBRARY=str(self.lib)))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("LibraryNotFoundError", r.stderr)
        self.assertIn("built for aarch64; this machine is x86_64", r.stderr)


@unittest.skipIf(os.environ.get("TOOLSELECT_SKIP_WHEEL_TEST"), "TOOLSELECT_SKIP_WHEEL_TEST is set")
class SourceInstallTest(unittest.TestCase):
    def test_pip_install_from_the_source_checkout(self):
        # PyPI is out of reach, so the build backend must be installed: Debian's
        # python3-setuptools and python3-wheel (.ci/run installs them).
        py = "/usr/bin/python3"
        probe = subprocess.run([py, "-c", "import venv, ensurepip, setuptools, wheel"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("needs /usr/bin/python3 with venv, setuptools and wheel (Debian python3-venv python3-setuptools python3-wheel)")
        go()
        with tempfile.TemporaryDirectory() as tmp:
            venv = Path(tmp) / "venv"
            subprocess.run([py, "-m", "venv", "--system-site-packages", str(venv)], check=True)
            r = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", "--no-build-isolation", "--quiet",
                                str(PY_DIR)], capture_output=True, text=True, env=clean_env(), cwd=tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import toolselect as ts; print(ts.__version__, ts.version()['version'])"],
                               capture_output=True, text=True, env=clean_env(), cwd=tmp)
            self.assertEqual(r.stdout.split(), [VERSION, VERSION], r.stderr)


@unittest.skipIf(os.environ.get("TOOLSELECT_SKIP_WHEEL_TEST"), "TOOLSELECT_SKIP_WHEEL_TEST is set")
class LoaderVersionTest(unittest.TestCase):
    def test_a_library_of_another_version_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            lib = Path(tmp) / "libtoolselect.so"
            subprocess.run([go(), "build", "-buildmode=c-shared", "-tags", "netgo,osusergo",
                            "-ldflags=-s -w -X main.versionOverride=9.9.9", "-o", str(lib), "./cabi"],
                           cwd=ROOT, check=True, env=dict(os.environ, CGO_ENABLED="1"))
            r = subprocess.run([sys.executable, "-c", "import toolselect; toolselect.version()"], capture_output=True,
                               text=True, cwd=PY_DIR, env=dict(os.environ, PYTHONPATH=str(PY_DIR), TOOLSELECT_LIBRARY=str(lib)))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("LibraryVersionError", r.stderr)
        for want in (str(lib), "version 9.9.9", f"version {VERSION}", str(PY_DIR / "toolselect")):
            self.assertIn(want, r.stderr)


if __name__ == "__main__":
    unittest.main()
