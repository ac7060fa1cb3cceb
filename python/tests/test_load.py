"""Load, concurrency and leak checks (the short versions; `make reliability`
runs the long ones, see docs/hardening-fuzz.md).

- 200 concurrent select_tool_calls from asyncio while 8 threads drive the same
  ToolSelector (each with its own event loop) and validate against the same
  registry: once with a Python client, once with the built-in Go HTTP
  transport against a loopback server. Every selection must return exactly
  the call its own request asked for (no cross-talk between concurrent
  sessions), and afterwards the library's ledger (toolselect.stats()) must
  show no handle and no returned string left over.
- bench/python_leak.py with 5,000 round trips, through a Python client and
  through the Go HTTP transport: RSS growth under a bound and an empty ledger
  (the 100,000-round versions are in `make reliability`).

Environment: TOOLSELECT_LOAD_ASYNC (default 200), TOOLSELECT_LOAD_THREADS (8),
TOOLSELECT_LOAD_PER_THREAD (25), TOOLSELECT_LEAK_ROUNDS (5000),
TOOLSELECT_LEAK_MAX_MIB (4).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import subprocess
import sys
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import toolselect as ts

from .helpers import make_registry

N_ASYNC = int(os.environ.get("TOOLSELECT_LOAD_ASYNC", "200"))
N_THREADS = int(os.environ.get("TOOLSELECT_LOAD_THREADS", "8"))
PER_THREAD = int(os.environ.get("TOOLSELECT_LOAD_PER_THREAD", "25"))
LEAK_ROUNDS = int(os.environ.get("TOOLSELECT_LEAK_ROUNDS", "5000"))
LEAK_MAX_MIB = float(os.environ.get("TOOLSELECT_LEAK_MAX_MIB", "4"))
ROOT = Path(__file__).resolve().parents[2]

REQ_RE = re.compile(r"request #(\d+)")


def request_number(messages) -> int:
    """The number the task put in the user prompt."""
    for m in reversed(messages):
        content = m["content"] if isinstance(m, dict) else m.content
        found = REQ_RE.search(content)
        if found:
            return int(found.group(1))
    raise AssertionError("no request number in the prompt")


def answer(n: int) -> str:
    """The model's reply for request n: a call only that request asks for."""
    return json.dumps({"calls": [{"tool": "add", "args": {"a": n, "b": n + 1}, "reasoning": f"#{n}"}]})


def task_for(n: int) -> ts.PlannedTask:
    return ts.PlannedTask(id=f"t{n}", description=f"Add {n} and {n + 1} (request #{n})")


class EchoClient:
    """An async client that answers each request with that request's call,
    yielding to the loop first so that sessions interleave."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    async def chat_completion(self, *, messages, model, temperature, response_format, timeout, **extra):
        with self.lock:
            self.count += 1
        await asyncio.sleep(0.001)
        return answer(request_number(messages))


class EchoServer:
    """A loopback OpenAI-compatible server answering each request with that
    request's call after `delay` seconds."""

    def __init__(self, delay: float = 0.005) -> None:
        self.count = 0
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a real endpoint
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    outer.count += 1
                time.sleep(delay)
                payload = {"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant",
                                                    "content": answer(request_number(body["messages"]))}}],
                           "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.request_queue_size = 512
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def ledger() -> dict:
    gc.collect()  # objects other tests dropped release their handles now, not mid-test
    s = ts.stats()
    return {"handles": {k: v for k, v in s["handles"].items() if v}, "strings": s["strings"]}


class LoadTest(unittest.TestCase):
    def run_load(self, sel: ts.ToolSelector, reg: ts.ToolRegistry) -> dict:
        """N_ASYNC selections gathered on this thread's loop while N_THREADS
        threads each run PER_THREAD selections (and validations) on their own
        loops, all with the same selector and registry. Returns figures."""
        errors: list = []
        thread_results: dict = {}
        start_gate = threading.Barrier(N_THREADS + 1)

        def worker(w: int) -> None:
            try:
                start_gate.wait()
                base = 10_000 * (w + 1)

                async def many():
                    out = []
                    for k in range(PER_THREAD):
                        n = base + k
                        calls = await sel.select_tool_calls(task=task_for(n), tool_registry=reg)
                        out.append((n, calls))
                        v = reg.validate("add", {"a": n, "b": "x" if k & 1 else n})
                        assert v.valid == (not k & 1), v
                    return out

                thread_results[w] = asyncio.run(many())
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(w,), name=f"load-{w}") for w in range(N_THREADS)]
        for t in threads:
            t.start()

        async def gathered():
            start_gate.wait()
            t0 = time.perf_counter()
            res = await asyncio.gather(*[sel.select_tool_calls(task=task_for(n), tool_registry=reg)
                                         for n in range(N_ASYNC)])
            return res, time.perf_counter() - t0

        t0 = time.perf_counter()
        results, async_s = asyncio.run(gathered())
        for t in threads:
            t.join(120)
            self.assertFalse(t.is_alive(), f"{t.name} did not finish")
        total_s = time.perf_counter() - t0
        self.assertEqual(errors, [])

        def check(n, calls):
            self.assertEqual(len(calls), 1, f"request {n}: {calls}")
            self.assertEqual((calls[0].tool, calls[0].args), ("add", {"a": n, "b": n + 1}), f"request {n}")

        for n, calls in enumerate(results):
            check(n, calls)
        self.assertEqual(sorted(thread_results), list(range(N_THREADS)))
        for w, out in thread_results.items():
            self.assertEqual(len(out), PER_THREAD)
            for n, calls in out:
                check(n, calls)
        n_total = N_ASYNC + N_THREADS * PER_THREAD
        return {"selections": n_total, "async_s": async_s, "total_s": total_s}

    def leak_free(self, before: dict) -> None:
        after = ledger()
        self.assertEqual(after, before, "handles or strings left in the library's ledger")

    def test_async_and_threads_python_client(self):
        before = ledger()
        reg = make_registry()
        client = EchoClient()
        sel = ts.ToolSelector(client=client, config=ts.ToolSelectionConfig(model="m"))
        try:
            fig = self.run_load(sel, reg)
            self.assertEqual(client.count, fig["selections"])
        finally:
            sel.close()
            reg.close()
        self.leak_free(before)
        print(f"\n  python client: {fig['selections']} selections ({N_ASYNC} asyncio + {N_THREADS} threads x "
              f"{PER_THREAD}) in {fig['total_s']:.2f} s ({fig['selections'] / fig['total_s']:.0f}/s)", end=" ")

    def test_async_and_threads_go_http_transport(self):
        before = ledger()
        srv = EchoServer()
        self.addCleanup(srv.close)
        reg = make_registry()
        cfg = ts.ToolSelectionConfig(model="m", base_url=srv.url, api_key="sk-load-test")
        sel = ts.ToolSelector(config=cfg)
        try:
            fig = self.run_load(sel, reg)
            self.assertEqual(srv.count, fig["selections"])
        finally:
            sel.close()
            reg.close()
        self.leak_free(before)
        print(f"\n  Go HTTP transport: {fig['selections']} selections ({N_ASYNC} asyncio + {N_THREADS} threads x "
              f"{PER_THREAD}) in {fig['total_s']:.2f} s ({fig['selections'] / fig['total_s']:.0f}/s)", end=" ")


class LeakTest(unittest.TestCase):
    def leak_run(self, *extra: str) -> str:
        """bench/python_leak.py in a fresh process (so RSS is this workload's
        alone): bounded RSS growth and an empty ledger. Returns the growth."""
        script = ROOT / "bench" / "python_leak.py"
        if not script.exists():
            self.skipTest("bench/python_leak.py is not in this tree (installed package)")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "python"), env.get("PYTHONPATH")]))
        proc = subprocess.run([sys.executable, str(script), "-n", str(LEAK_ROUNDS),
                               "--max-growth-mib", str(LEAK_MAX_MIB), *extra],
                              env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        growth = re.search(r"growth ([+-][0-9.]+) MiB", proc.stdout)
        self.assertIsNotNone(growth, proc.stdout)
        return growth.group(1)

    def test_round_trips_rss_bounded(self):
        growth = self.leak_run()
        print(f"\n  {LEAK_ROUNDS} round trips (session): RSS growth {growth} MiB (bound {LEAK_MAX_MIB})", end=" ")

    def test_http_round_trips_rss_bounded(self):
        growth = self.leak_run("--http")
        print(f"\n  {LEAK_ROUNDS} round trips (Go HTTP): RSS growth {growth} MiB (bound {LEAK_MAX_MIB})", end=" ")


if __name__ == "__main__":
    unittest.main()
