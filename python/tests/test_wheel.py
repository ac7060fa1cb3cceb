"""`make wheel`: a wheel per target, tagged manylinux_2_N_<arch> from the
glibc symbol versions its library needs. Each wheel installs offline into a
fresh virtual environment and runs a selection smoke test (a Python client
object, then the library's own HTTP client against a loopback endpoint): the
x86_64 wheel natively, the aarch64 wheel in an aarch64 CPython (Debian's
arm64 packages, unpacked by tests/aarch64-python.sh) under
qemu-aarch64-static, installed by that interpreter's own pip. The aarch64
library also runs a C smoke test against the cross toolchain's sysroot. The
loader refuses a library of another version, or of another architecture,
saying so. Under CI=true a missing cross tool fails instead of skipping."""

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
import asyncio, json, os, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import toolselect as ts
assert "site-packages" in str(ts.library_path()), ts.library_path()
assert os.path.commonpath([ts.__file__, sys.prefix]) == sys.prefix, ts.__file__
REPLY = json.dumps({"calls": [{"tool": "add", "args": {"a": 1, "b": 2}}]})


class Model(BaseHTTPRequestHandler):  # a loopback OpenAI-compatible endpoint
    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = json.dumps({"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": REPLY}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Client:  # a Python client object, as llm-common passes one
    async def chat_completion(self, **kw):
        return REPLY


httpd = ThreadingHTTPServer(("127.0.0.1", 0), Model)
threading.Thread(target=httpd.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
out = []
with ts.ToolRegistry() as reg:
    reg.register("add", lambda a, b: a + b, description="Add",
                 parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                             "required": ["a", "b"]})
    assert not reg.validate("add", {"a": "x"})
    for client, cfg in ((Client(), ts.ToolSelectionConfig(model="m")),
                        (None, ts.ToolSelectionConfig(model="m", base_url=url, api_key="sk-local"))):
        with ts.ToolSelector(client=client, config=cfg) as sel:
            calls = asyncio.run(sel.select_tool_calls(task=ts.PlannedTask("t", "add 1 and 2"), tool_registry=reg))
        out.append(reg.run(calls[0]))
httpd.shutdown()
print(*out, ts.version()["abi"], ts.__version__)
"""

VERSION = (ROOT / "VERSION").read_text().strip()
ABI_VERSION = int(re.search(r"^#define TOOLSELECT_ABI_VERSION (\d+)$", (ROOT / "cabi" / "toolselect.h").read_text(), re.M).group(1))


def go() -> str:
    g = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else "")
    if not g:
        raise unittest.SkipTest("needs Go to build a library")
    return g


IN_CI = os.environ.get("CI") == "true"


def need(missing: "list[str]", how: str) -> None:
    """Skip when something the test needs is missing, saying what and how to
    get it; under CI=true (.ci/run installs it all, through tests/install-tools.sh) fail instead."""
    if not missing:
        return
    msg = f"needs {', '.join(missing)} ({how})"
    if IN_CI:
        raise AssertionError(f"{msg}: CI=true, and .ci/run should have set it up")
    raise unittest.SkipTest(msg)


def aarch64_python() -> "Path | None":
    """The folder tests/aarch64-python.sh unpacked an aarch64 CPython into."""
    root = Path(os.environ.get("TOOLSELECT_AARCH64_PYTHON") or Path.home() / ".cache" / "toolselect-aarch64-python")
    return root if (root / ".complete").is_file() else None


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
            self.assertEqual(r.stdout.split(), ["3", "3", str(ABI_VERSION), VERSION])


@unittest.skipIf(os.environ.get("TOOLSELECT_SKIP_WHEEL_TEST"), "TOOLSELECT_SKIP_WHEEL_TEST is set")
class CrossWheelTest(unittest.TestCase):
    """The aarch64 wheel (built here with the Debian cross compiler)."""

    @classmethod
    def setUpClass(cls):
        need([t for t in ("aarch64-linux-gnu-gcc", "qemu-aarch64-static") if not shutil.which(t)],
             "apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static; make test installs them when run as root")
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

    def test_aarch64_wheel_installs_offline_in_a_fresh_venv_under_qemu(self):
        root = aarch64_python()
        need([] if root else ["an aarch64 CPython"],
             "sudo bash tests/aarch64-python.sh unpacks Debian's arm64 python3 packages; make test does it when run as root")
        qemu = ["qemu-aarch64-static", "-L", str(root)]
        venv = self.tmp / "venv-aarch64"
        subprocess.run(qemu + [str(root / "usr" / "bin" / "python3"), "-m", "venv", "--without-pip", str(venv)],
                       check=True, env=clean_env(), cwd=self.tmp, timeout=300)
        py = str(venv / "bin" / "python")
        # The venv's own pip, under qemu: it reads this (emulated) machine's
        # glibc and architecture to choose the wheel from the folder.
        pip = sorted((root / "usr" / "share" / "python-wheels").glob("pip-*.whl"))[-1]
        r = subprocess.run(qemu + [py, f"{pip}/pip", "install", "--no-index", "--quiet", "--find-links",
                                   str(self.wheel.parent), "toolselect"],
                           capture_output=True, text=True, env=clean_env(), cwd=self.tmp, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = subprocess.run(qemu + [py, "-c", "import platform; print(platform.machine())"], capture_output=True,
                           text=True, env=clean_env(), cwd=self.tmp, timeout=300)
        self.assertEqual(r.stdout.strip(), "aarch64", r.stderr)
        r = subprocess.run(qemu + [py, "-c", CHECK], capture_output=True, text=True, env=clean_env(), cwd=self.tmp,
                           timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["3", "3", str(ABI_VERSION), VERSION])

    def test_aarch64_library_runs_a_c_selection_under_qemu(self):
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
        # python3-setuptools and python3-wheel (make test installs them as root).
        py = "/usr/bin/python3"
        probe = subprocess.run([py, "-c", "import venv, ensurepip, setuptools, wheel"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("needs /usr/bin/python3 with venv, setuptools and wheel (apt-get install -y python3-venv python3-setuptools python3-wheel; make test installs them when run as root)")
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
