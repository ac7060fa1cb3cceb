"""The Go fault-injection server (internal/testing/faultserver) as a subprocess, and
a plain urllib OpenAI-compatible client that drives sessions with it.

Shared by test_fault.py and test_security.py. The server binary is built once
per process with ``go build``; without a Go toolchain those tests are skipped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import json
import os
import shutil
import subprocess
import tempfile
import threading
import unittest
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]

CATALOG = [
    {"name": "get_weather", "description": "Current weather for a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string", "minLength": 1},
                                                     "units": {"enum": ["c", "f"]}},
                    "required": ["city"], "additionalProperties": False}},
    {"name": "send_email", "description": "Send an email.",
     "parameters": {"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
                    "required": ["to"]}},
    {"name": "delete_database", "description": "Drop every table.", "safe": False,
     "parameters": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}},
    {"name": "admin_reset", "description": "Reset the service.", "roles": ["admin"],
     "parameters": {"type": "object", "properties": {}}},
]
OFFERABLE = {"get_weather", "send_email"}

_build_lock = threading.Lock()
_binary: Optional[str] = None


def faultserver_binary() -> str:
    """Build internal/testing/faultserver/cmd once; SkipTest without Go."""
    global _binary
    with _build_lock:
        if _binary is None:
            go = shutil.which("go")
            if go is None:
                raise unittest.SkipTest("the fault server needs a Go toolchain (go not on PATH)")
            out = Path(tempfile.mkdtemp(prefix="faultserver-")) / "faultserver"
            proc = subprocess.run([go, "build", "-o", str(out), "./internal/testing/faultserver/cmd"], cwd=ROOT,
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"go build faultserver failed:\n{proc.stderr}")
            _binary = str(out)
        return _binary


def faults() -> List[Dict[str, Any]]:
    """The fault table, from the Go package itself."""
    out = subprocess.run([faultserver_binary(), "-faults"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


class FaultServer:
    """A running fault server; it exits when its stdin closes."""

    def __init__(self, latency: str = "0s", script: Optional[str] = None) -> None:
        args = [faultserver_binary(), "-latency", latency] + (["-script", script] if script else [])
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://127.0.0.1:"):
            self.close()
            raise RuntimeError(f"fault server did not start: {self.url!r}")

    def base(self, fault: str) -> str:
        return self.url[: -len("/v1")] + f"/fault/{fault}/v1"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()


class HTTPStatusError(Exception):
    """What the urllib client raises for a 4xx/5xx: status_code is read by
    toolselect to report http_status."""

    def __init__(self, status_code: int, body: str) -> None:
        super().__init__(f"HTTP {status_code}: {body}")
        self.status_code = status_code


class ResponseTooLarge(Exception):
    pass


class URLLibClient:
    """A caller's own async OpenAI-compatible client (urllib in its own
    threads), with a timeout and a response size limit, like a careful
    production client. It returns the whole completion as a dict."""

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="urllib-client")

    def __init__(self, base_url: str, api_key: str = "", limit: int = 4 << 20) -> None:
        self.base_url, self.api_key, self.limit = base_url.rstrip("/"), api_key, limit
        self.calls = 0

    async def chat_completion(self, *, messages: Any, model: str, temperature: float, response_format: Any,
                              timeout: float, tools: Any = None, **_: Any) -> Any:
        self.calls += 1
        body: Dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature}
        if response_format:
            body["response_format"] = response_format
        if tools:
            body["tools"] = tools
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, functools.partial(self._post, body, timeout))

    def _post(self, body: Dict[str, Any], timeout: float) -> Any:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.base_url + "/chat/completions", data=json.dumps(body).encode(),
                                     headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                length = resp.headers.get("Content-Length")
                if length is not None and int(length) > self.limit:
                    raise ResponseTooLarge(f"the response body is {length} bytes, over {self.limit}")
                data = resp.read(self.limit + 1)
                if len(data) > self.limit:
                    raise ResponseTooLarge(f"the response body exceeds {self.limit} bytes")
        except urllib.error.HTTPError as e:
            text = e.read(2048).decode("utf-8", "replace")
            e.close()
            raise HTTPStatusError(e.code, text) from None
        return json.loads(data)


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class FaultServerSelfTest(unittest.TestCase):
    def test_serves_ok_and_faults(self):
        s = FaultServer()
        self.addCleanup(s.close)
        table = faults()
        self.assertIn("delay_headers", [f["name"] for f in table])
        c = URLLibClient(s.url)
        out = asyncio.run(c.chat_completion(messages=[{"role": "user", "content": "hi"}], model="m",
                                            temperature=0, response_format=None, timeout=5))
        self.assertIn("get_weather", out["choices"][0]["message"]["content"])
        with self.assertRaises(HTTPStatusError) as cm:
            asyncio.run(URLLibClient(s.base("status_429")).chat_completion(
                messages=[], model="m", temperature=0, response_format=None, timeout=5))
        self.assertEqual(cm.exception.status_code, 429)


if __name__ == "__main__":
    unittest.main()
