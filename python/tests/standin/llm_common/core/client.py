"""llm-common's client shape: chat_completion(messages=[LLMMessage], ...)
reads each message's attributes to build the request."""

from __future__ import annotations

from typing import Any, List, Optional

from .models import LLMMessage, LLMResponse, LLMUsage


class LLMClient:
    async def chat_completion(self, messages: List[LLMMessage], model: str, temperature: float = 0.0,
                              response_format: Optional[Any] = None, timeout: Optional[float] = None,
                              **kwargs: Any) -> LLMResponse:
        payload = [{"role": m.role, "content": m.content} for m in messages]  # attributes, as llm-common does
        for m in messages:
            if m.name is not None:
                raise ValueError("no names in this conversation")
        return await self._send(payload, model=model, temperature=temperature, response_format=response_format,
                                timeout=timeout)

    async def _send(self, payload: List[dict], **params: Any) -> LLMResponse:
        raise NotImplementedError


class ScriptedClient(LLMClient):
    """Answers with the scripted replies in turn (the last one repeats)."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.sent: List[dict] = []

    async def _send(self, payload: List[dict], **params: Any) -> LLMResponse:
        self.sent.append({"messages": payload, **params})
        r = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return LLMResponse(content=r, model=params["model"], usage=LLMUsage(prompt_tokens=10, completion_tokens=5))
