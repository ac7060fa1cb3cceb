import os
import sys
import unittest

import toolselect as ts
from toolselect import _version


@unittest.skipUnless(hasattr(os, "fork"), "needs os.fork")
class ForkTest(unittest.TestCase):
    def test_child_of_a_fork_gets_a_clear_error(self):
        reg = ts.ToolRegistry()  # the library is loaded in this process now
        self.addCleanup(reg.close)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: must raise at once, not hang
            os.close(r)
            code = 1
            try:
                ts.version()
            except ts.ForkedProcessError as e:
                os.write(w, str(e).encode())
                code = 0
            except BaseException as e:  # noqa: BLE001
                os.write(w, repr(e).encode())
            os.close(w)
            os._exit(code)
        os.close(w)
        msg = b""
        while True:
            chunk = os.read(r, 4096)
            if not chunk:
                break
            msg += chunk
        os.close(r)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status) if sys.version_info >= (3, 9) else status >> 8, 0,
                         msg.decode())
        self.assertIn("spawn", msg.decode())
        self.assertEqual(ts.version()["abi"], _version.ABI_VERSION)  # the parent is unaffected

    def test_spawned_children_work(self):
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        with ctx.Pool(1) as pool:
            self.assertEqual(pool.apply(_child_validate), True)


def _child_validate() -> bool:
    from tests.helpers import make_registry

    with make_registry() as reg:
        return reg.validate("add", {"a": 1, "b": 2}).valid


if __name__ == "__main__":
    unittest.main()
