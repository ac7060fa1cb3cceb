import asyncio
import json
import unittest

import toolselect as ts

from .helpers import FakeClient, Reply, SyncClient, calls_json, make_registry, run, task

CFG = ts.ToolSelectionConfig(model="primary", fallback_model="fallback")


class SelectorTest(unittest.TestCase):
    def setUp(self):
        self.reg = make_registry()
        self.addCleanup(self.reg.close)

    def select(self, client, config=CFG, detailed=False, **kw):
        query = kw.pop("query", None)
        sel = ts.ToolSelector(client=client, config=config, **kw)
        self.addCleanup(sel.close)
        fn = sel.select_tool_calls_detailed if detailed else sel.select_tool_calls
        return run(fn(task=task(), tool_registry=self.reg, query=query, context={"user": "u1"}))

    def test_happy_path(self):
        client = FakeClient(Reply(calls_json(("add", {"a": 1, "b": 2}), ("get_weather", {"city": "Paris"}))))
        calls = self.select(client)
        self.assertEqual(calls, [ts.ToolCall("add", {"a": 1, "b": 2}, "because"),
                                 ts.ToolCall("get_weather", {"city": "Paris"}, "because")])
        self.assertEqual(client.models, ["primary"])
        req = client.requests[0]
        self.assertEqual(req["temperature"], 0.0)
        self.assertEqual(req["response_format"], {"type": "json_object"})
        self.assertEqual(req["timeout"], 30)
        self.assertEqual([m["role"] for m in req["messages"]], ["system", "user"])
        self.assertIn("get_weather", req["messages"][0]["content"])
        self.assertIn("u1", req["messages"][1]["content"])
        self.assertEqual(self.reg.run(calls[0]), 3)

    def test_plain_string_and_sync_client(self):
        self.assertEqual(len(self.select(FakeClient(calls_json(("add", {"a": 1, "b": 2}))))), 1)
        self.assertEqual(len(self.select(SyncClient(calls_json(("add", {"a": 1, "b": 2}))))), 1)

    def test_cap_seven_to_five(self):
        seven = calls_json(*[("add", {"a": i, "b": i}) for i in range(7)])
        res = self.select(FakeClient(seven), detailed=True)
        self.assertEqual([c.args["a"] for c in res.calls], [0, 1, 2, 3, 4])
        self.assertEqual([d.reason for d in res.dropped], ["max_calls", "max_calls"])

    def test_fallback_after_network_error(self):
        client = FakeClient(ConnectionError("connection refused"), Reply(calls_json(("add", {"a": 1, "b": 2}))))
        res = self.select(client, detailed=True)
        self.assertEqual(client.models, ["primary", "fallback"])
        self.assertEqual(len(res.calls), 1)
        self.assertEqual([(a.model, a.ok, a.kind) for a in res.attempts],
                         [("primary", False, "transport"), ("fallback", True, "")])

    def test_fallback_after_timeout(self):
        client = FakeClient(asyncio.TimeoutError(), calls_json(("add", {"a": 1, "b": 2})))
        res = self.select(client, detailed=True)
        self.assertEqual(res.attempts[0].kind, "timeout")
        self.assertEqual(len(res.calls), 1)

    def test_fallback_after_parse_error(self):
        client = FakeClient("I think you should use add", calls_json(("add", {"a": 1, "b": 2})))
        res = self.select(client, detailed=True)
        self.assertEqual(client.models, ["primary", "fallback"])
        self.assertEqual(res.attempts[0].kind, "parse")
        self.assertEqual(res.calls[0].tool, "add")

    def test_total_failure_returns_empty_with_two_calls(self):
        client = FakeClient(ConnectionError("down"), "not json")
        with self.assertLogs("toolselect", "WARNING") as logs:
            calls = self.select(client)
        self.assertEqual(calls, [])
        self.assertEqual(len(client.requests), 2)
        self.assertIn("fail_closed", "\n".join(logs.output))
        res = self.select(FakeClient(ConnectionError("down"), "not json"), detailed=True)
        self.assertEqual(res.failure.kind, "fail_closed")
        self.assertEqual([a.kind for a in res.failure.attempts], ["transport", "parse"])

    def test_no_fallback_configured_means_one_call(self):
        client = FakeClient("nope")
        self.assertEqual(self.select(client, config=ts.ToolSelectionConfig(model="only")), [])
        self.assertEqual(client.models, ["only"])

    def test_markdown_fences(self):
        fenced = "```json\n" + calls_json(("add", {"a": 1, "b": 2})) + "\n```\n"
        self.assertEqual(self.select(FakeClient(fenced))[0].tool, "add")
        bare = "```\n" + calls_json(("add", {"a": 1, "b": 2})) + "\n```"
        self.assertEqual(self.select(FakeClient(bare))[0].tool, "add")

    def test_args_as_json_string(self):
        reply = json.dumps({"calls": [{"tool": "add", "args": json.dumps({"a": 1, "b": 2})}]})
        self.assertEqual(self.select(FakeClient(reply))[0].args, {"a": 1, "b": 2})

    def test_unknown_tool_rejected(self):
        client = FakeClient(calls_json(("rm_rf", {})), calls_json(("rm_rf", {})))
        res = self.select(client, detailed=True)
        self.assertEqual(res.calls, [])
        self.assertEqual([a.kind for a in res.attempts], ["validation", "validation"])
        self.assertIn("unknown_tool", res.attempts[0].message)

    def test_args_validated_against_schema(self):
        client = FakeClient(calls_json(("add", {"a": "one", "b": 2})), calls_json(("add", {"a": 1, "b": 2})))
        res = self.select(client, detailed=True)
        self.assertEqual(res.attempts[0].kind, "validation")
        self.assertIn("/a", res.attempts[0].message)
        self.assertEqual(res.calls, [ts.ToolCall("add", {"a": 1, "b": 2}, "because")])

    def test_fail_open_drops_only_invalid_calls(self):
        cfg = ts.ToolSelectionConfig(model="primary", fail_closed=False)
        client = FakeClient(calls_json(("add", {"a": 1, "b": 2}), ("add", {"a": "x"}), ("nope", {}),
                                       ("get_weather", {"city": "Oslo"})))
        res = self.select(client, config=cfg, detailed=True)
        self.assertEqual([c.tool for c in res.calls], ["add", "get_weather"])
        self.assertEqual(sorted(d.reason for d in res.dropped), ["invalid_args", "unknown_tool"])
        self.assertIsNone(res.failure)
        self.assertEqual(client.models, ["primary"])

    def test_unknown_tool_suggests_what_the_caller_may_run(self):
        self.reg.register("get_weathers", lambda: 0, description="all the weather", parameters={"type": "object"},
                          safe=False)
        cfg = ts.ToolSelectionConfig(model="primary", fail_closed=False)
        client = FakeClient(calls_json(("get_wether", {"city": "Oslo"})))
        res = self.select(client, config=cfg, detailed=True)
        [d] = res.dropped
        self.assertEqual(d.reason, "unknown_tool")
        self.assertEqual(d.did_you_mean, ["get_weather"])  # the unsafe get_weathers is not the caller's
        self.assertIn('(did you mean "get_weather"?)', d.raw["message"])

    def test_unsafe_and_role_tools_not_offered(self):
        self.reg.register("rm", lambda: 0, description="delete everything", parameters={"type": "object"},
                          safe=False)
        self.reg.register("admin_only", lambda: 0, description="admin", parameters={"type": "object"},
                          roles=("admin",))
        client = FakeClient(calls_json(("rm", {})), calls_json(("admin_only", {})))
        res = self.select(client, detailed=True)
        self.assertNotIn("rm", res.offered)
        self.assertNotIn("admin_only", res.offered)
        self.assertEqual(res.calls, [])
        self.assertIn("not_offered", res.attempts[0].message)
        res = self.select(FakeClient(calls_json(("rm", {}), ("admin_only", {}), ("add", {"a": 1, "b": 2}))),
                          detailed=True, config=ts.ToolSelectionConfig(model="primary", fail_closed=False))
        # Each not_offered drop names the one reason that applied.
        self.assertEqual([(d.tool, d.reason, d.rule) for d in res.dropped],
                         [("rm", "not_offered", "unsafe"), ("admin_only", "not_offered", "role")])
        self.assertEqual([c.tool for c in res.calls], ["add"])
        res = self.select(FakeClient(calls_json(("admin_only", {}))), detailed=True, roles=["admin"])
        self.assertEqual([c.tool for c in res.calls], ["admin_only"])

    def test_top_k_offers_the_best_ranked_tools(self):
        for name, desc in (("send_email", "Send an email message"), ("read_file", "Read a file from disk"),
                           ("list_calendar", "List calendar events")):
            self.reg.register(name, lambda **kw: 0, description=desc, parameters={"type": "object"})
        res = self.select(FakeClient(calls_json(("get_weather", {"city": "Paris"}))), detailed=True, top_k=1,
                          query="weather in Paris")
        self.assertEqual(res.offered, ["get_weather"])
        self.assertEqual([c.tool for c in res.calls], ["get_weather"])
        # A call to a tool that was not offered is rejected.
        res = self.select(FakeClient(calls_json(("add", {"a": 1, "b": 2}))), detailed=True, top_k=1,
                          query="weather in Paris")
        self.assertEqual(res.calls, [])
        self.assertIn("not_offered", res.attempts[0].message)
        self.assertEqual(res.failure.kind, "fail_closed")
        res = self.select(FakeClient(calls_json(("add", {"a": 1, "b": 2}))), detailed=True, top_k=1,
                          query="weather in Paris", config=ts.ToolSelectionConfig(model="primary", fail_closed=False))
        self.assertEqual([(d.tool, d.rule) for d in res.dropped], [("add", "not_in_offer")])
        # Without top_k the budget decides: these few tools fit, so every eligible one is offered;
        # top_k=0 offers every eligible tool whatever the budget.
        res = self.select(FakeClient(calls_json(("add", {"a": 1, "b": 2}))), detailed=True)
        self.assertEqual(len(res.offered), 5)
        res = self.select(FakeClient(calls_json(("add", {"a": 1, "b": 2}))), detailed=True, top_k=0,
                          config=ts.ToolSelectionConfig(model="primary", offer_tokens=1))
        self.assertEqual(len(res.offered), 5)
        for bad in (-1, 1001, True, "3", 2.5):
            with self.subTest(top_k=bad), self.assertRaisesRegex(ValueError, "top_k"):
                ts.ToolSelector(client=FakeClient(), config=CFG, top_k=bad)

    def test_message_factory(self):
        class Msg:
            def __init__(self, *, role, content):
                self.role, self.content = role, content

        client = FakeClient(calls_json(("add", {"a": 1, "b": 2})))
        self.select(client, message_factory=Msg)
        self.assertTrue(all(isinstance(m, Msg) for m in client.requests[0]["messages"]))

    def test_duck_typed_registry_and_task(self):
        class PyRegistry:
            def get_tools_schema(self):
                return json.dumps([{"name": "search", "description": "Search the web",
                                    "parameters": {"type": "object", "properties": {"q": {"type": "string"}},
                                                   "required": ["q"]}}])

        class Task:
            description = "find the news"
            sub_tasks = [type("S", (), {"description": "search"})()]

        sel = ts.ToolSelector(client=FakeClient(calls_json(("search", {"q": "news"}))), config=CFG)
        self.addCleanup(sel.close)
        calls = run(sel.select_tool_calls(task=Task(), tool_registry=PyRegistry()))
        self.assertEqual(calls, [ts.ToolCall("search", {"q": "news"}, "because")])
        # The same schema text reuses the compiled registry, also from another selector.
        before = ts.stats()["handles"].get("registry", 0)
        run(sel.select_tool_calls(task=Task(), tool_registry=PyRegistry()))
        other = ts.ToolSelector(client=FakeClient(calls_json(("search", {"q": "news"}))), config=CFG)
        run(other.select_tool_calls(task=Task(), tool_registry=PyRegistry()))
        self.assertEqual(ts.stats()["handles"].get("registry", 0), before)

    def test_caller_mistakes_raise(self):
        sel = ts.ToolSelector(client=FakeClient("x"), config=CFG)
        self.addCleanup(sel.close)

        class NotJSON:
            def get_tools_schema(self):
                return "this is not json"

        with self.assertRaisesRegex(ValueError, "did not return JSON"):
            run(sel.select_tool_calls(task=task(), tool_registry=NotJSON()))

        class BrokenArray:  # read by the library, which names the line and column
            def get_tools_schema(self):
                return '[\n  {"name": "a", "description": "A.",\n   "parameters": {"type": objec}}\n]'

        with self.assertRaisesRegex(ValueError, "did not return JSON: .*catalog line 3, column 27: invalid JSON"):
            run(sel.select_tool_calls(task=task(), tool_registry=BrokenArray()))

        class NotAnArray:
            def get_tools_schema(self):
                return '{"name": "a"}'

        with self.assertRaisesRegex(ValueError, "must return a JSON array"):
            run(sel.select_tool_calls(task=task(), tool_registry=NotAnArray()))
        with self.assertRaises(TypeError):
            run(sel.select_tool_calls(task=object(), tool_registry=self.reg))
        with self.assertRaises(ts.ArgumentError):
            run(sel.select_tool_calls(task=ts.PlannedTask("t", ""), tool_registry=self.reg))
        with self.assertRaises(TypeError):
            ts.ToolSelector(client=object(), config=CFG)

    def test_collected_open_is_released_quietly(self):
        """llm-common builds a selector per task and never closes it: no
        warning, and its native selector is released."""
        import gc
        import warnings

        before = ts.stats()["handles"].get("selector", 0)
        sel = ts.ToolSelector(client=FakeClient(calls_json()), config=CFG)
        run(sel.select_tool_calls(task=task(), tool_registry=self.reg))
        self.assertEqual(ts.stats()["handles"].get("selector", 0), before + 1)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            del sel
            gc.collect()
        self.assertEqual([str(x.message) for x in w], [])
        self.assertEqual(ts.stats()["handles"].get("selector", 0), before)

    def test_close(self):
        sel = ts.ToolSelector(client=FakeClient(calls_json()), config=CFG)
        run(sel.select_tool_calls(task=task(), tool_registry=self.reg))
        sel.close()
        sel.close()
        with self.assertRaises(ts.ToolSelectError):
            run(sel.select_tool_calls(task=task(), tool_registry=self.reg))


class ClosedSelectorTest(unittest.TestCase):
    def test_a_closed_selector_raises_handle_error(self):
        reg = make_registry()
        self.addCleanup(reg.close)
        sel = ts.ToolSelector(client=FakeClient(calls_json(("add", {"a": 1, "b": 2}))), config=CFG)
        sel.close()
        sel.close()  # idempotent
        for call in (lambda: run(sel.select_tool_calls(task=task(), tool_registry=reg)),
                     lambda: run(sel.select_tool_calls_detailed(task=task(), tool_registry=reg)),
                     lambda: sel.add_feedback("q", ["add"])):
            with self.assertRaises(ts.HandleError) as cm:
                call()
            self.assertIsInstance(cm.exception, ts.ToolSelectError)
            self.assertIn("closed", str(cm.exception))
        with ts.ToolSelector(client=None, config=ts.ToolSelectionConfig(base_url="http://127.0.0.1:9/v1")) as sel2:
            pass
        with self.assertRaises(ts.HandleError):
            run(sel2.select_tool_calls(task=task(), tool_registry=reg))


if __name__ == "__main__":
    unittest.main()
