#!/usr/bin/env python3
"""Leak check: 100,000 select/validate round trips through the C ABI, with
the growth of the resident set size reported.

    make python && PYTHONPATH=python python3 bench/python_leak.py [-n 100000] [--http]

Each round trip is one ToolRegistry.validate (alternately valid and invalid
arguments, so both reply shapes are exercised) and one full selection through
the sans-I/O session (begin -> chat via an in-process async client -> feed ->
done -> close); with --http the selection goes through the built-in Go HTTP
transport to a loopback OpenAI-compatible server in this process instead.
RSS is sampled after a warm-up of 5% of the rounds (so the Go
heap, the allocator arenas and the thread pool have reached their working
size) and at the end; the target is under 5 MB of growth. The library's own
ledger must end with no open handle and no unfreed string.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import toolselect as ts

ARGS_SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "minLength": 1},
                                                "days": {"type": "integer", "minimum": 1, "maximum": 14}},
               "required": ["city"]}
REPLY = json.dumps({"calls": [{"tool": "forecast", "args": {"city": "Paris", "days": 3}, "reasoning": "asked"}]})


class Client:
    async def chat_completion(self, **kw):
        return REPLY


def loopback_server() -> ThreadingHTTPServer:
    """An OpenAI-compatible chat completions endpoint answering REPLY (keep-alive)."""
    payload = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                          "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": REPLY}}],
                          "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

        def log_message(self, *a):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def rounds(sel: ts.ToolSelector, reg: ts.ToolRegistry, task: ts.PlannedTask, n: int) -> None:
    good, bad = {"city": "Paris", "days": 3}, {"city": "", "days": 99}
    for i in range(n):
        v = reg.validate("forecast", good if i & 1 else bad)
        assert v.valid == bool(i & 1)
        calls = await sel.select_tool_calls(task=task, tool_registry=reg)
        assert len(calls) == 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=100_000)
    ap.add_argument("--max-growth-mib", type=float, default=5.0)
    ap.add_argument("--http", action="store_true", help="select through the Go HTTP transport (loopback server)")
    args = ap.parse_args()

    reg = ts.ToolRegistry()
    reg.register("forecast", lambda city, days=1: f"{city}:{days}", description="Weather forecast",
                 parameters=ARGS_SCHEMA)
    httpd = None
    if args.http:
        httpd = loopback_server()
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        sel = ts.ToolSelector(config=ts.ToolSelectionConfig(model="m", base_url=url, api_key="sk-leak"))
    else:
        sel = ts.ToolSelector(client=Client(), config=ts.ToolSelectionConfig(model="m"))
    task = ts.PlannedTask("t1", "Weather in Paris for three days")

    warm = max(1, args.n // 20)
    start = time.perf_counter()
    asyncio.run(rounds(sel, reg, task, warm))
    gc.collect()
    base = rss_kib()
    asyncio.run(rounds(sel, reg, task, args.n))
    gc.collect()
    end = rss_kib()
    elapsed = time.perf_counter() - start
    sel.close()
    reg.close()
    if httpd is not None:
        httpd.shutdown()
        httpd.server_close()
    stats = ts.stats()
    growth_mib = (end - base) / 1024
    print(f"{args.n} select/validate round trips ({'Go HTTP transport' if args.http else 'session'}, +{warm} warm-up) in {elapsed:.1f} s "
          f"({elapsed / (args.n + warm) * 1e6:.0f} us per round trip)")
    print(f"RSS after warm-up {base / 1024:.1f} MiB, at the end {end / 1024:.1f} MiB, growth {growth_mib:+.2f} MiB "
          f"(target < {args.max_growth_mib} MiB)")
    print(f"library ledger at the end: {json.dumps(stats)}")
    ok = growth_mib < args.max_growth_mib and stats["strings"] == 0 and not any(stats["handles"].values())
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
