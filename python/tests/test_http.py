"""The built-in Go HTTP transport (client=None) against a local server that
speaks the OpenAI chat completions wire format."""

import asyncio
import json
import os
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from unittest import mock

import toolselect as ts

from .helpers import calls_json, make_registry, task


class OpenAIServer:
    """Loopback server; `script` is a list of (status, content_or_body, delay_s) consumed per request."""

    def __init__(self, *script):
        self.script = list(script)
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "body": body,
                                       "auth": self.headers.get("Authorization")})
                status, content, delay = outer.script.pop(0) if len(outer.script) > 1 else outer.script[0]
                if delay:
                    time.sleep(delay)
                if status == 200:
                    # A list is native tool calls: [(name, arguments), ...].
                    message = {"role": "assistant", "content": content}
                    if isinstance(content, list):
                        message = {"role": "assistant", "content": None, "tool_calls": [
                            {"id": f"call_{i}", "type": "function",
                             "function": {"name": name, "arguments": json.dumps(args)}}
                            for i, (name, args) in enumerate(content)]}
                    payload = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                               "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}}
                else:
                    payload = {"error": {"message": content, "type": "server_error", "code": None}}
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


OK_REPLY = calls_json(("add", {"a": 1, "b": 2}))
CLEAN_ENV = {k: "" for k in ("LLM_COMMON_TOOL_SELECTION_BASE_URL", "LLM_COMMON_TOOL_SELECTION_API_KEY",
                             "OPENAI_BASE_URL", "OPENAI_API_KEY")}


class HTTPTransportTest(unittest.TestCase):
    def setUp(self):
        self.reg = make_registry()
        self.addCleanup(self.reg.close)

    def server(self, *script):
        s = OpenAIServer(*script)
        self.addCleanup(s.close)
        return s

    def selector(self, **cfg):
        sel = ts.ToolSelector(client=None, config=ts.ToolSelectionConfig(**cfg))
        self.addCleanup(sel.close)
        return sel

    def select(self, sel, detailed=True):
        fn = sel.select_tool_calls_detailed if detailed else sel.select_tool_calls
        return asyncio.run(fn(task=task(), tool_registry=self.reg))

    def test_happy_path_and_wire_format(self):
        srv = self.server((200, OK_REPLY, 0))
        with mock.patch.dict(os.environ, CLEAN_ENV):
            res = self.select(self.selector(model="m1", base_url=srv.url, api_key="sk-local"))
        self.assertEqual(res.calls, [ts.ToolCall("add", {"a": 1, "b": 2}, "because")])
        req = srv.requests[0]
        self.assertEqual(req["path"], "/v1/chat/completions")
        self.assertEqual(req["auth"], "Bearer sk-local")
        self.assertEqual(req["body"]["model"], "m1")
        self.assertIn("temperature", req["body"])  # 0.0 must reach the wire
        self.assertEqual(req["body"]["temperature"], 0)
        self.assertEqual(req["body"]["response_format"], {"type": "json_object"})
        self.assertEqual(res.attempts[0].raw.get("prompt_tokens"), 12)

    def test_endpoint_from_environment_at_call_time(self):
        srv = self.server((200, OK_REPLY, 0))
        with mock.patch.dict(os.environ, {**CLEAN_ENV, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}):
            sel = self.selector(model="m1")  # created before the variables below are set
        with mock.patch.dict(os.environ, {**CLEAN_ENV, "OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": "sk-openai"}):
            self.assertEqual(len(self.select(sel).calls), 1)
        self.assertEqual(srv.requests[-1]["auth"], "Bearer sk-openai")
        with mock.patch.dict(os.environ, {**CLEAN_ENV, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                                          "LLM_COMMON_TOOL_SELECTION_BASE_URL": srv.url,
                                          "LLM_COMMON_TOOL_SELECTION_API_KEY": "sk-ts"}):
            self.assertEqual(len(self.select(sel).calls), 1)
        self.assertEqual(srv.requests[-1]["auth"], "Bearer sk-ts")

    def test_fallback_after_server_error(self):
        srv = self.server((500, "overloaded", 0), (200, OK_REPLY, 0))
        res = self.select(self.selector(model="m1", fallback_model="m2", base_url=srv.url))
        self.assertEqual([r["body"]["model"] for r in srv.requests], ["m1", "m2"])
        self.assertEqual(res.attempts[0].kind, "http_status")
        self.assertIn("overloaded", res.attempts[0].message)
        self.assertEqual(len(res.calls), 1)

    def test_total_failure_is_empty_not_an_exception(self):
        srv = self.server((429, "rate limited", 0))
        calls = self.select(self.selector(model="m1", fallback_model="m2", base_url=srv.url, api_key="sk-x"),
                            detailed=False)
        self.assertEqual(calls, [])
        self.assertEqual(len(srv.requests), 2)

    def test_native_mode_tool_calls(self):
        srv = self.server((200, [("add", {"a": 1, "b": 2}), ("add", {"a": "x"})], 0))
        with mock.patch.dict(os.environ, {**CLEAN_ENV, "LLM_COMMON_TOOL_SELECTION_MODE": "native"}):
            sel = ts.ToolSelector(client=None, config=ts.ToolSelectionConfig.from_env(base_url=srv.url,
                                                                                      fail_closed=False))
            self.addCleanup(sel.close)
            res = self.select(sel)
        # The valid call is kept, the invalid one dropped (fail_closed=False).
        self.assertEqual([(c.tool, c.args) for c in res.calls], [("add", {"a": 1, "b": 2})])
        body = srv.requests[0]["body"]
        self.assertNotIn("response_format", body)
        self.assertIn("add", [t["function"]["name"] for t in body["tools"]])

    def test_max_response_bytes_refuses_a_larger_body(self):
        big = calls_json(("add", {"a": 1, "b": 2})).replace("because", "because " + "x" * 4000)
        srv = self.server((200, big, 0))
        res = self.select(self.selector(model="m1", base_url=srv.url, max_response_bytes=1024))
        self.assertEqual(res.calls, [])
        self.assertIn("over the limit of 1024", res.failure.attempts[0].message)
        # The default limit (4 MiB) reads it.
        self.assertEqual(len(self.select(self.selector(model="m1", base_url=srv.url)).calls), 1)

    def test_connection_refused(self):
        res = self.select(self.selector(model="m1", base_url="http://127.0.0.1:9/v1"))
        self.assertEqual(res.calls, [])
        self.assertEqual(res.failure.attempts[0].kind, "transport")

    def test_timeout(self):
        srv = self.server((200, OK_REPLY, 2.5))
        start = time.monotonic()
        res = self.select(self.selector(model="m1", timeout_s=1, base_url=srv.url))
        self.assertLess(time.monotonic() - start, 2.0)
        self.assertEqual(res.failure.attempts[0].kind, "timeout")

    def test_cancelling_the_task_cancels_the_call(self):
        srv = self.server((200, OK_REPLY, 3))
        sel = self.selector(model="m1", base_url=srv.url)

        async def main():
            t = asyncio.ensure_future(sel.select_tool_calls(task=task(), tool_registry=self.reg))
            await asyncio.sleep(0.3)
            t.cancel()
            start = time.monotonic()
            with self.assertRaises(asyncio.CancelledError):
                await t
            return time.monotonic() - start

        self.assertLess(asyncio.run(main()), 0.5)
        self.assertEqual(ts.stats()["handles"].get("cancel token", 0), 0)


if __name__ == "__main__":
    unittest.main()
