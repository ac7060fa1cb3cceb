"""toolselect.CancelledError is a ToolSelectError and an asyncio.CancelledError."""
import asyncio
import json
import os
import pickle
import subprocess
import sys
import unittest
from pathlib import Path

import toolselect as ts
from toolselect import _lib
from toolselect.errors import error_from_body

from .helpers import FakeClient, calls_json, make_registry, task

PYTHON_DIR = str(Path(__file__).resolve().parents[1])


class CancelledErrorClassTest(unittest.TestCase):
    def test_bases_and_mro(self):
        C = ts.CancelledError
        self.assertIs(C, ts.errors.CancelledError)
        for base in (ts.ToolSelectError, Exception, asyncio.CancelledError, BaseException):
            self.assertTrue(issubclass(C, base), base)
        # ToolSelectError (and Exception) come first: the class's own methods
        # and attributes are ToolSelectError's.
        self.assertEqual(C.__mro__, (C, ts.ToolSelectError, Exception, asyncio.CancelledError, BaseException, object))
        self.assertEqual((C.code, C.kind), (5, "canceled"))
        self.assertEqual((C.__module__, C.__name__), ("toolselect.errors", "CancelledError"))
        e = C("stopped", detail={"x": 1})
        self.assertEqual((e.message, e.code, e.kind, e.detail, str(e)), ("stopped", 5, "canceled", {"x": 1}, "stopped"))

    def test_every_except_clause_catches_it(self):
        for clause in (ts.CancelledError, ts.ToolSelectError, Exception, asyncio.CancelledError, BaseException):
            with self.subTest(clause=clause.__name__):
                try:
                    raise ts.CancelledError("x")
                except clause as e:
                    self.assertIsInstance(e, ts.CancelledError)
        # asyncio's own is still no toolselect error.
        self.assertFalse(issubclass(asyncio.CancelledError, ts.ToolSelectError))

    def test_error_from_body_and_pickle(self):
        e = error_from_body(5, json.dumps({"error": {"kind": "canceled", "message": "the selection was cancelled",
                                                     "detail": {"calls": []}}}).encode())
        self.assertIs(type(e), ts.CancelledError)
        self.assertEqual((str(e), e.code, e.kind, e.detail), ("the selection was cancelled", 5, "canceled",
                                                              {"calls": []}))
        self.assertIs(type(error_from_body(5, b"not json")), ts.CancelledError)
        back = pickle.loads(pickle.dumps(ts.CancelledError("x")))
        self.assertIs(type(back), ts.CancelledError)
        self.assertEqual(str(back), "x")

    def test_the_library_s_cancelled_call(self):
        # The C ABI's TS_ERR_CANCELED arrives as toolselect.CancelledError:
        # a selection whose cancel token was cancelled before it started.
        reg = make_registry()
        self.addCleanup(reg.close)
        sel = ts.ToolSelector(client=None, config=ts.ToolSelectionConfig(base_url="http://127.0.0.1:9/v1"))
        self.addCleanup(sel.close)
        tok = _lib.call("toolselect_cancel_new")["handle"]
        self.addCleanup(_lib.call, "toolselect_cancel_close", tok)
        _lib.call("toolselect_cancel", tok)
        request = json.dumps(sel._request(task(), None, None)).encode()
        with sel._selector_use(*sel._endpoint()) as s, reg.use() as r:
            with self.assertRaises(asyncio.CancelledError) as cm:
                _lib.call("toolselect_selector_select", s, r, request, tok)
        self.assertIsInstance(cm.exception, ts.CancelledError)
        self.assertEqual(cm.exception.kind, "canceled")

    def test_import_does_not_import_asyncio(self):
        # The class is made when first asked for: a process that only loads
        # catalogs still does not pay for asyncio (docs/registry.md).
        code = ("import sys, toolselect, toolselect.errors\n"
                "assert 'asyncio' not in sys.modules, 'asyncio imported'\n"
                "assert 'CancelledError' in dir(toolselect) and 'CancelledError' in dir(toolselect.errors)\n"
                "C = toolselect.CancelledError\n"
                "import asyncio\n"
                "assert issubclass(C, asyncio.CancelledError) and C is toolselect.errors.CancelledError\n"
                "from toolselect import *\n"
                "assert CancelledError is C\n"
                "ns = {}\n"
                "exec('from toolselect.errors import *', ns)\n"
                "assert ns['CancelledError'] is C and 'ToolSelectError' in ns\n")
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
        subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=PYTHON_DIR, timeout=60)


class SelectorCancellationTest(unittest.TestCase):
    def setUp(self):
        self.reg = make_registry()
        self.addCleanup(self.reg.close)

    def test_a_client_raising_it_cancels_the_selection(self):
        # Before it subclassed asyncio.CancelledError, a client raising
        # toolselect.CancelledError was a failed attempt and the fallback
        # model was asked; it is a cancellation now, as asyncio's is.
        cfg = ts.ToolSelectionConfig(model="primary", fallback_model="fallback")
        for exc in (ts.CancelledError("inner selection cancelled"), asyncio.CancelledError()):
            with self.subTest(exc=type(exc)):
                client = FakeClient(exc, calls_json(("add", {"a": 1, "b": 2})))
                sel = ts.ToolSelector(client=client, config=cfg)
                self.addCleanup(sel.close)

                async def main():
                    try:
                        await sel.select_tool_calls(task=task(), tool_registry=self.reg)
                    except BaseException as e:  # noqa: BLE001
                        return e
                    return None

                got = asyncio.run(main())
                self.assertIs(got, exc)
                self.assertEqual(client.models, ["primary"])
                self.assertEqual(ts.stats()["handles"].get("session", 0), 0)

    def test_cancelling_the_task_still_raises_asyncio_s(self):
        # A session-mode selection whose task is cancelled while the client
        # answers: the caller sees asyncio.CancelledError, the session is closed.
        client = FakeClient(calls_json(("add", {"a": 1, "b": 2})), delay=5)
        sel = ts.ToolSelector(client=client, config=ts.ToolSelectionConfig(model="m"))
        self.addCleanup(sel.close)

        async def main():
            t = asyncio.ensure_future(sel.select_tool_calls(task=task(), tool_registry=self.reg))
            await asyncio.sleep(0.2)
            t.cancel()
            try:
                await t
            except asyncio.CancelledError:
                return t.cancelled()
            return False

        self.assertTrue(asyncio.run(main()))
        self.assertEqual(ts.stats()["handles"].get("session", 0), 0)


if __name__ == "__main__":
    unittest.main()
