"""Offline policies exposed as chat models, so nodes call every role the same way."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from deepagent.offline.planner import decide


class OfflinePlannerModel(BaseChatModel):
    """The offline case-guided planner behind the chat-model interface (not an LLM).

    ``latency_s`` adds a delay per call (benchmarks model a real endpoint with it).
    """

    latency_s: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "offline-case-guided-planner"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        decision = decide(messages)
        text = decision.model_dump_json(by_alias=True, exclude_none=True)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        return self._generate(messages)
