"""The offer budget, the search round and the empty-result kinds, with both
drivers: the caller's own client (sans-I/O session) and the built-in HTTP
transport against a loopback server speaking the OpenAI wire format."""

import asyncio
import json
import os
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, List

import toolselect as ts

from .helpers import run

HERE = os.path.dirname(os.path.abspath(__file__))
ASSISTANT = os.path.join(HERE, "..", "..", "examples", "assistant.json")  # 24 tools, get_weather among them
UMBRELLA = "Do I pack a parapluie for Lyon?"  # no word of get_weather, nor a WordNet relative of one
WEATHER_CALL = {"tool": "get_weather", "args": {"city": "Lyon"}}


def offered_in(messages: List[dict], tools: Any) -> List[str]:
    """The tool names a request offers: native `tools`, or the JSON mode's system prompt list."""
    if tools:
        return [t["function"]["name"] for t in tools]
    system = messages[0]["content"]
    return [t["name"] for t in json.loads(system[system.rindex("\nTools:\n") + len("\nTools:\n"):])]


def answer(native: bool, offered: List[str], always_search: bool = False, deep: bool = False) -> dict:
    """A model that calls get_weather when offered, and otherwise searches for it."""
    if deep:
        args = {"city": "Lyon", "x": "DEEP"}
        text = json.dumps({"calls": [{"tool": "get_weather", "args": args}]})
        return {"content": text.replace('"DEEP"', "[" * 5000 + "]" * 5000)}
    if "get_weather" in offered and not always_search:
        if native:
            return {"content": None, "tool_calls": [{"id": "1", "type": "function", "function": {
                "name": "get_weather", "arguments": json.dumps(WEATHER_CALL["args"])}}]}
        return {"content": json.dumps({"calls": [WEATHER_CALL]})}
    if native:
        return {"content": None, "tool_calls": [{"id": "1", "type": "function", "function": {
            "name": "search_tools", "arguments": json.dumps({"query": "weather forecast"})}}]}
    return {"content": json.dumps({"calls": [], "search": "weather forecast"})}


class WeatherClient:
    """The caller's own client."""

    def __init__(self, native=False, **kw):
        self.native, self.kw, self.requests = native, kw, []

    async def chat_completion(self, *, messages, model, temperature, response_format, timeout, tools=None, **_):
        self.requests.append({"messages": messages, "tools": tools, "model": model})
        return answer(self.native, offered_in(messages, tools), **self.kw)


class WeatherServer:
    """The same model behind a loopback OpenAI-compatible endpoint."""

    def __init__(self, **kw):
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                msg = answer("tools" in body, offered_in(body["messages"], body.get("tools")), **kw)
                data = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", **msg}}],
                                   "usage": {"prompt_tokens": 10, "completion_tokens": 2}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class OfferTest(unittest.TestCase):
    """Each test runs with both drivers."""

    def setUp(self):
        self.reg = ts.ToolRegistry()
        self.addCleanup(self.reg.close)
        self.assertEqual(self.reg.load_catalog(ASSISTANT), 24)

    def drivers(self, mode="json", **model):
        """Yields (name, selector factory, request list) for the caller's client and the HTTP transport."""
        client = WeatherClient(native=mode == "native", **model)
        # ToolSelector(top_k=...) is checked like the config.
        with self.assertRaisesRegex(ValueError, "top_k"):
            ts.ToolSelector(client=client, config=ts.ToolSelectionConfig(model="m"), top_k=-1)
        yield "client", (lambda **cfg: ts.ToolSelector(client=client, config=ts.ToolSelectionConfig(
            model="m", api_key="sk-unused", mode=mode, **cfg))), client.requests
        srv = WeatherServer(**model)
        self.addCleanup(srv.close)
        yield "http", (lambda **cfg: ts.ToolSelector(client=None, config=ts.ToolSelectionConfig(
            model="m", base_url=srv.url, api_key="sk-local", mode=mode, **cfg))), srv.requests

    def select(self, make, detailed=True, description=UMBRELLA, registry=None, override=None, **cfg):
        sel = make(**cfg)
        sel.top_k = override  # what ToolSelector(top_k=...) sets
        self.addCleanup(sel.close)
        fn = sel.select_tool_calls_detailed if detailed else sel.select_tool_calls
        return run(fn(task=ts.PlannedTask(id="t", description=description), tool_registry=registry or self.reg))

    def test_small_catalog_reaches_the_model_whole(self):
        for name, make, reqs in self.drivers():
            with self.subTest(driver=name):
                res = self.select(make)
                self.assertIsNone(res.failure)
                self.assertEqual([c.tool for c in res.calls], ["get_weather"])
                self.assertEqual(len(reqs), 1)
                self.assertEqual(res.offered, self.reg.names())
                self.assertEqual(len(res.offered), 24)

    def test_over_budget_the_model_searches_and_gets_get_weather(self):
        for mode in ("json", "native"):
            for name, make, reqs in self.drivers(mode):
                with self.subTest(driver=name, mode=mode):
                    res = self.select(make, offer_tokens=300, top_k=3)
                    self.assertIsNone(res.failure, res.failure)
                    self.assertEqual([c.tool for c in res.calls], ["get_weather"])
                    self.assertEqual(len(reqs), 2, "a second request after the search")
                    self.assertIn("get_weather", res.offered)
                    self.assertEqual(len(res.attempts), 1)
                    self.assertEqual(res.attempts[0].searches,
                                     [{"query": "weather forecast", "offered": res.offered}])

    def test_a_lexical_hit_makes_one_request(self):
        for name, make, reqs in self.drivers():
            with self.subTest(driver=name):
                res = self.select(make, description="What is the weather forecast in Lyon?", offer_tokens=300, top_k=3)
                self.assertEqual([c.tool for c in res.calls], ["get_weather"])
                self.assertEqual(len(reqs), 1)
                self.assertEqual(res.attempts[0].searches, [])
                self.assertLess(len(res.offered), 24)

    def test_search_beyond_the_last_round_is_no_calls(self):
        for name, make, reqs in self.drivers(always_search=True):
            with self.subTest(driver=name):
                res = self.select(make, offer_tokens=300, top_k=3, max_searches=1)
                self.assertIsNone(res.failure, "the model's decision, not a failure")
                self.assertEqual(res.calls, [])
                self.assertEqual(len(reqs), 2)
                self.assertEqual(res.attempts[0].raw["unanswered_search"], "weather forecast")

    def test_top_k_overrides_the_budget(self):
        for name, make, reqs in self.drivers():
            with self.subTest(driver=name):
                res = self.select(make, offer_tokens=300, override=0)  # ToolSelector(top_k=0): every eligible tool
                self.assertEqual(len(res.offered), 24)
                self.assertEqual(len(reqs), 1)

    def test_nothing_eligible_is_a_kind_and_no_request(self):
        reg = ts.ToolRegistry()
        self.addCleanup(reg.close)
        reg.register_tools([{"name": "rm", "description": "Delete files.", "safe": False,
                             "parameters": {"type": "object"}}])
        for name, make, reqs in self.drivers():
            with self.subTest(driver=name):
                self.assertEqual(self.select(make, detailed=False, registry=reg), [])
                res = self.select(make, registry=reg)
                self.assertEqual(res.failure.kind, "no_eligible_tools")
                self.assertIn("1 unsafe", res.failure.message)
                self.assertEqual(res.offered, [])
                self.assertEqual(reqs, [])

    def test_nothing_ranked_without_search_is_a_kind(self):
        for name, make, reqs in self.drivers():
            with self.subTest(driver=name):
                res = self.select(make, offer_tokens=300, max_searches=0)
                self.assertEqual(res.failure.kind, "no_ranked_tools")
                self.assertEqual(reqs, [])

    def test_a_5000_deep_rejected_argument_is_readable(self):
        for name, make, reqs in self.drivers(deep=True):
            with self.subTest(driver=name):
                res = self.select(make)
                self.assertEqual(res.failure.kind, "fail_closed")
                rejected = res.attempts[0].raw["rejected"][0]
                self.assertEqual(rejected["tool"], "get_weather")
                self.assertIn("nests deeper than 64 levels", json.dumps(rejected["args"]))


if __name__ == "__main__":
    unittest.main()
