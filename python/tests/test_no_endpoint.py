"""A built-in client that could only send to api.openai.com without a key is
refused when the selector is made, before any request."""

import os
import unittest
from unittest import mock

import toolselect as ts

CLEAN_ENV = {k: "" for k in ("LLM_COMMON_TOOL_SELECTION_BASE_URL", "LLM_COMMON_TOOL_SELECTION_API_KEY",
                             "OPENAI_BASE_URL", "OPENAI_API_KEY")}


class NoEndpointTest(unittest.TestCase):
    def test_nothing_configured_fails_at_construction(self):
        for cfg in (None, ts.ToolSelectionConfig(), ts.ToolSelectionConfig(base_url="https://api.openai.com/v1")):
            with self.subTest(cfg=cfg), mock.patch.dict(os.environ, CLEAN_ENV):
                with self.assertRaises(ts.ArgumentError) as cm:
                    ts.ToolSelector(config=cfg)
                msg = str(cm.exception)
                for want in ("config.base_url", "LLM_COMMON_TOOL_SELECTION_BASE_URL", "OPENAI_BASE_URL",
                             "config.api_key", "LLM_COMMON_TOOL_SELECTION_API_KEY", "OPENAI_API_KEY",
                             "api.openai.com", "toolselect.testing.FakeModel"):
                    self.assertIn(want, msg)

    def test_a_base_url_a_key_or_an_own_client_is_enough(self):
        with mock.patch.dict(os.environ, CLEAN_ENV):
            ts.ToolSelector(config=ts.ToolSelectionConfig(base_url="http://127.0.0.1:9/v1")).close()
            ts.ToolSelector(config=ts.ToolSelectionConfig(api_key="sk-x")).close()

        class Client:
            async def chat_completion(self, **kw):
                raise AssertionError("not called")
        ts.ToolSelector(client=Client()).close()
        with mock.patch.dict(os.environ, {**CLEAN_ENV, "OPENAI_API_KEY": "sk-env"}):
            ts.ToolSelector().close()


if __name__ == "__main__":
    unittest.main()
