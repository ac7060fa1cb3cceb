"""The packaging beyond the Linux wheels (docs/packaging.md): the loader's
file name per platform, and the sdist that macOS users (and anyone without
a wheel) install with their own Go: `pip install toolselect-VERSION.tar.gz`
builds the library with `go build -buildmode=c-shared`, and without Go stops
naming Go's install page. The Windows wheel is checked in tests/release
(its DLL runs under wine there)."""

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
from pathlib import Path

from tests.test_wheel import PY_DIR, VERSION, clean_env, go

from toolselect import _lib


class LibraryNameTest(unittest.TestCase):
    def test_each_platform_loads_its_own_file_name(self):
        self.assertEqual(_lib.library_name("linux"), "libtoolselect.so")
        self.assertEqual(_lib.library_name("darwin"), "libtoolselect.dylib")
        self.assertEqual(_lib.library_name("win32"), "toolselect.dll")
        self.assertEqual(_lib.library_name("freebsd14"), "libtoolselect.so")
        self.assertEqual(_lib.LIBRARY_NAME, _lib.library_name(sys.platform))

    def test_the_default_path_is_the_platform_file_beside_the_package(self):
        env = dict(os.environ)
        env.pop(_lib.ENV_LIBRARY, None)
        code = "from toolselect import _lib; print(_lib.library_path().name)"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PY_DIR, env=env)
        self.assertEqual(r.stdout.strip(), _lib.library_name(sys.platform), r.stderr)


@unittest.skipIf(os.environ.get("TOOLSELECT_SKIP_WHEEL_TEST"), "TOOLSELECT_SKIP_WHEEL_TEST is set")
class SdistTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        probe = subprocess.run(["/usr/bin/python3", "-c", "import venv, ensurepip, setuptools, wheel"], capture_output=True)
        if probe.returncode != 0:
            raise unittest.SkipTest("needs /usr/bin/python3 with venv, setuptools and wheel (apt-get install -y python3-venv python3-setuptools python3-wheel; make test installs them when run as root)")
        cls.go = go()
        cls.tmp = Path(tempfile.mkdtemp(prefix="ts-sdist-"))
        out = subprocess.run([sys.executable, str(PY_DIR / "build_sdist.py"), "--out", str(cls.tmp / "dist")],
                             capture_output=True, text=True, env=dict(os.environ, GO=cls.go))
        if out.returncode != 0:
            raise AssertionError(f"build_sdist.py failed:\n{out.stderr}")
        cls.sdist = Path(out.stdout.strip().splitlines()[-1])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def venv(self, name: str) -> Path:
        venv = self.tmp / name
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)], check=True)
        return venv

    def test_the_sdist_holds_the_package_and_the_go_sources_and_nothing_built(self):
        self.assertEqual(self.sdist.name, f"toolselect-{VERSION}.tar.gz")
        with tarfile.open(self.sdist) as t:
            names = t.getnames()
        top = f"toolselect-{VERSION}"
        for want in ("PKG-INFO", "pyproject.toml", "setup.py", "toolselect/_lib.py", "toolselect/VERSION",
                     "go/go.mod", "go/go.sum", "go/LICENSE", "go/cabi/cabi.go", "go/cabi/toolselect.h",
                     "go/rank/internal/cedict/NOTICE", "go/rank/internal/cedict/zh_en.txt", "go/version.go"):
            self.assertIn(f"{top}/{want}", names)
        for n in names:
            self.assertFalse(n.endswith((".so", ".dll", ".dylib", "_test.go", ".pyc")), n)

    def test_the_sdist_is_the_same_bytes_on_every_run(self):
        again = subprocess.run([sys.executable, str(PY_DIR / "build_sdist.py"), "--out", str(self.tmp / "again")],
                               capture_output=True, text=True, env=dict(os.environ, GO=self.go), check=True)
        self.assertEqual(Path(again.stdout.strip().splitlines()[-1]).read_bytes(), self.sdist.read_bytes())

    def test_pip_install_of_the_sdist_builds_the_library_with_go(self):
        venv = self.venv("venv")
        # Offline: no index, Debian's setuptools, and Go's module cache (GOPROXY=off proves no download).
        env = dict(clean_env(), GO=self.go, GOPROXY="off")
        r = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation", "--quiet", str(self.sdist)],
                           capture_output=True, text=True, env=env, cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        code = "import toolselect as ts; print(ts.__version__, ts.version()['version'], ts.library_path())"
        r = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True,
                           env=clean_env(), cwd=self.tmp)
        got = r.stdout.split()
        self.assertEqual(got[:2], [VERSION, VERSION], r.stderr)
        self.assertIn("site-packages", got[2])
        self.assertEqual(Path(got[2]).name, _lib.library_name(sys.platform))

    def test_without_go_pip_install_names_gos_install_page(self):
        venv = self.venv("venv-nogo")
        env = {k: v for k, v in clean_env().items() if k != "GO"}
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                      if p and not (Path(p) / "go").exists())
        r = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation", str(self.sdist)],
                           capture_output=True, text=True, env=env, cwd=self.tmp)
        self.assertNotEqual(r.returncode, 0)
        out = r.stdout + r.stderr
        self.assertIn("`go` is not on PATH", out)
        self.assertIn("https://go.dev/doc/install", out)


if __name__ == "__main__":
    unittest.main()
