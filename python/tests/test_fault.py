"""Every fault of the Go fault server (internal/testing/faultserver) through the Python
package, with the built-in Go HTTP transport (client=None) and with a caller's
own client driving the session: the documented outcome (fallback once, then
[] plus a typed failure naming the kind), never a call that was not offered,
no goroutine left behind in the library, bounded memory for a 50 MB body.

TOOLSELECT_HARDENING_REPORT_PY=FILE writes the outcomes as JSON (the Python
column of the fault table in docs/hardening.md).
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import time
import unittest
from typing import Any, Dict, List, Optional, Tuple

import toolselect as ts

from .test_fault_server import CATALOG, OFFERABLE, FaultServer, URLLibClient, faults, rss_bytes

HUGE = {"huge_body", "huge_chunked"}
KEY = "sk-python-fault-table-0123456789abcdef"

# With the caller's own client the failure kind comes from what the client
# raises: an exception with status_code is http_status, a timeout is timeout,
# anything else transport. The urllib client refuses large bodies itself.
SESSION_KIND = {"huge_body": "transport", "huge_chunked": "transport"}


def task() -> ts.PlannedTask:
    return ts.PlannedTask("T1", "What is the weather in Paris?", [ts.SubTask("S1", "look up the weather")])


def expected(f: Dict[str, Any], driver: str, mode: str) -> Tuple[str, int]:
    kind, calls = f.get("kind", ""), f.get("calls", 0)
    if mode == "native" and f["name"] in ("prose", "echo_auth_content"):
        return "", 0  # native mode reads tool_calls; prose alone is zero calls
    if driver == "session":
        kind = SESSION_KIND.get(f["name"], kind)
    return kind, calls


class FaultTableTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = FaultServer()
        cls.table = faults()
        cls.reg = ts.ToolRegistry()
        cls.reg.register_tools(CATALOG)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.reg.close()
        cls.server.close()

    def selector(self, driver: str, base_url: str, model: str, fallback: Optional[str], mode: str = "json",
                 timeout_s: int = 1) -> ts.ToolSelector:
        cfg = ts.ToolSelectionConfig(model=model, fallback_model=fallback, timeout_s=timeout_s, mode=mode,
                                     base_url=base_url, api_key=KEY)
        client = URLLibClient(base_url, KEY) if driver == "session" else None
        return ts.ToolSelector(client=client, config=cfg)

    def check(self, res: ts.SelectionResult) -> None:
        for c in res.calls:
            self.assertIn(c.tool, OFFERABLE, "a call that was not offered came back")
            self.assertIn(c.tool, res.offered)
            self.assertTrue(self.reg.validate(c.tool, c.args))

    async def one(self, f: Dict[str, Any], driver: str, mode: str) -> str:
        kind, ncalls = expected(f, driver, mode)
        name = f["name"]
        # Slow faults wait for the 3 s attempt timeout; the others get 10 s so
        # that a loaded machine cannot turn them into timeouts.
        timeout_s = 3 if f.get("slow") else 10
        # Both models hit the fault.
        with self.selector(driver, self.server.base(name), "primary", "fallback", mode, timeout_s) as sel:
            res = await sel.select_tool_calls_detailed(task=task(), tool_registry=self.reg)
            plain = await sel.select_tool_calls(task=task(), tool_registry=self.reg)
        self.check(res)
        kinds = [a.kind if not a.ok else "ok" for a in res.attempts]
        if not kind:
            self.assertIsNone(res.failure, f"{name}/{driver}/{mode}: {res.failure}")
            self.assertEqual(kinds, ["ok"])
            self.assertEqual(len(res.calls), ncalls, name)
            self.assertEqual(len(plain), ncalls)
            line = f"ok, {len(res.calls)} call(s)"
        else:
            self.assertEqual(res.calls, [], name)
            self.assertEqual(plain, [])
            self.assertIsNotNone(res.failure, f"{name}/{driver}/{mode}")
            self.assertEqual(res.failure.kind, "fail_closed")
            self.assertEqual(kinds, [kind, kind], f"{name}/{driver}/{mode}: {res.attempts}")
            for a in res.attempts:
                self.assertTrue(a.message)
                self.assertIn(a.kind, res.failure.message)
            line = f"`{kind}` ×2 → `[]`, fail_closed"
        # Only the primary hits the fault; the fallback answers.
        with self.selector(driver, self.server.url, "fault:" + name, "fallback", mode, timeout_s) as sel:
            res = await sel.select_tool_calls_detailed(task=task(), tool_registry=self.reg)
        self.check(res)
        kinds = [a.kind if not a.ok else "ok" for a in res.attempts]
        if kind:
            self.assertEqual(kinds, [kind, "ok"], f"{name}/{driver}/{mode}: {res.attempts}")
            self.assertEqual([c.tool for c in res.calls], ["get_weather"])
            line += "; fallback recovers"
        else:
            self.assertEqual(kinds, ["ok"])
        return line

    def test_fault_table(self) -> None:
        lib_goroutines = self.settled_goroutines()
        outcomes: Dict[str, Dict[str, str]] = {}

        async def run_all() -> None:
            sem = asyncio.Semaphore(16)

            async def bounded(f: Dict[str, Any], driver: str, mode: str) -> None:
                async with sem:
                    line = await self.one(f, driver, mode)
                outcomes.setdefault(f"{f['name']}/{mode}", {})[driver] = line

            jobs = []
            for f in self.table:
                if f["name"] in HUGE:
                    continue  # test_huge_body, alone, for the memory figure
                for mode in ("json", "native"):
                    if mode == "native" and not f.get("content"):
                        continue
                    for driver in ("http", "session"):
                        jobs.append(bounded(f, driver, mode))
            results = await asyncio.gather(*jobs, return_exceptions=True)
            errors = [r for r in results if isinstance(r, BaseException)]
            if errors:
                raise errors[0]

        start = time.monotonic()
        asyncio.run(run_all())
        elapsed = time.monotonic() - start
        self.assertLess(elapsed, 60)
        # Idle keep-alive connections of the library's HTTP client stay pooled
        # (2 goroutines each, at most 2 per host); nothing else may remain.
        after = self.settled_goroutines(limit=lib_goroutines + 6)
        self.assertLessEqual(after, lib_goroutines + 6, "goroutines left behind in the library")
        stats = ts.stats()
        self.assertEqual(stats["strings"], 0)
        self.assertEqual(stats["handles"].get("session", 0), 0)
        self.assertEqual(stats["handles"].get("cancel token", 0), 0)
        report = os.environ.get("TOOLSELECT_HARDENING_REPORT_PY")
        if report:
            with open(report, "w") as fh:
                json.dump({"faults_py": outcomes, "goroutines": {"before": lib_goroutines, "after": after}}, fh,
                          indent=2, sort_keys=True)

    def settled_goroutines(self, limit: int = 0, wait: float = 5.0) -> int:
        deadline = time.monotonic() + wait
        n = ts.stats()["goroutines"]
        while n > limit and time.monotonic() < deadline:
            time.sleep(0.05)
            n = ts.stats()["goroutines"]
        return n

    def test_huge_body(self) -> None:
        """A 50 MB body, announced or chunked, is refused without being read
        whole: the process's RSS grows by far less than one body."""
        figures: Dict[str, float] = {}
        rows: Dict[str, Dict[str, str]] = {}
        for name in sorted(HUGE):
            for driver in ("http", "session"):
                gc.collect()
                before = rss_bytes()
                with self.selector(driver, self.server.base(name), "primary", "fallback", timeout_s=30) as sel:
                    res = asyncio.run(sel.select_tool_calls_detailed(task=task(), tool_registry=self.reg))
                grown = rss_bytes() - before
                want = SESSION_KIND.get(name, "response_too_large") if driver == "session" else "response_too_large"
                self.assertEqual([a.kind for a in res.attempts], [want, want], res.attempts)
                self.assertEqual(res.calls, [])
                self.assertLess(grown, 40 << 20, f"{name}/{driver}: RSS grew {grown >> 20} MiB")
                figures[f"{name}/{driver}"] = round(grown / (1 << 20), 1)
                rows.setdefault(f"{name}/json", {})[driver] = (
                    f"`{want}` ×2 → `[]`, fail_closed; RSS {grown / (1 << 20):+.0f} MiB")
        report = os.environ.get("TOOLSELECT_HARDENING_REPORT_PY_HUGE")
        if report:
            with open(report, "w") as fh:
                json.dump({"huge_body_rss_growth_mib": figures, "faults_py": rows}, fh, indent=2, sort_keys=True)

    def test_failure_is_logged_once_as_warning(self) -> None:
        records: List[logging.LogRecord] = []

        class Collect(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                records.append(record)

        h = Collect(level=logging.DEBUG)
        log = logging.getLogger("toolselect")
        log.addHandler(h)
        old = log.level
        log.setLevel(logging.DEBUG)
        self.addCleanup(log.removeHandler, h)
        self.addCleanup(log.setLevel, old)
        with self.selector("http", self.server.base("status_503"), "primary", "fallback") as sel:
            calls = asyncio.run(sel.select_tool_calls(task=task(), tool_registry=self.reg))
        self.assertEqual(calls, [])
        warnings = [r for r in records if r.levelno == logging.WARNING]
        self.assertEqual(len(warnings), 1)
        self.assertIn("http_status", warnings[0].getMessage())
        self.assertIn("HTTP 503", warnings[0].getMessage())


if __name__ == "__main__":
    unittest.main()
