"""The C boundary never crashes: bad handles, NULL pointers, invalid UTF-8,
malformed JSON and double frees are errors with messages."""

import ctypes
import json
import unittest

import toolselect as ts
from toolselect import _lib


def raw(name, *args):
    rc, body = _lib.raw_call(name, *args)
    return rc, json.loads(body)


class HandleTest(unittest.TestCase):
    def setUp(self):
        self.reg = ts.ToolRegistry()
        self.addCleanup(self.reg.close)
        self.reg.register("t", lambda: 0, description="d", parameters={"type": "object"})

    def assertError(self, result, code, text):
        rc, body = result
        self.assertEqual(rc, code, body)
        self.assertEqual(body["error"]["code"], code)
        self.assertIn(text, body["error"]["message"])

    def test_unknown_closed_and_wrong_kind_handles(self):
        self.assertError(raw("toolselect_registry_schema", 0), 2, "no object")
        self.assertError(raw("toolselect_registry_schema", 2**63), 2, "unknown registry handle")
        h = _lib.call("toolselect_registry_new", None)["handle"]
        _lib.call("toolselect_registry_close", h)
        self.assertError(raw("toolselect_registry_close", h), 2, "is closed")
        self.assertError(raw("toolselect_registry_validate", h, b"t", b"{}"), 2, "is closed")
        self.assertError(raw("toolselect_session_feed", self.reg.handle, b"{}"), 2, "not a session")
        self.assertError(raw("toolselect_selector_select", self.reg.handle, self.reg.handle, b"{}", 0), 2,
                         "not a selector")
        with self.assertRaises(ts.HandleError):
            _lib.call("toolselect_cancel", self.reg.handle)

    def test_null_pointers(self):
        self.assertError(raw("toolselect_registry_register", self.reg.handle, None), 1, "tool_json is NULL")
        self.assertError(raw("toolselect_registry_validate", self.reg.handle, None, b"{}"), 1, "tool is NULL")
        self.assertError(raw("toolselect_registry_validate", self.reg.handle, b"t", None), 1, "args_json is NULL")
        self.assertError(raw("toolselect_selector_new", None), 1, "config_json is NULL")
        self.assertError(raw("toolselect_echo", None), 1, "NULL")
        # A NULL out pointer only discards the result.
        fn = _lib.lib().toolselect_registry_schema
        self.assertEqual(fn(self.reg.handle, None), 0)
        self.assertEqual(fn(0, None), 2)

    def test_invalid_utf8_and_malformed_json(self):
        self.assertError(raw("toolselect_registry_register", self.reg.handle, b'{"name":"\xff"}'), 1, "UTF-8")
        self.assertError(raw("toolselect_registry_validate", self.reg.handle, b"\xfe", b"{}"), 1, "UTF-8")
        self.assertError(raw("toolselect_registry_register", self.reg.handle, b'{"name":'), 1, "not valid JSON")
        self.assertError(raw("toolselect_selector_new", b"{]"), 1, "not valid JSON")
        with self.assertRaises(ts.ArgumentError):
            self.reg.register_tools("[")

    def test_double_free_and_foreign_pointer(self):
        lib = _lib.lib()
        out = ctypes.c_void_p()
        self.assertEqual(lib.toolselect_version(ctypes.byref(out)), 0)
        self.assertEqual(lib.toolselect_free(out.value), 0)
        self.assertEqual(lib.toolselect_free(out.value), 7)  # double free: reported, not corrupting
        buf = ctypes.create_string_buffer(16)
        self.assertEqual(lib.toolselect_free(ctypes.addressof(buf)), 7)
        self.assertEqual(lib.toolselect_free(None), 0)

    def test_no_strings_or_handles_leak(self):
        before = ts.stats()
        for _ in range(100):
            with ts.ToolRegistry() as r:
                r.register_tools([{"name": "x", "description": "d", "parameters": {"type": "object"}}])
                r.validate("x", {"a": 1})
                try:
                    r.validate("y", {})
                except ts.UnknownToolError:
                    pass
        after = ts.stats()
        self.assertEqual(after["strings"], 0)
        self.assertEqual(after["handles"].get("registry", 0), before["handles"].get("registry", 0))


if __name__ == "__main__":
    unittest.main()
