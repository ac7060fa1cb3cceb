"""The provider behaviours of testdata/providers, through both
drivers: the built-in Go transport (``client=None``) and the caller's own
client (the session's chat action carries the dialect's parameters, which the
client passes on). The loopback replica of each provider is the Go one the Go
and CLI tests use (``internal/testing/providerreplica/cmd``), built once here."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional
from unittest import mock

import toolselect as ts

from .helpers import make_registry

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CASES = os.path.join(ROOT, "testdata", "providers")
CLEAN_ENV = {k: "" for k in ("LLM_COMMON_TOOL_SELECTION_BASE_URL", "LLM_COMMON_TOOL_SELECTION_API_KEY",
                             "OPENAI_BASE_URL", "OPENAI_API_KEY")}
#: Cases whose body is not one JSON completion: a caller's own client reads
#: its HTTP itself (the OpenAI SDK refuses such bodies), so only the built-in
#: transport is asked to read them.
TRANSPORT_ONLY = {"stream-not-asked-for", "json-with-done-terminator"}

_replica_bin: Optional[str] = None


def replica_bin() -> str:
    global _replica_bin
    if _replica_bin is None:
        go = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else None)
        if go is None:
            raise unittest.SkipTest("needs Go to build the provider replica (internal/testing/providerreplica/cmd)")
        out = os.path.join(tempfile.mkdtemp(prefix="ts-replica-"), "providerreplica")
        subprocess.run([go, "build", "-o", out, "./internal/testing/providerreplica/cmd"], cwd=ROOT, check=True)
        _replica_bin = out
    return _replica_bin


class Replica:
    """One case served by the Go replica on 127.0.0.1."""

    def __init__(self, path: str) -> None:
        self.proc = subprocess.Popen([replica_bin(), path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        self._requests: Optional[List[Dict[str, Any]]] = None

    def requests(self) -> List[Dict[str, Any]]:
        if self._requests is None:
            out, _ = self.proc.communicate(timeout=30)
            self._requests = json.loads(out.strip().splitlines()[-1])
        return self._requests


def lookup(body: Dict[str, Any], path: str) -> Any:
    cur: Any = body
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return KeyError
        cur = cur[part]
    return cur


class HTTPError(Exception):
    """What an OpenAI SDK raises for an error status: the status, the body
    (``.body``: the decoded JSON's "error" member, or the whole document, or
    the text) and the response with its headers (``.response.headers``)."""

    class _Response:
        def __init__(self, headers: Dict[str, str]) -> None:
            self.headers = {k.lower(): v for k, v in headers.items()}

    def __init__(self, status: int, body: str, headers: Optional[Dict[str, str]] = None) -> None:
        super().__init__(f"Error code: {status} - {body}")
        self.status_code = status
        try:
            doc = json.loads(body)
            self.body: Any = doc.get("error", doc) if isinstance(doc, dict) else doc
        except ValueError:
            self.body = body
        self.response = self._Response(headers or {})


class OwnClient:
    """A caller's client, as OpenAI-SDK-shaped as it gets without the SDK:
    standard fields as keywords, provider fields in ``extra_body``."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.kwargs: List[Dict[str, Any]] = []

    async def chat_completion(self, messages, model, temperature=None, response_format=None, timeout=None,
                              tools=None, max_tokens=None, max_completion_tokens=None, reasoning_effort=None,
                              extra_body=None):
        self.kwargs.append({"temperature": temperature, "reasoning_effort": reasoning_effort, "extra_body": extra_body})
        body: Dict[str, Any] = {"model": model, "messages": [dict(m) for m in messages], "stream": False}
        for k, v in (("temperature", temperature), ("response_format", response_format), ("tools", tools),
                     ("max_tokens", max_tokens), ("max_completion_tokens", max_completion_tokens),
                     ("reasoning_effort", reasoning_effort)):
            if v is not None:
                body[k] = v
        body.update(extra_body or {})
        req = urllib.request.Request(self.base_url + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})

        def send() -> Any:
            try:
                with urllib.request.urlopen(req, timeout=timeout) as r:
                    return json.loads(r.read())
            except urllib.error.HTTPError as e:
                raise HTTPError(e.code, e.read().decode(), dict(e.headers.items())) from None

        return await asyncio.get_running_loop().run_in_executor(None, send)


WEATHER = {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": json.dumps(
    {"calls": [{"tool": "get_weather", "args": {"city": "Paris"}, "reasoning": "the task asks for it"}]})}}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 10}}


class ScriptedOwn:
    """A caller's client that answers from a script (an exception is
    raised): with ``base_url`` as an OpenAI SDK client has it, with the SDK
    client wrapped (``wrapped_base_url``: llm-common's clients hold one as
    ``.client``), or with neither."""

    class _SDK:
        def __init__(self, base_url: str) -> None:
            self.base_url = base_url

    def __init__(self, replies: List[Any], base_url: Optional[str] = None,
                 wrapped_base_url: Optional[str] = None) -> None:
        if base_url is not None:
            self.base_url = base_url
        if wrapped_base_url is not None:
            self.client = self._SDK(wrapped_base_url)
        self.replies = list(replies)
        self.kwargs: List[Dict[str, Any]] = []

    async def chat_completion(self, messages, model, temperature=None, response_format=None, timeout=None,
                              tools=None, max_tokens=None, max_completion_tokens=None, reasoning_effort=None,
                              extra_body=None):
        self.kwargs.append({"temperature": temperature, "max_tokens": max_tokens,
                            "max_completion_tokens": max_completion_tokens, "reasoning_effort": reasoning_effort,
                            "extra_body": extra_body})
        r = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(r, Exception):
            raise r
        return r


class ProviderCasesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.reg = make_registry()
        self.addCleanup(self.reg.close)

    def cases(self):
        names = sorted(f for f in os.listdir(CASES) if f.endswith(".json"))
        self.assertGreaterEqual(len(names), 15)
        for f in names:
            with open(os.path.join(CASES, f)) as fh:
                yield f[:-5], os.path.join(CASES, f), json.load(fh)

    def run_case(self, name: str, path: str, case: Dict[str, Any], own: bool) -> None:
        rep = Replica(path)
        cfg = dict(case["config"])
        cfg.setdefault("provider", "auto")
        client = OwnClient(rep.url) if own else None
        if own:
            cfg.pop("base_url", None)
        else:
            cfg.update(base_url=rep.url, api_key="sk-local")
        sel = ts.ToolSelector(client=client, config=ts.ToolSelectionConfig(**cfg))
        self.addCleanup(sel.close)
        with mock.patch.dict(os.environ, CLEAN_ENV):
            res = asyncio.run(sel.select_tool_calls_detailed(task=ts.PlannedTask(id="t1", description="What is the weather in Paris?"),
                                                             tool_registry=self.reg))
        reqs = rep.requests()
        expect = case["expect"]
        if "requests" in expect:
            self.assertEqual(len(reqs), expect["requests"], "requests sent")
        if expect.get("requests", 1) == 0:
            self.assertIsNotNone(res.failure, res)
            self.assertEqual(res.attempts[-1].kind, expect["kind"], res.attempts[-1].message)
            for w in expect.get("message_contains", []):
                self.assertIn(w, res.attempts[-1].message)
            return
        self.assertTrue(reqs, "no request reached the replica")
        last = res.attempts[-1]
        if expect.get("kind"):
            self.assertIsNotNone(res.failure, res)
            self.assertEqual(last.kind, expect["kind"], last.message)
            for w in expect.get("message_contains", []):
                self.assertIn(w, last.message)
        else:
            self.assertIsNone(res.failure, res.failure)
            got = [{"tool": c.tool, "args": c.args} for c in res.calls]
            self.assertEqual(got, expect["calls"])
        self.assertEqual(last.raw.get("dialect", ""), expect.get("dialect", ""))
        self.assertEqual(last.raw.get("adapted"), expect.get("adapted"))
        self.assertEqual(last.raw.get("repaired"), expect.get("repaired"))
        final = reqs[-1]
        for k, v in (case.get("request", {}).get("has") or {}).items():
            self.assertEqual(lookup(final, k), v, f"{k} in {final}")
        for k in case.get("request", {}).get("absent") or []:
            self.assertIs(lookup(final, k), KeyError, f"{k} must be absent")

    def test_builtin_transport(self) -> None:
        for name, path, case in self.cases():
            with self.subTest(case=name):
                self.run_case(name, path, case, own=False)

    def test_own_client(self) -> None:
        for name, path, case in self.cases():
            # A case that is the go-openai client's own behaviour (a refusal
            # before sending) has no replay through the caller's client.
            if name in TRANSPORT_ONLY or case.get("client") == "go-openai":
                continue
            with self.subTest(case=name):
                self.run_case(name, path, case, own=True)

    def own_select(self, case: str, **cfg: Any):
        """One selection of a case's replica through OwnClient: the client,
        the calls and the requests the replica received."""
        rep = Replica(os.path.join(CASES, case + ".json"))
        client = OwnClient(rep.url)
        sel = ts.ToolSelector(client=client, config=ts.ToolSelectionConfig(**cfg))
        self.addCleanup(sel.close)
        calls = asyncio.run(sel.select_tool_calls(task=ts.PlannedTask(id="t1", description="What is the weather in Paris?"),
                                                  tool_registry=self.reg))
        return client, calls, rep.requests()

    def test_own_client_gets_dialect_params(self) -> None:
        client, calls, _ = self.own_select("deepseek-v4-thinks-by-default", provider="deepseek", model="deepseek-v4-flash")
        self.assertEqual([c.tool for c in calls], ["get_weather"])
        self.assertEqual(client.kwargs[0]["extra_body"], {"thinking": {"type": "disabled"}})

    def test_reasoning_model_gets_no_temperature(self) -> None:
        client, calls, reqs = self.own_select("openai-o3-mini-refuses-temperature", provider="openai", model="o3-mini")
        self.assertEqual(len(reqs), 1)
        self.assertEqual([c.tool for c in calls], ["get_weather"])
        self.assertIsNone(client.kwargs[0]["temperature"])
        self.assertEqual(client.kwargs[0]["reasoning_effort"], "low")

    def test_llm_common_response_raw_completion_is_read(self) -> None:
        # llm-common's LLMResponse: content flattened, the provider's
        # completion in metadata["raw_response"]: the raw one is read, so a
        # reasoning-only reply says so instead of "the reply is empty".
        class LLMResponse:
            def __init__(self, raw: Dict[str, Any]) -> None:
                self.content = raw["choices"][0]["message"]["content"] or ""
                self.finish_reason = raw["choices"][0]["finish_reason"]
                self.metadata = {"raw_response": raw}

        raw = {"choices": [{"index": 0, "finish_reason": "length", "message": {
            "role": "assistant", "content": "", "reasoning_content": "thinking " * 100}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 512}}

        class Client:
            async def chat_completion(self, messages, model=None, temperature=None, max_tokens=None, **kwargs):
                return LLMResponse(raw)

        sel = ts.ToolSelector(client=Client(), config=ts.ToolSelectionConfig(model="deepseek-v4-flash", provider="deepseek"))
        self.addCleanup(sel.close)
        res = asyncio.run(sel.select_tool_calls_detailed(task=ts.PlannedTask(id="t1", description="weather in Paris"),
                                                         tool_registry=self.reg))
        self.assertEqual(res.attempts[0].kind, "truncated")
        self.assertIn("512 completion tokens", res.attempts[0].message)

    # -- a caller's own client: whose endpoint decides the dialect ------------

    def own_session(self, client: "ScriptedOwn", **cfg: Any) -> ts.SelectionResult:
        sel = ts.ToolSelector(client=client, config=ts.ToolSelectionConfig(**cfg))
        self.addCleanup(sel.close)
        with mock.patch.dict(os.environ, CLEAN_ENV):
            return asyncio.run(sel.select_tool_calls_detailed(
                task=ts.PlannedTask(id="t1", description="What is the weather in Paris?"), tool_registry=self.reg))

    def test_own_client_base_url_decides_the_dialect(self) -> None:
        # An OpenAI SDK client's base_url (read as the SDK exposes it) is
        # the endpoint: a DeepSeek client gets DeepSeek's dialect, with
        # max_tokens, never OpenAI's max_completion_tokens.
        for client in (ScriptedOwn([WEATHER], base_url="https://api.deepseek.com/v1"),
                       ScriptedOwn([WEATHER], wrapped_base_url="https://api.deepseek.com")):
            res = self.own_session(client, model="deepseek-v4-flash", max_tokens=512)
            self.assertIsNone(res.failure, res.failure)
            self.assertEqual(res.attempts[0].raw.get("dialect"), "deepseek")
            kw = client.kwargs[0]
            self.assertEqual(kw["max_tokens"], 512)
            self.assertIsNone(kw["max_completion_tokens"])
            self.assertEqual(kw["extra_body"], {"thinking": {"type": "disabled"}})

    def test_own_client_without_base_url_is_not_openai(self) -> None:
        # No base URL to read: the model name decides (a known family gets
        # its switches), then generic; an empty base URL is not taken for
        # api.openai.com.
        client = ScriptedOwn([WEATHER])
        res = self.own_session(client, model="acme-chat-7b", max_tokens=512)
        self.assertIsNone(res.failure, res.failure)
        self.assertEqual(res.attempts[0].raw.get("dialect", ""), "")  # generic: the plain request
        kw = client.kwargs[0]
        self.assertEqual((kw["max_tokens"], kw["max_completion_tokens"]), (512, None))
        self.assertEqual(kw["temperature"], 0.0)
        self.assertIsNone(kw["extra_body"])
        client = ScriptedOwn([WEATHER])
        res = self.own_session(client, model="deepseek-v4-flash", max_tokens=512)
        self.assertEqual(res.attempts[0].raw.get("dialect"), "deepseek")
        self.assertEqual(client.kwargs[0]["extra_body"], {"thinking": {"type": "disabled"}})
        client = ScriptedOwn([WEATHER])
        res = self.own_session(client, model="o3-mini")
        self.assertEqual(res.attempts[0].raw.get("dialect"), "openai-reasoning")
        self.assertIsNone(client.kwargs[0]["temperature"])
        self.assertEqual(client.kwargs[0]["reasoning_effort"], "low")

    def test_own_client_learning_is_not_shared(self) -> None:
        # What one unknown endpoint taught (its server refuses temperature)
        # is not applied to another caller's client whose endpoint is
        # unknown too: each learns for itself.
        refusal = HTTPError(400, json.dumps({"error": {"message": "Unsupported parameter: 'temperature' is not supported with this model."}}))
        first = ScriptedOwn([refusal, WEATHER])
        res = self.own_session(first, model="shared-name")
        self.assertIsNone(res.failure, res.failure)
        self.assertEqual(res.attempts[0].raw.get("adapted"), ["temperature: omitted"])
        self.assertIsNone(first.kwargs[1]["temperature"])
        second = ScriptedOwn([WEATHER])
        res = self.own_session(second, model="shared-name")
        self.assertIsNone(res.failure, res.failure)
        self.assertEqual(second.kwargs[0]["temperature"], 0.0, "learned from another endpoint")
        self.assertIsNone(res.attempts[0].raw.get("adapted"))

    def test_config_settings(self) -> None:
        c = ts.ToolSelectionConfig()
        self.assertEqual((c.provider, c.reasoning, c.max_tokens), ("auto", "off", 0))
        with mock.patch.dict(os.environ, {"LLM_COMMON_TOOL_SELECTION_PROVIDER": "DeepSeek",
                                          "LLM_COMMON_TOOL_SELECTION_REASONING": "high",
                                          "LLM_COMMON_TOOL_SELECTION_MAX_TOKENS": "2048"}):
            c = ts.ToolSelectionConfig.from_env()
        self.assertEqual((c.provider, c.reasoning, c.max_tokens), ("deepseek", "high", 2048))
        with self.assertRaises(ValueError) as cm:
            ts.ToolSelectionConfig(provider="bedrock")
        self.assertIn("provider must be one of auto, generic, openai", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
