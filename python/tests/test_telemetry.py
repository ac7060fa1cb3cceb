"""OpenTelemetry from Python: with the standard OTEL_* environment
the C library exports the selection's spans over OTLP/HTTP, and the package
flushes them when the interpreter exits. Whole process: a child Python runs a
selection with its own client against nothing but a loopback receiver."""

import os
import subprocess
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PY_DIR = Path(__file__).resolve().parents[1]

CHILD = r"""
import asyncio, json
import toolselect as ts
reg = ts.ToolRegistry()
reg.register("get_weather", lambda city: "sunny", description="Current weather for a city",
             parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})

class Client:
    async def chat_completion(self, **kw):
        return json.dumps({"calls": [{"tool": "get_weather", "args": {"city": "Paris"}}]})

sel = ts.ToolSelector(client=Client(), config=ts.ToolSelectionConfig(model="m"))
calls = asyncio.run(sel.select_tool_calls(task=ts.PlannedTask("t", "weather in Paris"), tool_registry=reg))
print(len(calls))
"""


class OTLPExportTest(unittest.TestCase):
    def test_selection_spans_reach_an_otlp_receiver(self):
        got = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                got.append((self.path, body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

        srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        env = dict(os.environ, PYTHONPATH=str(PY_DIR),
                   OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{srv.server_address[1]}",
                   OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf", OTEL_METRICS_EXPORTER="none",
                   OTEL_SERVICE_NAME="python-under-test")
        r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "1")
        traces = b"".join(body for path, body in got if path == "/v1/traces")
        self.assertTrue(traces, f"no trace export reached the receiver: {[p for p, _ in got]}")
        # The OTLP protobuf carries span names and attribute keys as plain strings.
        for want in (b"toolselect.select", b"chat m", b"gen_ai.request.model", b"python-under-test"):
            self.assertIn(want, traces)
        self.assertNotIn(b"weather in Paris", traces, "no prompt content unless asked for")


if __name__ == "__main__":
    unittest.main()
